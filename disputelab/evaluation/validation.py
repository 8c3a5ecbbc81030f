"""Judge validation against ground truth: rule-policy episodes have a known consensus
(the oracle), so any tracker's trajectory can be scored against it without annotators.

The unit is the **aligned point**: one topic of one episode right after one party turn
(t >= 1; index 0 is the state before anyone spoke, which no judge reads). A point is kept
only where the oracle and *every* validated tracker are defined, so all trackers are
scored on the same points; every dropped point is counted under the reason it was
dropped. Points of one episode share its dialogue and are not independent, so intervals
resample whole episodes (a cluster bootstrap), never single points.

Five consensus levels: a SoCRATES judge scores agreement 1-5 and the topic-localized
tracker maps score r to (r - 1) / 4, so the levels are 0, .25, .5, .75 and 1. The oracle
takes those five values with three parties (two parties: 0, .5, 1; four: multiples of
1/6). For the agreement statistics both oracle and tracker values are rounded to the
nearest level (`level_of`); Cohen's kappa is weighted quadratically (a 1-vs-5
disagreement costs sixteen times a 1-vs-2), and Krippendorff's alpha is ordinal.

Calibration is the mean absolute error left after the best monotone recalibration of
the tracker's values onto the oracle's, best in absolute error (isotonic median
regression): a tracker that ranks points right on its own scale scores 0, however its
scale is drawn, and no tracker scores worse than its raw MAE.

Every statistic is a `Stat`: a value, an interval when there is one, and the reason
whenever the value or its interval is NaN.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats as sps
from scipy.optimize import isotonic_regression

from disputelab.evaluation.stats import krippendorff_alpha
from disputelab.evaluation.trackers import Trajectory

LEVELS = (0.0, 0.25, 0.5, 0.75, 1.0)
ORACLE = "oracle"
CLUSTERED_BY_EPISODE = "percentile bootstrap resampling episodes"
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Stat:
    """A statistic with its interval (NaN bounds when there is none) and, whenever the
    value or the interval is NaN, why."""

    value: float
    low: float = math.nan
    high: float = math.nan
    why: str = ""

    @staticmethod
    def undefined(why: str) -> Stat:
        return Stat(math.nan, why=why)


@dataclass(frozen=True)
class Point:
    """One topic of one episode, right after party turn `turn`."""

    episode: int
    topic: str
    turn: int
    final: bool  # the episode's last party turn: the outcome-level point


@dataclass
class Aligned:
    """The points where the oracle and every tracker are defined, with their values."""

    points: list[Point]
    oracle: list[float]
    tracked: dict[str, list[float]]
    considered: int = 0
    dropped: Counter[str] = field(default_factory=Counter)

    @property
    def episodes(self) -> int:
        return len({p.episode for p in self.points})


def _why_undefined(name: str, trajectory: Trajectory) -> str:
    if trajectory.failure:
        return f"{name}: {trajectory.failure.splitlines()[0][:160]}"
    if name == "self-report":
        return "self-report: undefined until every party has spoken"
    return f"{name}: undefined"


def align(truth: Sequence[Trajectory], tracked: Mapping[str, Sequence[Trajectory]]) -> Aligned:
    """The common points of the oracle (`truth`, one trajectory per episode) and every
    tracker in `tracked` (name -> one trajectory per episode, in the same order)."""
    out = Aligned([], [], {name: [] for name in tracked})
    for e, want in enumerate(truth):
        got = {name: runs[e] for name, runs in tracked.items()}
        for topic, oracle_values in want.by_topic.items():
            last = len(oracle_values) - 1
            for t in range(1, len(oracle_values)):
                out.considered += 1
                why = _first_gap(topic, t, want, got)
                if why:
                    out.dropped[why] += 1
                    continue
                out.points.append(Point(e, topic, t, t == last))
                out.oracle.append(oracle_values[t])
                for name, traj in got.items():
                    out.tracked[name].append(traj.by_topic[topic][t])
    return out


def _first_gap(topic: str, t: int, want: Trajectory, got: Mapping[str, Trajectory]) -> str:
    """Why point (topic, t) cannot be scored, or "" when it can."""
    if math.isnan(want.by_topic[topic][t]):
        return _why_undefined(ORACLE, want)
    for name, traj in got.items():
        values = traj.by_topic.get(topic)
        if values is None or len(values) <= t:
            return f"{name}: no value for this turn"
        if math.isnan(values[t]):
            return _why_undefined(name, traj)
    return ""


# ---- the statistics, each on paired values -------------------------------------------
def _constant(a: Floats) -> bool:
    return bool(np.all(a == a[0]))


def _correlate(a: Floats, b: Floats, method: Literal["pearson", "spearman"]) -> float:
    fn = sps.pearsonr if method == "pearson" else sps.spearmanr
    with warnings.catch_warnings():
        # Nearly constant resamples are legitimate draws; scipy's warning is noise here.
        warnings.simplefilter("ignore", sps.NearConstantInputWarning)
        return float(fn(a, b).statistic)


def correlation(
    xs: Sequence[float],
    ys: Sequence[float],
    clusters: Sequence[Hashable],
    method: Literal["pearson", "spearman"] = "pearson",
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Stat:
    """Pearson or Spearman r of tracker `xs` with oracle `ys`, and a percentile CI that
    resamples whole clusters (episodes). Resamples in which either side is constant have
    no r and are left out; if more than half are, there is no interval."""
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    if len(x) < 3:
        return Stat.undefined(f"{len(x)} aligned points: r needs at least 3")
    if _constant(y):
        return Stat.undefined(f"the oracle is constant ({y[0]:.2f}) on every point: r undefined")
    if _constant(x):
        return Stat.undefined(f"the tracker is constant ({x[0]:.2f}) on every point: r undefined")
    r = _correlate(x, y, method)
    members = _members(clusters)
    if len(members) < 2:
        return Stat(r, why="one episode: no interval clustered by episode")
    rng = np.random.default_rng(seed)
    draws: list[float] = []
    for _ in range(resamples):
        idx = np.concatenate([members[k] for k in rng.integers(0, len(members), len(members))])
        a, b = x[idx], y[idx]
        if len(idx) >= 3 and not (_constant(a) or _constant(b)):
            draws.append(_correlate(a, b, method))
    if len(draws) < resamples / 2:
        return Stat(r, why=f"{resamples - len(draws)} of {resamples} resamples had no r")
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(draws, [tail, 1.0 - tail])
    return Stat(r, float(low), float(high))


def _members(clusters: Sequence[Hashable]) -> list[npt.NDArray[np.intp]]:
    """The indices of each cluster's points, clusters in order of first appearance."""
    by: dict[Hashable, list[int]] = {}
    for i, c in enumerate(clusters):
        by.setdefault(c, []).append(i)
    return [np.asarray(v, dtype=np.intp) for v in by.values()]


