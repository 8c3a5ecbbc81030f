"""Statistics wrappers: hand-checkable cases and agreement with the textbook values."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests

from disputelab.evaluation.stats import (
    adjust,
    bh_adjusted,
    bootstrap_ci,
    chi_squared_levels,
    chi_squared_rates,
    cohens_kappa,
    holm,
    holm_adjusted,
    krippendorff_alpha,
    mcnemar_test,
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


def test_one_value_has_a_mean_but_no_interval() -> None:
    est = bootstrap_ci([7.0, math.nan])
    assert est.mean == 7.0 and est.n == 1
    assert math.isnan(est.low) and math.isnan(est.high) and not est.has_interval


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


def test_wilcoxon_is_exact_with_tied_and_zero_differences() -> None:
    # Differences 1, 1, 2 (and a zero, dropped): midranks 1.5, 1.5, 3. Of the 2^3 equally
    # likely sign patterns, only all-plus (T+ = 6) and all-minus (T+ = 0) are as far from
    # the centre 3 as the observed T+ = 6: p = 2 / 8. (scipy's default falls back to a
    # normal approximation as soon as there is a tie.)
    r = wilcoxon([1.0, 1.0, 2.0, 5.0], [0.0, 0.0, 0.0, 5.0])
    assert r.p_value == pytest.approx(0.25) and r.statistic == 0.0
    # Differences 1, 1, -2: T+ = 3 sits on the centre, p = 1.
    assert wilcoxon([1.0, 1.0, -2.0], [0.0, 0.0, 0.0]).p_value == pytest.approx(1.0)


@given(
    st.lists(
        st.floats(-100, 100, allow_nan=False).filter(lambda x: abs(x) > 1e-3),
        min_size=1,
        max_size=20,
        unique=True,
    )
)
def test_wilcoxon_without_ties_agrees_with_scipys_exact_test(d: list[float]) -> None:
    if len({abs(x) for x in d}) < len(d):
        return  # |x| tied: scipy's exact method does not apply
    ours = wilcoxon(d, [0.0] * len(d))
    theirs = scipy_stats.wilcoxon(d, method="exact")
    assert ours.statistic == pytest.approx(float(theirs.statistic))
    assert ours.p_value == pytest.approx(float(theirs.pvalue))


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


# ---- McNemar on paired binary outcomes ------------------------------------------------------
def _pairs(both: int, only_x: int, only_y: int, neither: int) -> tuple[list[int], list[int]]:
    xs = [1] * both + [1] * only_x + [0] * only_y + [0] * neither
    ys = [1] * both + [0] * only_x + [1] * only_y + [0] * neither
    return xs, ys


def test_mcnemar_with_few_discordant_pairs_is_the_exact_binomial_test() -> None:
    # b = 5, c = 0: all 5 discordant pairs go one way; two-sided exact p = 2 x (1/2)^5.
    r = mcnemar_test(*_pairs(both=10, only_x=5, only_y=0, neither=10))
    assert r.p_value == pytest.approx(0.0625)
    assert r.test == "McNemar (exact)" and r.n == 25


def test_mcnemar_with_many_discordant_pairs_is_continuity_corrected_chi_squared() -> None:
    # b = 30, c = 10: (|30 - 10| - 1)^2 / (30 + 10) = 361 / 40 = 9.025 on 1 df, p = 0.00266
    r = mcnemar_test(*_pairs(both=3, only_x=30, only_y=10, neither=4))
    assert r.statistic == pytest.approx(9.025)
    assert r.p_value == pytest.approx(0.0026631, abs=1e-6)
    assert r.test == "McNemar (chi-squared, continuity-corrected)"


def test_mcnemar_ignores_concordant_pairs_and_nan_and_needs_some_pair() -> None:
    few = mcnemar_test(*_pairs(both=0, only_x=5, only_y=0, neither=0))
    xs, ys = _pairs(both=40, only_x=5, only_y=0, neither=40)
    assert mcnemar_test([*xs, math.nan], [*ys, 1]).p_value == pytest.approx(few.p_value)
    assert mcnemar_test(*_pairs(both=4, only_x=0, only_y=0, neither=4)).p_value == 1.0
    assert math.isnan(mcnemar_test([math.nan], [1]).p_value)


def test_mcnemar_reads_any_nonzero_value_as_success() -> None:
    as_percent = mcnemar_test([100.0] * 5 + [0.0], [0.0] * 5 + [0.0])
    assert as_percent.p_value == pytest.approx(0.0625)


# ---- multiple comparisons ---------------------------------------------------------------------
def test_holm_by_hand() -> None:
    # Sorted 0.01, 0.03, 0.04 times 3, 2, 1: 0.03, 0.06, 0.04; made monotone: 0.03, 0.06, 0.06.
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_benjamini_hochberg_by_hand() -> None:
    # Sorted 0.01, 0.03, 0.04 times 3/1, 3/2, 3/3: 0.03, 0.045, 0.04; the step-up minimum
    # from the largest down gives 0.03, 0.04, 0.04.
    assert adjust([0.01, 0.04, 0.03], "fdr_bh") == pytest.approx([0.03, 0.04, 0.04])


def test_tests_that_could_not_run_are_not_counted_in_the_family() -> None:
    adjusted = holm([0.01, math.nan, 0.04, 0.03])
    assert math.isnan(adjusted[1])
    assert [adjusted[0], adjusted[2], adjusted[3]] == pytest.approx([0.03, 0.06, 0.06])
    assert holm([]) == [] and math.isnan(holm([math.nan])[0])


P_VALUES = st.lists(
    st.one_of(
        st.floats(0.0, 1.0),
        st.sampled_from([0.0, 0.01, 0.05, 0.5, 1.0]),  # ties, which order must not break
    ),
    max_size=40,
)


@given(P_VALUES)
def test_the_fast_holm_gives_statsmodels_numbers(ps: list[float]) -> None:
    expected = multipletests(ps, method="holm")[1] if ps else []
    assert holm_adjusted(np.array(ps)) == pytest.approx(list(expected), abs=1e-12)
    assert holm(ps) == pytest.approx(list(expected), abs=1e-12)


@given(P_VALUES)
def test_the_fast_benjamini_hochberg_gives_statsmodels_numbers(ps: list[float]) -> None:
    expected = multipletests(ps, method="fdr_bh")[1] if ps else []
    assert bh_adjusted(np.array(ps)) == pytest.approx(list(expected), abs=1e-12)
    assert adjust(ps, "fdr_bh") == pytest.approx(list(expected), abs=1e-12)


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_benjamini_hochberg_is_never_stricter_than_holm(ps: list[float]) -> None:
    # FDR control is weaker than family-wise control, so its adjusted p never exceeds Holm's.
    assert all(b <= h + 1e-12 for b, h in zip(adjust(ps, "fdr_bh"), holm(ps), strict=True))


def test_an_unknown_adjustment_is_refused() -> None:
    with pytest.raises(ValueError, match="holm"):
        adjust([0.01], "bonferonni")


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_holm_never_lowers_a_p_value_and_keeps_their_order(ps: list[float]) -> None:
    adjusted = holm(ps)
    assert all(p <= q + 1e-12 and q <= 1.0 for p, q in zip(ps, adjusted, strict=True))
    by_raw = [adjusted[i] for i in sorted(range(len(ps)), key=ps.__getitem__)]
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(by_raw))
