"""How often a table's 95% CI covers the truth, against the number of clusters.

Every table clusters its episodes by scenario, and a grid often has only a handful of
scenarios. A percentile cluster bootstrap resamples those few clusters and is too narrow
there; a cluster-robust t interval widens with Student's quantile. This module simulates
both on data shaped like the tables' (a few replicates per scenario; normal, skewed,
binary and unequally sized clusters), seeded, so that the threshold below which a table
prints "n/a (k clusters)" is chosen from evidence and re-checked by a test.

Everything here is vectorised numpy over many simulated data sets at once; the interval
formulas are the ones of `disputelab.evaluation.inference` (the test checks the two
agree on single data sets).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

Array = npt.NDArray[np.float64]
REPLICATES = 4  # values per cluster in the equal-size settings, as in a typical grid
TOLERANCE = 0.92
"""Simulated coverage at or above which a nominal 95% interval counts as reaching it:
three points below nominal (the t interval's coverage is simulated on 20,000 data sets,
a Monte Carlo standard error of 0.15 points, so the slack is for skew and discreteness,
not noise)."""
T_SETS, BOOTSTRAP_SETS = 20_000, 2_000  # data sets per cell; the bootstrap costs 1000x more


@dataclass(frozen=True)
class Setting:
    """A data-generating process: `draw(rng, sets, k)` gives (sums, counts) per cluster,
    each of shape (sets, k), and `truth` is the mean it estimates."""

    name: str
    describe: str
    truth: float
    draw: Callable[[np.random.Generator, int, int], tuple[Array, Array]]
    decides: bool = True  # False: shown as a stress case, not used to choose the threshold


def _equal(values: Array) -> tuple[Array, Array]:
    return values.sum(axis=2), np.full(values.shape[:2], float(values.shape[2]))


def _normal(rng: np.random.Generator, sets: int, k: int) -> tuple[Array, Array]:
    effect = rng.normal(0.0, 1.0, (sets, k, 1))
    return _equal(effect + rng.normal(0.0, 1.0, (sets, k, REPLICATES)))


def _skewed(rng: np.random.Generator, sets: int, k: int) -> tuple[Array, Array]:
    effect = rng.exponential(1.0, (sets, k, 1))
    return _equal(effect + rng.normal(0.0, 0.5, (sets, k, REPLICATES)))


def _bounded(rng: np.random.Generator, sets: int, k: int) -> tuple[Array, Array]:
    effect = rng.beta(1.0, 4.0, (sets, k, 1))
    return _equal(effect + rng.normal(0.0, 0.1, (sets, k, REPLICATES)))


def _binary(rng: np.random.Generator, sets: int, k: int) -> tuple[Array, Array]:
    rate = rng.beta(2.0, 3.0, (sets, k, 1))
    return _equal((rng.random((sets, k, REPLICATES)) < rate).astype(float))


def _unequal(rng: np.random.Generator, sets: int, k: int) -> tuple[Array, Array]:
    sizes = rng.integers(1, 2 * REPLICATES + 1, (sets, k)).astype(float)
    effect = rng.normal(0.0, 1.0, (sets, k))
    # The sum of `size` unit normals around the cluster's effect.
    noise = rng.normal(0.0, 1.0, (sets, k)) * np.sqrt(sizes)
    return sizes * effect + noise, sizes


SETTINGS = (
    Setting("normal", "normal scenario effect (ICC 0.5), 4 replicates", 0.0, _normal),
    Setting("bounded", "Beta(1, 4) scenario mean (skewness 1.05), 4 replicates", 0.2, _bounded),
    Setting("binary", "success with a Beta(2, 3) scenario rate, 4 replicates", 0.4, _binary),
    Setting("unequal", "normal effect, 1 to 8 episodes per scenario", 0.0, _unequal),
    Setting(
        "skewed",
        "exponential scenario effect (skewness 2), 4 replicates; a stress case that no "
        "table metric, all bounded, comes near, so it does not decide",
        1.0,
        _skewed,
        decides=False,
    ),
)


def t_bounds(sums: Array, counts: Array, confidence: float = 0.95) -> tuple[Array, Array]:
    """The cluster-robust (CR1) t interval of each row's mean, k - 1 degrees of freedom."""
    k = sums.shape[1]
    n = counts.sum(axis=1)
    mean = sums.sum(axis=1) / n
    resid = sums - counts * mean[:, None]
    se = np.sqrt(k / (k - 1) * (resid**2).sum(axis=1)) / n
    half = stats.t.ppf(0.5 + confidence / 2, k - 1) * se
    return mean - half, mean + half