def level_of(value: float) -> int:
    """The nearest of the five consensus levels, 0..4 (ties round up: 0.125 -> 1)."""
    return min(4, max(0, math.floor(value * 4 + 0.5)))


def weighted_kappa(xs: Sequence[float], ys: Sequence[float]) -> Stat:
    """Cohen's kappa with quadratic weights on the five levels of `xs` and `ys`."""
    if not xs:
        return Stat.undefined("no aligned points")
    table = np.zeros((5, 5))
    for x, y in zip(xs, ys, strict=True):
        table[level_of(y), level_of(x)] += 1
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    if (
        np.count_nonzero(rows) == 1
        and np.count_nonzero(cols) == 1
        and np.argmax(rows) == np.argmax(cols)
    ):
        # Both raters always chose the same single level: chance agreement is total.
        return Stat.undefined("oracle and tracker use one and the same level: kappa undefined")
    # Imported here: statsmodels brings pandas, which the rest of this module does not need.
    from statsmodels.stats.inter_rater import cohens_kappa

    with np.errstate(invalid="ignore", divide="ignore"):  # its z-test, unused here
        return Stat(float(cohens_kappa(table, wt="quadratic").kappa))


def ordinal_alpha(xs: Sequence[float], ys: Sequence[float]) -> Stat:
    """Krippendorff's alpha, ordinal, with the oracle and the tracker as two raters of
    the points' five levels."""
    if not xs:
        return Stat.undefined("no aligned points")
    levels = {level_of(v) for v in (*xs, *ys)}
    if len(levels) < 2:
        return Stat.undefined("one level on every point: alpha undefined")
    rows = [[float(level_of(v)) for v in ys], [float(level_of(v)) for v in xs]]
    return Stat(krippendorff_alpha(rows, "ordinal"))


def mean_absolute_error(xs: Sequence[float], ys: Sequence[float]) -> Stat:
    if not xs:
        return Stat.undefined("no aligned points")
    return Stat(float(np.mean(np.abs(np.asarray(xs, float) - np.asarray(ys, float)))))


