"""Inference for experiments whose episodes are grouped by scenario.

Replicates of one scenario share its parties, topics and preferences; only their seeds
differ. They are not independent observations, and treating them as such shrinks every
interval and inflates every test. The scenario is the unit that was sampled, so:

- intervals resample scenarios, not episodes (`cluster_bootstrap_ci`);
- tests compare scenario means (`paired_scenario_test`), after pairing each episode with
  the reference episode of the same scenario and replicate: the two ran on the same seed,
  so their difference leaves out what the scenario and the seed do to both.

Keys are `(scenario, replicate)`, the way every report table indexes its episodes.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
from scipy import stats

from disputelab.evaluation.stats import Estimate, TestResult, mcnemar_test, wilcoxon

Key = tuple[str, int]
CLUSTER_BOOTSTRAP = "cluster bootstrap over scenarios"
CLUSTER_T = "cluster-robust t interval over scenarios"
WILCOXON_ON_MEANS = "Wilcoxon signed-rank on scenario means"


def cluster_bootstrap_ci(
    values: Sequence[float],
    clusters: Sequence[Hashable],
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Estimate:
    """The mean of `values` with a percentile CI that resamples whole clusters.

    Each resample draws as many clusters as there are, with replacement, and takes the
    mean of every value in the drawn clusters, so the interval is on the same statistic
    as the mean (the mean over values, each cluster weighing by its size). NaN values are
    undefined and dropped before anything else. With fewer than two values, or all of
    them in one cluster, there is a mean but no interval: NaN bounds, for a table to show
    "n/a" rather than a zero-width CI that claims certainty.
    """
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster labels")
    v = np.asarray(values, dtype=float)
    keep = ~np.isnan(v)
    v = v[keep]
    labels = [c for c, k in zip(clusters, keep, strict=True) if k]
    ids = {c: i for i, c in enumerate(dict.fromkeys(labels))}
    n, k = len(v), len(ids)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, CLUSTER_BOOTSTRAP, 0)
    mean = float(v.mean())
    if n < 2 or k < 2:
        return Estimate(mean, math.nan, math.nan, n, CLUSTER_BOOTSTRAP, k)
    if np.all(v == v[0]):
        # Every resample has this mean; skip the float noise of summing and dividing.
        c = float(v[0])
        return Estimate(c, c, c, n, CLUSTER_BOOTSTRAP, k)
    index = np.array([ids[c] for c in labels])
    sums = np.bincount(index, weights=v, minlength=k)
    counts = np.bincount(index, minlength=k).astype(float)
    draws = np.random.default_rng(seed).integers(0, k, size=(resamples, k))
    means = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return Estimate(mean, float(low), float(high), n, CLUSTER_BOOTSTRAP, k)


def _by_cluster(
    values: Sequence[float], clusters: Sequence[Hashable]
) -> tuple[np.ndarray, np.ndarray]:
    """Per cluster (in first-seen order): the sum and the count of its defined values."""
    if len(values) != len(clusters):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster labels")
    v = np.asarray(values, dtype=float)
    keep = ~np.isnan(v)
    labels = [c for c, k in zip(clusters, keep, strict=True) if k]
    ids = {c: i for i, c in enumerate(dict.fromkeys(labels))}
    index = np.array([ids[c] for c in labels], dtype=int)
    sums = np.bincount(index, weights=v[keep], minlength=len(ids))
    return sums, np.bincount(index, minlength=len(ids)).astype(float)


def cluster_t_ci(
    values: Sequence[float], clusters: Sequence[Hashable], confidence: float = 0.95
) -> Estimate:
    """The mean of `values` with a cluster-robust t interval over `k` clusters.

    The variance of the mean is the sandwich (CR1) one, k/(k-1) x sum over clusters of
    (cluster sum - cluster size x mean)^2 / N^2, and the quantile is Student's t with
    k - 1 degrees of freedom: for clusters of equal size this is the t interval on the
    cluster means, exact for normal ones, where the percentile bootstrap, which resamples
    only k clusters, is too narrow (see `disputelab.tables.coverage`). NaNs are dropped;
    with fewer than two clusters there is no interval.
    """
    sums, counts = _by_cluster(values, clusters)
    n, k = int(counts.sum()), len(sums)
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan, 0, CLUSTER_T, 0)
    mean = float(sums.sum() / n)
    if k < 2:
        return Estimate(mean, math.nan, math.nan, n, CLUSTER_T, k)
    variance = k / (k - 1) * float(np.sum((sums - counts * mean) ** 2)) / n**2
    half = float(stats.t.ppf(0.5 + confidence / 2, k - 1)) * math.sqrt(variance)
    return Estimate(mean, mean - half, mean + half, n, CLUSTER_T, k)


MIN_CLUSTERS = 5
"""Clusters from which the cluster t interval reaches its stated 95% coverage (at least
92% simulated) in every deciding data-generating setting of `disputelab.tables.coverage`
at that count and every larger one: with 4 clusters binary outcomes reach 91.5%, with 2
only 77.5%, and the percentile bootstrap falls short up to 30 clusters. Below this, a
table shows "n/a (k clusters)". `tests/tables/test_coverage.py` re-derives the number."""


def cluster_ci(values: Sequence[float], clusters: Sequence[Hashable]) -> Estimate:
    """The interval the tables print: the cluster t interval from `MIN_CLUSTERS` clusters
    on, with NaN bounds below (a mean without an interval, never a CI that would cover
    the truth less often than it says)."""
    est = cluster_t_ci(values, clusters)
    if est.clusters < MIN_CLUSTERS:
        return Estimate(est.mean, math.nan, math.nan, est.n, est.method, est.clusters)
    return est


def scenario_pairs(
    xs: Mapping[Key, float], ys: Mapping[Key, float]
) -> dict[str, list[tuple[float, float]]]:
    """Scenario -> its (x, y) pairs: episodes matched by scenario and replicate, both
    defined. Sorted by scenario so that what follows does not depend on dict order."""
    pairs: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for key in sorted(xs.keys() & ys.keys()):
        x, y = float(xs[key]), float(ys[key])
        if not (math.isnan(x) or math.isnan(y)):
            pairs[key[0]].append((x, y))
    return dict(pairs)


def paired_scenario_test(
    xs: Mapping[Key, float], ys: Mapping[Key, float], binary: bool = False
) -> TestResult:
    """Do `xs` and `ys` differ, with scenarios as the independent units?

    Episodes are paired by scenario and replicate. When every scenario contributes one
    pair and the outcome is binary (`binary`, e.g. success), McNemar's test runs on those
    pairs. Otherwise each scenario's pairs are averaged into one pair of scenario means
    and a Wilcoxon signed-rank test runs on them, one pair per scenario: replicates
    inform the scenario's mean but are not counted as extra evidence. When no scenario
    mean differs, p = 1 (no evidence of a difference; the test still counts in its
    table's family). Without any pair, the test is undefined (NaN).
    """
    pairs = scenario_pairs(xs, ys)
    if not pairs:
        return TestResult(math.nan, math.nan, WILCOXON_ON_MEANS, 0)
    if binary and all(len(p) == 1 for p in pairs.values()):
        return mcnemar_test([p[0][0] for p in pairs.values()], [p[0][1] for p in pairs.values()])
    a = [math.fsum(x for x, _ in p) / len(p) for p in pairs.values()]
    b = [math.fsum(y for _, y in p) / len(p) for p in pairs.values()]
    if a == b:
        return TestResult(0.0, 1.0, WILCOXON_ON_MEANS, len(a))
    r = wilcoxon(a, b)
    return TestResult(r.statistic, r.p_value, WILCOXON_ON_MEANS, len(a))
