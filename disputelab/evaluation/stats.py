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
from statsmodels.stats.inter_rater import cohens_kappa as _sm_kappa


@dataclass(frozen=True)
class Estimate:
    """A mean with a confidence interval (NaN bounds when undefined)."""

    mean: float
    low: float
    high: float
    n: int
    method: str


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
    """Mean and percentile-bootstrap CI, NaNs dropped (a NaN metric is 'undefined')."""
    a = _clean(xs)
    if len(a) == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, "bootstrap")
    if len(a) == 1 or np.all(a == a[0]):
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


def wilcoxon(xs: Sequence[float], ys: Sequence[float]) -> TestResult:
    a, b = _paired(xs, ys)
    if len(a) < 1 or np.all(a == b):
        return TestResult(math.nan, math.nan, "Wilcoxon signed-rank", len(a))
    r = stats.wilcoxon(a, b)
    return TestResult(float(r.statistic), float(r.pvalue), "Wilcoxon signed-rank", len(a))


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
    return float(_sm_kappa(table).kappa)


def krippendorff_alpha(
    ratings: Sequence[Sequence[float | None]],
    level: Literal["nominal", "ordinal", "interval", "ratio"] = "interval",
) -> float:
    """Alpha for raters x units (None = missing), at the nominal/ordinal/interval level."""
    data = np.array([[math.nan if v is None else v for v in row] for row in ratings], float)
    if data.size == 0 or np.isnan(data).all():
        return math.nan
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