def monotone_fit(xs: Sequence[float], ys: Sequence[float]) -> Floats:
    """For each point, the value of the best non-decreasing map from tracker values `xs`
    to oracle values `ys` (least squares; equal `xs` share one fitted value)."""
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    unique, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, weights=y) / counts
    fitted: Floats = isotonic_regression(means, weights=counts.astype(float)).x
    assert len(fitted) == len(unique)
    out: Floats = fitted[inverse]
    return out


def median_monotone_fit(xs: Sequence[float], ys: Sequence[float]) -> Floats:
    """For each point, the value of the non-decreasing map from tracker values `xs` to
    oracle values `ys` with the least *absolute* error (isotonic median regression):
    pool adjacent violators, each pooled block taking the (lower) median of its ys."""
    x, y = np.asarray(xs, float), np.asarray(ys, float)
    unique, inverse = np.unique(x, return_inverse=True)
    blocks: list[list[float]] = []  # each block's ys, blocks in order of x
    medians: list[float] = []
    for group in range(len(unique)):
        blocks.append(sorted(y[inverse == group].tolist()))
        medians.append(_lower_median(blocks[-1]))
        while len(blocks) > 1 and medians[-2] > medians[-1]:
            merged = sorted(blocks.pop() + blocks.pop())
            medians[-2:] = []
            blocks.append(merged)
            medians.append(_lower_median(merged))
    fitted = np.concatenate([[m] * len(b) for m, b in zip(medians, blocks, strict=True)])
    # Blocks hold whole groups in order of x, so the k-th value belongs to the k-th
    # smallest x: map back through each point's rank.
    order = np.argsort(inverse, kind="stable")
    out: Floats = np.empty(len(x))
    out[order] = fitted
    return out


def _lower_median(sorted_values: list[float]) -> float:
    return sorted_values[(len(sorted_values) - 1) // 2]


def calibration_error(xs: Sequence[float], ys: Sequence[float]) -> Stat:
    """MAE between the oracle and the tracker after the monotone recalibration that
    minimises that same absolute error (`median_monotone_fit`), so it never exceeds the
    raw MAE, whose identity map is one of the monotone maps it chooses among."""
    if not xs:
        return Stat.undefined("no aligned points")
    return Stat(float(np.mean(np.abs(np.asarray(ys, float) - median_monotone_fit(xs, ys)))))


# ---- a tracker's fit -------------------------------------------------------------------
@dataclass(frozen=True)
class TrackerFit:
    """How one tracker's values fit the oracle's on the aligned points, and its cost."""

    tracker: str
    judge: str
    reads_oracle: bool  # reads the rule policy's stances, which the oracle is made of
    points: int
    episodes: int
    pearson: Stat
    spearman: Stat
    outcome_r: Stat
    kappa: Stat
    alpha: Stat
    mae: Stat
    calibration_mae: Stat
    calls_per_episode: float
    tokens_per_episode: float
    failures: tuple[str, ...] = ()


def fit_tracker(
    name: str,
    judge: str,
    reads_oracle: bool,
    aligned: Aligned,
    runs: Sequence[Trajectory],
    resamples: int = 2000,
) -> TrackerFit:
    """Score tracker `name` on `aligned` (built with it), its cost read from `runs`."""
    xs, ys = aligned.tracked[name], aligned.oracle
    clusters = [p.episode for p in aligned.points]
    finals = [i for i, p in enumerate(aligned.points) if p.final]
    outcome = correlation(
        [xs[i] for i in finals],
        [ys[i] for i in finals],
        [clusters[i] for i in finals],
        resamples=resamples,
    )
    n = max(1, len(runs))
    return TrackerFit(
        tracker=name,
        judge=judge,
        reads_oracle=reads_oracle,
        points=len(xs),
        episodes=aligned.episodes,
        pearson=correlation(xs, ys, clusters, "pearson", resamples=resamples),
        spearman=correlation(xs, ys, clusters, "spearman", resamples=resamples),
        outcome_r=outcome,
        kappa=weighted_kappa(xs, ys),
        alpha=ordinal_alpha(xs, ys),
        mae=mean_absolute_error(xs, ys),
        calibration_mae=calibration_error(xs, ys),
        calls_per_episode=sum(t.calls for t in runs) / n,
        tokens_per_episode=sum(t.input_tokens + t.output_tokens for t in runs) / n,
        failures=tuple(t.failure for t in runs if t.failure),
    )
