"""Statistics wrappers: hand-checkable cases and agreement with the textbook values."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.evaluation.stats import (
    bootstrap_ci,
    chi_squared_levels,
    chi_squared_rates,
    cohens_kappa,
    krippendorff_alpha,
    paired_t,
    pearson,
    spearman,
    wilcoxon,
)


def test_bootstrap_ci_brackets_the_mean_and_ignores_nan() -> None:
    est = bootstrap_ci([1.0, 2.0, 3.0, 4.0, math.nan, 5.0])
    assert est.mean == 3.0 and est.n == 5
    assert est.low < 3.0 < est.high


def test_bootstrap_of_nothing_is_nan_and_of_a_constant_is_a_point() -> None:
    assert math.isnan(bootstrap_ci([]).mean)
    est = bootstrap_ci([2.0, 2.0, 2.0])
    assert (est.mean, est.low, est.high) == (2.0, 2.0, 2.0)


def test_chi_squared_sees_different_rates_and_not_equal_ones() -> None:
    assert chi_squared_rates([50, 50], [100, 100]).p_value == pytest.approx(1.0)
    # 80/100 vs 20/100: chi2 = 72 on 1 df (hand-computed from the 2x2 table)
    r = chi_squared_rates([80, 20], [100, 100])
    assert r.statistic == pytest.approx(72.0) and r.p_value < 1e-10
    assert r.test == "chi-squared"


def test_paired_tests_on_a_known_shift() -> None:
    before = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    after = [1.5, 2.4, 3.6, 4.5, 5.7, 6.4]
    t = paired_t(after, before)
    # differences 0.5, 0.4, 0.6, 0.5, 0.7, 0.4: mean 0.51667, sd 0.11690,
    # standard error 0.11690 / sqrt(6) = 0.047726, t = 0.51667 / 0.047726 = 10.826
    assert t.statistic == pytest.approx(10.826, abs=0.001)
    w = wilcoxon(after, before)
    assert w.p_value < 0.05 and w.test == "Wilcoxon signed-rank"


def test_correlations_and_undefined_cases() -> None:
    assert pearson([1, 2, 3], [2, 4, 6]).statistic == pytest.approx(1.0)
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]).statistic == pytest.approx(0.8)
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]).statistic)  # no variance: undefined


def test_cohens_kappa_perfect_chance_and_textbook() -> None:
    assert cohens_kappa(list("aabb"), list("aabb")) == pytest.approx(1.0)
    # 20 items: both yes 7, a-yes b-no 3, a-no b-yes 2, both no 8
    a = ["y"] * 10 + ["n"] * 10
    b = ["y"] * 7 + ["n"] * 3 + ["y"] * 2 + ["n"] * 8
    # po = 0.75, pe = 0.5*0.45 + 0.5*0.55 = 0.5, kappa = 0.5
    assert cohens_kappa(a, b) == pytest.approx(0.5)


def test_krippendorff_alpha_is_one_for_perfect_agreement() -> None:
    assert krippendorff_alpha([[1, 2, 3, 4], [1, 2, 3, 4]]) == pytest.approx(1.0)
    assert krippendorff_alpha([[1, 2, None, 4], [1, 2, 3, 4]]) == pytest.approx(1.0)
    assert krippendorff_alpha([[1, 2, 3, 4], [4, 3, 2, 1]]) < 0


# ---- chi-squared on five-level label counts (AgentMediation's significance test) ----------
def test_identical_level_distributions_are_not_significant() -> None:
    r = chi_squared_levels([3, 5, 8, 5, 3], [3, 5, 8, 5, 3])
    assert r.statistic == pytest.approx(0.0) and r.p_value == pytest.approx(1.0)


def test_opposite_level_distributions_are_significant() -> None:
    assert chi_squared_levels([30, 10, 0, 0, 0], [0, 0, 0, 10, 30]).p_value < 0.01


def test_levels_neither_group_used_are_dropped_and_one_level_is_undefined() -> None:
    assert math.isnan(chi_squared_levels([0, 0, 7, 0, 0], [0, 0, 4, 0, 0]).p_value)
    assert math.isnan(chi_squared_levels([0, 0, 0, 0, 0], [1, 2, 3, 0, 0]).p_value)
    with_empty = chi_squared_levels([5, 0, 5, 0, 0], [1, 0, 9, 0, 0])
    assert with_empty.p_value == pytest.approx(chi_squared_levels([5, 5], [1, 9]).p_value)


@given(
    st.lists(st.integers(0, 40), min_size=5, max_size=5),
    st.lists(st.integers(0, 40), min_size=5, max_size=5),
)
def test_the_level_test_is_symmetric_and_its_p_value_a_probability(
    a: list[int], b: list[int]
) -> None:
    ab, ba = chi_squared_levels(a, b), chi_squared_levels(b, a)
    if math.isnan(ab.p_value):
        assert math.isnan(ba.p_value)
    else:
        assert 0.0 <= ab.p_value <= 1.0
        assert ab.p_value == pytest.approx(ba.p_value)
