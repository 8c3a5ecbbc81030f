"""Clustered inference: intervals that resample scenarios, tests on scenario means.

The hand-computed cases are small enough to enumerate every bootstrap resample."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from disputelab.evaluation.inference import (
    WILCOXON_ON_MEANS,
    cluster_bootstrap_ci,
    paired_scenario_test,
)
from disputelab.evaluation.stats import bootstrap_ci, wilcoxon


# ---- the cluster bootstrap --------------------------------------------------------------
def test_cluster_bootstrap_percentiles_match_the_enumerated_resamples() -> None:
    # Clusters a = [0, 2], b = [4], c = [8]; the mean over all four values is 14 / 4 = 3.5.
    # A resample draws 3 clusters with replacement: 27 equally likely draws, each giving
    # the mean over every value drawn. Enumerated, the means and their draw counts are
    #   1 (aaa: 1), 8/5 (aab: 3), 12/5 (aac: 3), 5/2 (abb: 3), 7/2 (abc: 6), 4 (bbb: 1),
    #   9/2 (acc: 3), 16/3 (bbc: 3), 20/3 (bcc: 3), 8 (ccc: 1).
    # Cumulative shares: 1/27 = 0.037 at 1, 4/27 = 0.148 at 8/5, ..., 23/27 = 0.852 at 16/3,
    # 26/27 = 0.963 at 20/3. So the 2.5% and 97.5% points are 1 and 8 (a 95% CI), and the
    # 10% and 90% points are 8/5 and 20/3 (an 80% CI).
    values, clusters = [0.0, 2.0, 4.0, 8.0], ["a", "a", "b", "c"]
    ci95 = cluster_bootstrap_ci(values, clusters, resamples=20000)
    assert (ci95.mean, ci95.low, ci95.high) == pytest.approx((3.5, 1.0, 8.0))
    assert (ci95.n, ci95.clusters) == (4, 3)
    ci80 = cluster_bootstrap_ci(values, clusters, confidence=0.8, resamples=20000)
    assert (ci80.low, ci80.high) == pytest.approx((8 / 5, 20 / 3))


def test_replicates_of_one_scenario_do_not_narrow_the_interval() -> None:
    # Two scenarios of ten identical replicates each: a resample of two clusters has
    # mean 0, 1/2 or 1 with chances 1/4, 1/2, 1/4, so the 95% CI is the whole [0, 1].
    values = [0.0] * 10 + [1.0] * 10
    clusters = ["a"] * 10 + ["b"] * 10
    clustered = cluster_bootstrap_ci(values, clusters)
    assert (clustered.low, clustered.high) == (0.0, 1.0)
    # Taken as 20 independent episodes, the same values give about 0.5 ± 0.2.
    naive = bootstrap_ci(values)
    assert naive.low > 0.25 and naive.high < 0.75


def test_fewer_than_two_values_or_one_scenario_have_no_interval() -> None:
    one = cluster_bootstrap_ci([4.0, math.nan], ["a", "b"])
    assert one.mean == 4.0 and one.n == 1 and not one.has_interval
    single_scenario = cluster_bootstrap_ci([1.0, 2.0, 3.0], ["a", "a", "a"])
    assert single_scenario.mean == 2.0 and single_scenario.clusters == 1
    assert not single_scenario.has_interval
    nothing = cluster_bootstrap_ci([math.nan], ["a"])
    assert math.isnan(nothing.mean) and nothing.n == 0


def test_undefined_values_are_dropped_with_their_cluster_labels() -> None:
    est = cluster_bootstrap_ci([1.0, math.nan, 3.0, 5.0], ["a", "b", "c", "d"])
    assert est.mean == 3.0 and (est.n, est.clusters) == (3, 3)


def test_a_constant_has_a_point_interval_and_labels_must_match_values() -> None:
    est = cluster_bootstrap_ci([0.1] * 6, ["a", "a", "b", "b", "c", "c"])
    assert (est.low, est.mean, est.high) == (0.1, 0.1, 0.1)
    with pytest.raises(ValueError, match="cluster labels"):
        cluster_bootstrap_ci([1.0, 2.0], ["a"])


def test_the_interval_is_reproducible_from_its_seed() -> None:
    values, clusters = [1.0, 5.0, 2.0, 8.0, 3.0], list("abcde")
    assert cluster_bootstrap_ci(values, clusters) == cluster_bootstrap_ci(values, clusters)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 100), min_size=8, max_size=40))
def test_one_episode_per_cluster_is_the_ordinary_bootstrap(xs: list[int]) -> None:
    values = [float(x) for x in xs]
    clustered = cluster_bootstrap_ci(values, list(range(len(values))))
    ordinary = bootstrap_ci(values)
    spread = max(values) - min(values)
    assert clustered.mean == pytest.approx(ordinary.mean)
    # Two Monte Carlo runs of the same resampling scheme: equal up to simulation noise.
    assert clustered.low == pytest.approx(ordinary.low, abs=0.12 * spread + 1e-9)
    assert clustered.high == pytest.approx(ordinary.high, abs=0.12 * spread + 1e-9)


# ---- tests on scenario means ------------------------------------------------------------
def test_replicates_are_averaged_into_one_pair_per_scenario() -> None:
    # Three scenarios, two replicates each: the test sees three pairs of scenario means.
    xs = {("a", 0): 2.0, ("a", 1): 4.0, ("b", 0): 5.0, ("b", 1): 7.0, ("c", 0): 1.0, ("c", 1): 1.0}
    ys = {("a", 0): 1.0, ("a", 1): 1.0, ("b", 0): 2.0, ("b", 1): 4.0, ("c", 0): 0.0, ("c", 1): 0.0}
    r = paired_scenario_test(xs, ys)
    expected = wilcoxon([3.0, 6.0, 1.0], [1.0, 3.0, 0.0])
    assert (r.statistic, r.p_value, r.n) == (expected.statistic, expected.p_value, 3)
    assert r.test == WILCOXON_ON_MEANS


def test_pseudo_replicates_add_no_evidence() -> None:
    # Five scenarios where x beats y: the exact two-sided Wilcoxon p is 2 / 2^5 = 0.0625,
    # however many identical replicates each scenario has.
    def grid(value: float, replicates: int) -> dict[tuple[str, int], float]:
        return {(f"s{i}", r): value + i for i in range(5) for r in range(replicates)}

    once = paired_scenario_test(grid(1.0, 1), grid(0.0, 1))
    many = paired_scenario_test(grid(1.0, 10), grid(0.0, 10))
    assert once.p_value == pytest.approx(0.0625) and many.p_value == pytest.approx(0.0625)


def test_binary_outcomes_with_one_replicate_take_mcnemar() -> None:
    xs = {(f"s{i}", 0): 100.0 for i in range(8)}
    ys = {(f"s{i}", 0): 100.0 if i < 3 else 0.0 for i in range(8)}
    r = paired_scenario_test(xs, ys, binary=True)
    # b = 5, c = 0 discordant scenarios: exact p = 2 x (1/2)^5.
    assert r.test == "McNemar (exact)" and r.p_value == pytest.approx(0.0625)


def test_binary_outcomes_with_replicates_are_compared_as_scenario_rates() -> None:
    xs = {(f"s{i}", r): 1.0 for i in range(6) for r in range(2)}
    ys = {(f"s{i}", r): float(r) for i in range(6) for r in range(2)}
    r = paired_scenario_test(xs, ys, binary=True)
    assert r.test == WILCOXON_ON_MEANS and r.n == 6


def test_no_difference_is_p_one_and_no_pair_is_undefined() -> None:
    same = {("a", 0): 1.0, ("b", 0): 2.0}
    assert paired_scenario_test(same, dict(same)).p_value == 1.0
    assert math.isnan(paired_scenario_test({("a", 0): 1.0}, {("b", 0): 1.0}).p_value)
    assert math.isnan(paired_scenario_test({("a", 0): math.nan}, {("a", 0): 1.0}).p_value)
