"""Statistics for reports and judge validation, as thin typed wrappers over scipy,
statsmodels and krippendorff. Each returns a small record with the test's name, so a
table can say which test produced a marker."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import krippendorff
import numpy as np
import numpy.typing as npt
from scipy import stats


@dataclass(frozen=True)
class Estimate:
    """A mean with a confidence interval (NaN bounds when undefined): `n` values, drawn
    from `clusters` independent groups (0 when the method does not group them)."""

    mean: float
    low: float
    high: float
    n: int
    method: str
    clusters: int = 0

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))


@dataclass(frozen=True)
class TestResult:
    statistic: float
    p_value: float
    test: str
    n: int


def _clean(xs: Sequence[float]) -> npt.NDArray[np.float64]:
    a = np.asarray(xs, dtype=float)
    kept: npt.NDArray[np.float64] = a[~np.isnan(a)]
    return kept


def bootstrap_ci(
    xs: Sequence[float], confidence: float = 0.95, resamples: int = 2000, seed: int = 0
) -> Estimate:
    """Mean and percentile-bootstrap CI, NaNs dropped (a NaN metric is 'undefined').

    One value has a mean but no interval: its bounds are NaN, never a zero-width CI.
    Episodes that share a scenario are not independent: use `cluster_bootstrap_ci`
    (disputelab.evaluation.inference) for them.
    """
    a = _clean(xs)
    if len(a) == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, "bootstrap")
    if len(a) == 1:
        return Estimate(float(a[0]), math.nan, math.nan, 1, "bootstrap")
    if np.all(a == a[0]):
        m = float(a.mean())
        return Estimate(m, m, m, len(a), "bootstrap")
    res = stats.bootstrap(
        (a,),
        np.mean,
        confidence_level=confidence,
        n_resamples=resamples,
        method="percentile",
        random_state=np.random.default_rng(seed),
    )
    ci = res.confidence_interval
    return Estimate(float(a.mean()), float(ci.low), float(ci.high), len(a), "bootstrap")


def chi_squared_rates(successes: Sequence[int], totals: Sequence[int]) -> TestResult:
    """Do these groups share one success rate? Pearson chi-squared on the 2xK table."""
    table = np.array([list(successes), [t - s for s, t in zip(successes, totals, strict=True)]])
    if (table.sum(axis=1) == 0).any():
        return TestResult(math.nan, math.nan, "chi-squared", int(table.sum()))
    chi2, p, _, _ = stats.chi2_contingency(table, correction=False)
    return TestResult(float(chi2), float(p), "chi-squared", int(table.sum()))


def chi_squared_levels(counts_a: Sequence[int], counts_b: Sequence[int]) -> TestResult:
    """Do two groups share one distribution over ordinal levels (AgentMediation's test)?

    Pearson chi-squared on the 2xK table of level counts, after dropping levels neither
    group used; NaN when fewer than two levels remain or a group is empty.
    """
    table = np.array([list(counts_a), list(counts_b)], dtype=float)
    table = table[:, table.sum(axis=0) > 0]
    n = int(table.sum())
    if table.shape[1] < 2 or (table.sum(axis=1) == 0).any():
        return TestResult(math.nan, math.nan, "chi-squared on level counts", n)
    chi2, p, _, _ = stats.chi2_contingency(table, correction=False)
    return TestResult(float(chi2), float(p), "chi-squared on level counts", n)


def _paired(
    xs: Sequence[float], ys: Sequence[float]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    a, b = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep]


def paired_t(xs: Sequence[float], ys: Sequence[float]) -> TestResult:
    a, b = _paired(xs, ys)
    if len(a) < 2 or np.allclose(a - b, (a - b)[0]):
        return TestResult(math.nan, math.nan, "paired t-test", len(a))
    r = stats.ttest_rel(a, b)
    return TestResult(float(r.statistic), float(r.pvalue), "paired t-test", len(a))


WILCOXON_EXACT_UP_TO = 50
"""Nonzero differences up to which the signed-rank p-value is exact (the null distribution
is enumerated); above, scipy's normal approximation, with its tie correction."""


def _signed_rank_exact(d: npt.NDArray[np.float64]) -> tuple[float, float]:
    """Exact two-sided Wilcoxon signed-rank test on nonzero differences `d`, given their
    ranks (midranks for ties): (min(T+, T-), p).

    Under the null, each difference is as likely positive as negative, so T+ is a sum of
    independent terms, each 0 or its rank with chance 1/2: its distribution is a
    convolution, counted here on doubled ranks (midranks are multiples of 1/2). scipy's
    own exact method assumes no ties and falls back to a normal approximation when there
    are any, which is poor for the 10-20 scenarios of a typical table, where ties and
    zero differences are common.
    """
    doubled = np.rint(stats.rankdata(np.abs(d)) * 2).astype(int)
    total = int(doubled.sum())
    counts = np.zeros(total + 1)
    counts[0] = 1.0
    for r in doubled:
        counts[r:] = counts[r:] + counts[: total + 1 - r].copy()
    t_plus = int(doubled[d > 0].sum())
    sums = np.arange(total + 1)
    centre = total / 2
    extreme = np.abs(sums - centre) >= abs(t_plus - centre) - 1e-9
    p = float(counts[extreme].sum() / counts.sum())
    return min(t_plus, total - t_plus) / 2, min(1.0, p)


def wilcoxon(xs: Sequence[float], ys: Sequence[float]) -> TestResult:
    """Wilcoxon signed-rank test of paired xs and ys, NaN pairs and zero differences
    dropped; exact up to 50 nonzero differences, ties or not."""
    a, b = _paired(xs, ys)
    if len(a) < 1 or np.all(a == b):
        return TestResult(math.nan, math.nan, "Wilcoxon signed-rank", len(a))
    d = a - b
    d = d[d != 0]
    if len(d) <= WILCOXON_EXACT_UP_TO:
        statistic, p = _signed_rank_exact(d)
        return TestResult(statistic, p, "Wilcoxon signed-rank", len(a))
    r = stats.wilcoxon(d)
    return TestResult(float(r.statistic), float(r.pvalue), "Wilcoxon signed-rank", len(a))


MCNEMAR_EXACT_BELOW = 25
"""Discordant pairs below which McNemar's test is the exact binomial one: the chi-squared
approximation is poor for few discordant pairs (the usual rule of thumb is 25)."""


def mcnemar_test(xs: Sequence[float], ys: Sequence[float]) -> TestResult:
    """McNemar's test on paired binary outcomes (truthy = success), NaN pairs dropped.

    Only the discordant pairs carry information: b (x succeeded, y did not) and c (the
    reverse). With b + c < 25 the p-value is the exact two-sided binomial one (b of b + c
    at 1/2); above, chi-squared with the continuity correction, (|b - c| - 1)^2 / (b + c).
    No discordant pair at all gives p = 1: the data show no difference. Without any pair
    the test is undefined (NaN).
    """
    a, b = _paired(xs, ys)
    if len(a) == 0:
        return TestResult(math.nan, math.nan, "McNemar", 0)
    x, y = a != 0, b != 0
    table = [[int(np.sum(x & y)), int(np.sum(x & ~y))], [int(np.sum(~x & y)), int(np.sum(~x & ~y))]]
    discordant = table[0][1] + table[1][0]
    exact = discordant < MCNEMAR_EXACT_BELOW
    # Imported here: statsmodels brings pandas, some 60 MB and half a second that the
    # reports which never run this test (the HTML report among them) need not pay.
    from statsmodels.stats.contingency_tables import mcnemar

    r = mcnemar(table, exact=exact, correction=True)
    test = "McNemar (exact)" if exact else "McNemar (chi-squared, continuity-corrected)"
    return TestResult(float(r.statistic), float(r.pvalue), test, len(a))


ADJUSTMENTS = {"holm": "Holm", "fdr_bh": "Benjamini-Hochberg"}
"""The multiple-comparison adjustments a table may use: key (statsmodels' spelling) -> name."""


def adjust(p_values: Sequence[float], method: str = "holm") -> list[float]:
    """Adjust a family of p-values for multiple comparisons (Holm by `holm_adjusted`,
    Benjamini-Hochberg by `bh_adjusted`).

    `method` is "holm" (family-wise error) or "fdr_bh" (Benjamini-Hochberg, false discovery
    rate). NaN entries (tests that could not be run) stay NaN and are not counted in the
    family; the others are adjusted together, in their order.
    """
    if method not in ADJUSTMENTS:
        raise ValueError(f"unknown adjustment {method!r}: one of {', '.join(ADJUSTMENTS)}")
    ps = [float(p) for p in p_values]
    defined = [i for i, p in enumerate(ps) if not math.isnan(p)]
    out = [math.nan] * len(ps)
    if defined:
        family = np.array([ps[i] for i in defined])
        adjusted = holm_adjusted(family) if method == "holm" else bh_adjusted(family)
        for i, q in zip(defined, adjusted, strict=True):
            out[i] = float(q)
    return out


def holm_adjusted(p_values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Holm's step-down adjusted p-values of one family (no NaN), in the input's order.

    The i-th smallest p (from 0) is multiplied by m - i, the running maximum keeps the
    adjusted values in the order of the raw ones, and nothing exceeds 1. The same numbers
    as statsmodels' `multipletests(method="holm")`, without its per-call garbage
    collection (about 150 ms a call, which a report with hundreds of cells pays each time).
    """
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


def bh_adjusted(p_values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Benjamini-Hochberg step-up adjusted p-values of one family (no NaN), in input order.

    The i-th smallest p (from 1) is multiplied by m / i, a running minimum from the largest
    down keeps them monotone, and nothing exceeds 1. The same numbers as statsmodels'
    `multipletests(method="fdr_bh")`, which is kept out for the reason `holm_adjusted` gives.
    """
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    stepped = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: controls the family-wise error rate for any dependence."""
    return adjust(p_values, "holm")


def _correlation(xs: Sequence[float], ys: Sequence[float], test: str, fn: Any) -> TestResult:
    """A correlation over the pairs where both are defined; NaN without variance."""
    a, b = _paired(xs, ys)
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return TestResult(math.nan, math.nan, test, len(a))
    r = fn(a, b)
    return TestResult(float(r.statistic), float(r.pvalue), test, len(a))


def pearson(xs: Sequence[float], ys: Sequence[float]) -> TestResult:
    return _correlation(xs, ys, "Pearson r", stats.pearsonr)


def spearman(xs: Sequence[float], ys: Sequence[float]) -> TestResult:
    return _correlation(xs, ys, "Spearman rho", stats.spearmanr)


def cohens_kappa(rater_a: Sequence[str], rater_b: Sequence[str]) -> float:
    """Agreement of two raters on categories, corrected for chance."""
    labels = sorted(set(rater_a) | set(rater_b))
    index = {c: i for i, c in enumerate(labels)}
    table = np.zeros((len(labels), len(labels)))
    for x, y in zip(rater_a, rater_b, strict=True):
        table[index[x], index[y]] += 1
    if table.sum() == 0:
        return math.nan
    from statsmodels.stats.inter_rater import cohens_kappa as kappa  # see `mcnemar`

    return float(kappa(table).kappa)


def krippendorff_alpha(
    ratings: Sequence[Sequence[float | None]],
    level: Literal["nominal", "ordinal", "interval", "ratio"] = "interval",
) -> float:
    """Alpha for raters x units (None = missing), at the nominal/ordinal/interval level."""
    data = np.array([[math.nan if v is None else v for v in row] for row in ratings], float)
    if data.size == 0 or np.isnan(data).all():
        return math.nan
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
