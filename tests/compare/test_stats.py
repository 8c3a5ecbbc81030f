"""The comparison's statistics: Bradley-Terry strengths, paired differences, Holm."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from disputelab.compare.stats import (
    Outcome,
    arm_estimates,
    bradley_terry,
    comparisons,
    fit_bradley_terry,
    paired_differences,
)

ARMS = ("a", "b", "c")


@st.composite
def paired_outcomes(draw: st.DrawFn) -> list[Outcome]:
    """Three arms on 2-5 scenarios x 1-3 seeds, each episode's value in [0, 1]."""
    n_scenarios = draw(st.integers(2, 5))
    n_seeds = draw(st.integers(1, 3))
    value = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])
    return [
        Outcome(arm, f"s{s}", (f"s{s}", r), draw(value))
        for s in range(n_scenarios)
        for r in range(n_seeds)
        for arm in ARMS
    ]


def test_the_arm_that_wins_more_contests_is_stronger() -> None:
    contests = [("a", "b", 1.0, "s1")] * 3 + [("a", "b", 0.0, "s2")]
    strengths = fit_bradley_terry(["a", "b"], contests)
    assert strengths["a"] > strengths["b"]
    # Three wins in four: the difference is close to log(3), the ridge shrinks it a little.
    assert 0.9 * math.log(3) < strengths["a"] - strengths["b"] < math.log(3)


def test_a_tie_counts_half_a_win_each_way() -> None:
    strengths = fit_bradley_terry(["a", "b"], [("a", "b", 0.5, "s1"), ("a", "b", 0.5, "s2")])
    assert abs(strengths["a"] - strengths["b"]) < 1e-9


def test_an_undefeated_arm_keeps_a_finite_strength() -> None:
    strengths = fit_bradley_terry(["a", "b"], [("a", "b", 1.0, f"s{i}") for i in range(5)])
    assert math.isfinite(strengths["a"]) and strengths["a"] > strengths["b"]


def test_contests_pair_only_episodes_of_the_same_match() -> None:
    outcomes = [
        Outcome("a", "s1", ("s1", 0), 1.0),
        Outcome("b", "s1", ("s1", 0), 0.0),
        Outcome("b", "s1", ("s1", 1), 1.0),  # no episode of a on seed 1
    ]
    assert comparisons(outcomes) == [("a", "b", 1.0, "s1")]
    assert comparisons(outcomes, higher_is_better=False) == [("a", "b", 0.0, "s1")]


@settings(max_examples=60, deadline=None)
@given(paired_outcomes(), st.permutations(["x", "y", "z"]))
def test_strengths_do_not_depend_on_what_the_arms_are_called(
    outcomes: list[Outcome], names: list[str]
) -> None:
    rename = dict(zip(ARMS, names, strict=True))
    renamed = [Outcome(rename[o.arm], o.scenario, o.match, o.value) for o in outcomes]
    before = fit_bradley_terry(list(ARMS), comparisons(outcomes))
    after = fit_bradley_terry(sorted(names), comparisons(renamed))
    for arm in ARMS:
        assert math.isclose(before[arm], after[rename[arm]], abs_tol=1e-6)


@settings(max_examples=40, deadline=None)
@given(paired_outcomes())
def test_every_interval_contains_its_point_estimate(outcomes: list[Outcome]) -> None:
    # An interval is left out (NaN bounds) below the scenarios its coverage needs.
    for est in arm_estimates(outcomes):
        if not math.isnan(est.low):
            assert est.low - 1e-12 <= est.mean <= est.high + 1e-12
    for d in paired_differences(outcomes, list(ARMS)):
        if not math.isnan(d.low):
            assert d.low - 1e-12 <= d.mean <= d.high + 1e-12
    for s in bradley_terry(list(ARMS), comparisons(outcomes), resamples=200):
        if not math.isnan(s.low):
            assert s.low - 1e-9 <= s.strength <= s.high + 1e-9


@settings(max_examples=60, deadline=None)
@given(paired_outcomes())
def test_holm_adjusted_p_values_keep_the_order_of_the_raw_ones(
    outcomes: list[Outcome],
) -> None:
    diffs = paired_differences(outcomes, list(ARMS))
    defined = sorted((d for d in diffs if not math.isnan(d.p_value)), key=lambda d: d.p_value)
    holm = [d.p_holm for d in defined]
    assert holm == sorted(holm)
    assert all(d.p_holm >= d.p_value - 1e-12 and d.p_holm <= 1.0 for d in defined)


def test_paired_differences_pair_episodes_on_their_match() -> None:
    outcomes = [
        Outcome(arm, f"s{s}", (f"s{s}", 0), v)
        for s in range(5)
        for arm, v in (("a", 0.5 + s / 10), ("b", 0.25 + s / 10))
    ]
    (d,) = paired_differences(outcomes, ["a", "b"])
    # Every pair differs by exactly 0.25, whatever the scenario does to both.
    assert math.isclose(d.mean, 0.25) and math.isclose(d.low, 0.25)
    assert d.pairs == 5 and d.scenarios == 5
    (few,) = paired_differences([o for o in outcomes if o.scenario != "s4"], ["a", "b"])
    assert math.isclose(few.mean, 0.25) and math.isnan(few.low)  # 4 scenarios: no interval