def bootstrap_bounds(
    sums: Array,
    counts: Array,
    rng: np.random.Generator,
    resamples: int = 1000,
    confidence: float = 0.95,
) -> tuple[Array, Array]:
    """The percentile cluster bootstrap of each row's mean (clusters drawn with replacement)."""
    sets, k = sums.shape
    draws = rng.integers(0, k, (sets, resamples, k))
    rows = np.arange(sets)[:, None, None]
    means = sums[rows, draws].sum(axis=2) / counts[rows, draws].sum(axis=2)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail], axis=1)
    return low, high


def coverage(
    setting: Setting, k: int, method: str, sets: int, seed: int, chunk: int = 250
) -> float:
    """Share of `sets` simulated data sets whose `method` interval covers the truth."""
    rng = np.random.default_rng([seed, k, SETTINGS.index(setting), METHODS.index(method)])
    hits = 0
    for start in range(0, sets, chunk):
        sums, counts = setting.draw(rng, min(chunk, sets - start), k)
        if method == "t":
            low, high = t_bounds(sums, counts)
        else:
            low, high = bootstrap_bounds(sums, counts, rng)
        hits += int(np.sum((low <= setting.truth) & (setting.truth <= high)))
    return hits / sets


METHODS = ("bootstrap", "t")
CLUSTER_COUNTS = (2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 30)


def coverage_table(
    counts: Sequence[int] = CLUSTER_COUNTS,
    methods: Sequence[str] = METHODS,
    sets: dict[str, int] | None = None,
    seed: int = 0,
) -> dict[tuple[str, int], dict[str, float]]:
    """(setting, clusters) -> method -> simulated coverage of the nominal 95% interval."""
    per = sets or {"t": T_SETS, "bootstrap": BOOTSTRAP_SETS}
    return {
        (s.name, k): {m: coverage(s, k, m, per[m], seed) for m in methods}
        for s in SETTINGS
        for k in counts
    }


def reaches_from(table: dict[tuple[str, int], dict[str, float]], method: str) -> int | None:
    """The fewest clusters from which `method` reaches `TOLERANCE` in every setting and
    at every larger cluster count simulated; None if it never does."""
    counts = sorted({k for _, k in table})
    deciding = [s for s in SETTINGS if s.decides]
    good = [all(table[(s.name, k)][method] >= TOLERANCE for s in deciding) for k in counts]
    for i, k in enumerate(counts):
        if all(good[i:]):
            return k
    return None


def coverage_markdown(table: dict[tuple[str, int], dict[str, float]]) -> str:
    """The simulation as a table: one row per cluster count, bootstrap / t per setting."""
    counts = sorted({k for _, k in table})
    methods = [m for m in METHODS if m in table[next(iter(table))]]
    head = " | ".join(f"{s.name}: {' / '.join(methods)}" for s in SETTINGS)
    lines = [f"| clusters | {head} |", "|---|" + "---|" * len(SETTINGS)]
    for k in counts:
        cells = [
            " / ".join(f"{100 * table[(s.name, k)][m]:.1f}" for m in methods) for s in SETTINGS
        ]
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    found = {m: reaches_from(table, m) for m in methods}
    reach = ", ".join(
        f"{m} {'never (in this range)' if k is None else f'from {k} clusters'}"
        for m, k in found.items()
    )
    lines += [
        "",
        "Coverage (%) of the nominal 95% interval. Settings: "
        + "; ".join(f"{s.name}, {s.describe}" for s in SETTINGS)
        + f". Reaching {100 * TOLERANCE:.0f}% in every deciding setting at that count and "
        f"every larger one: {reach}.",
    ]
    return "\n".join(lines) + "\n"
