"""The statistics of a comparison, as pure functions of outcomes: each arm's mean with a
CI over scenarios, paired differences between arms with Holm-adjusted tests, and
Bradley-Terry strengths from the arms' paired episodes.

An outcome is one episode's value of the chosen metric, filed under its arm (a model, a
mediator or a run) and its match: what it shares with the episodes of the other arms it
is compared with (scenario, condition and seed, and whatever else is held fixed). Two
arms' outcomes with the same match played the same scenario on the same seed, so their
difference leaves out what the scenario and the seed do to both.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import numpy.typing as npt
from scipy.optimize import minimize

from disputelab.evaluation.inference import MIN_CLUSTERS, cluster_ci, paired_scenario_test
from disputelab.evaluation.stats import holm

Match = tuple[Hashable, ...]
# A weak Gaussian prior on the log-strengths (a ridge on the likelihood): it keeps an arm
# that won every comparison at a finite strength, and moves the others by well under
# the width of any interval reported with them.
RIDGE = 0.01


@dataclass(frozen=True)
class Outcome:
    arm: str
    scenario: str
    match: Match  # the episodes of other arms it pairs with share it
    value: float


@dataclass(frozen=True)
class ArmEstimate:
    """An arm's mean with its CI clustered by scenario."""

    arm: str
    mean: float
    low: float
    high: float
    episodes: int
    scenarios: int


@dataclass(frozen=True)
class PairedDifference:
    """Arm `a` minus arm `b` over their paired episodes."""

    a: str
    b: str
    mean: float
    low: float
    high: float
    pairs: int
    scenarios: int
    p_value: float
    p_holm: float
    test: str


@dataclass(frozen=True)
class Strength:
    """An arm's Bradley-Terry log-strength (mean zero over the arms) with its CI."""

    arm: str
    strength: float
    low: float
    high: float
    wins: float  # comparisons won, a tie counting half
    comparisons: int


def arm_estimates(outcomes: Sequence[Outcome]) -> list[ArmEstimate]:
    """Each arm's mean of its defined values, with the tables' 95% interval over
    scenarios (`cluster_ci`: none below `MIN_CLUSTERS` scenarios, where no interval keeps
    its coverage); arms in the order they first appear."""
    by_arm: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        by_arm[o.arm].append(o)
    out = []
    for arm, own in by_arm.items():
        est = cluster_ci([o.value for o in own], [o.scenario for o in own])
        out.append(ArmEstimate(arm, est.mean, est.low, est.high, est.n, est.clusters))
    return out


def paired_values(outcomes: Sequence[Outcome]) -> dict[Match, dict[str, float]]:
    """Match -> arm -> value, defined values only; an arm with several episodes in one
    match (replicates the match does not tell apart) counts their mean."""
    sums: dict[Match, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for o in outcomes:
        if not math.isnan(o.value):
            sums[o.match][o.arm].append(o.value)
    return {m: {a: math.fsum(v) / len(v) for a, v in arms.items()} for m, arms in sums.items()}


def _scenarios(outcomes: Sequence[Outcome]) -> dict[Match, str]:
    return {o.match: o.scenario for o in outcomes}


def paired_differences(outcomes: Sequence[Outcome], arms: Sequence[str]) -> list[PairedDifference]:
    """Every pair of `arms` (in that order): the mean paired difference with the tables'
    95% interval over scenarios (`cluster_ci`), and a Wilcoxon test on scenario means,
    Holm-adjusted over the pairs."""
    values, scenario = paired_values(outcomes), _scenarios(outcomes)
    raw = []
    for a, b in combinations(arms, 2):
        both = sorted((m for m, v in values.items() if a in v and b in v), key=repr)
        diffs = [values[m][a] - values[m][b] for m in both]
        est = cluster_ci(diffs, [scenario[m] for m in both])
        test = paired_scenario_test(*_keyed(both, values, scenario, a, b))
        raw.append((a, b, est, test))
    adjusted = holm([t.p_value for *_, t in raw])
    return [
        PairedDifference(a, b, e.mean, e.low, e.high, e.n, e.clusters, t.p_value, q, t.test)
        for (a, b, e, t), q in zip(raw, adjusted, strict=True)
    ]


def _keyed(
    matches: Sequence[Match],
    values: Mapping[Match, Mapping[str, float]],
    scenario: Mapping[Match, str],
    a: str,
    b: str,
) -> tuple[dict[tuple[str, int], float], dict[tuple[str, int], float]]:
    """The paired values of `a` and `b` keyed (scenario, index) as the scenario test takes."""
    xs, ys = {}, {}
    for i, m in enumerate(matches):
        xs[(scenario[m], i)] = values[m][a]
        ys[(scenario[m], i)] = values[m][b]
    return xs, ys


def comparisons(
    outcomes: Sequence[Outcome], higher_is_better: bool = True
) -> list[tuple[str, str, float, str]]:
    """Every paired contest: (arm a, arm b, a's score, scenario), the score 1 when a's
    value is the better, 0 when b's is, 0.5 for a tie; each match pits every two arms in
    it against each other."""
    values, scenario = paired_values(outcomes), _scenarios(outcomes)
    out = []
    for m in sorted(values, key=repr):
        present = sorted(values[m])
        for a, b in combinations(present, 2):
            x, y = values[m][a], values[m][b]
            if not higher_is_better:
                x, y = -x, -y
            out.append((a, b, 1.0 if x > y else 0.0 if x < y else 0.5, scenario[m]))
    return out


def fit_bradley_terry(
    arms: Sequence[str], contests: Sequence[tuple[str, str, float, str]]
) -> dict[str, float]:
    """Bradley-Terry log-strengths by maximum likelihood (P(a beats b) is the logistic of
    the difference of their strengths), a tie counting half a win each way, with a weak
    ridge (RIDGE) so that every strength is finite; centred to mean zero."""
    index = {a: i for i, a in enumerate(arms)}
    n = len(arms)
    wins = np.zeros((n, n))
    for a, b, score, _ in contests:
        wins[index[a], index[b]] += score
        wins[index[b], index[a]] += 1.0 - score
    games = wins + wins.T
    result = minimize(
        _nll,
        np.zeros(n),
        args=(wins, games),
        jac=_grad,
        hess=_hess,
        method="trust-exact",
        options={"gtol": 1e-10},
    )
    theta = np.asarray(result.x, dtype=float)
    theta -= theta.mean()
    return {a: float(theta[i]) for a, i in index.items()}


def _nll(theta: npt.NDArray[np.float64], wins: npt.NDArray[np.float64], games: object) -> float:
    diff = theta[:, None] - theta[None, :]
    # log sigma(d) = -log(1 + e^-d), computed stably
    return float(np.sum(wins * np.logaddexp(0.0, -diff)) + RIDGE / 2 * theta @ theta)


def _grad(
    theta: npt.NDArray[np.float64], wins: npt.NDArray[np.float64], games: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))  # P(i beats j)
    expected = games * p
    out: npt.NDArray[np.float64] = (expected - wins).sum(axis=1) + RIDGE * theta
    return out


def _hess(
    theta: npt.NDArray[np.float64], wins: object, games: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    w = games * p * (1.0 - p)
    h: npt.NDArray[np.float64] = np.diag(w.sum(axis=1)) - w + RIDGE * np.eye(len(theta))
    return h


def bradley_terry(
    arms: Sequence[str],
    contests: Sequence[tuple[str, str, float, str]],
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[Strength]:
    """Each arm's strength (`fit_bradley_terry`) with a percentile CI from refitting on
    scenarios drawn with replacement (every contest of a drawn scenario comes along):
    scenarios, not contests, are the units sampled. Below `MIN_CLUSTERS` scenarios there
    is no interval, as in the tables: too few to resample with the coverage it states.
    Arms strongest first."""
    point = fit_bradley_terry(arms, contests)
    by_scenario: dict[str, list[tuple[str, str, float, str]]] = defaultdict(list)
    for c in contests:
        by_scenario[c[3]].append(c)
    names = sorted(by_scenario)
    enough = len(names) >= MIN_CLUSTERS
    draws = np.zeros((resamples if enough else 0, len(arms)))
    rng = np.random.default_rng(seed)
    for r in range(len(draws)):
        drawn = [c for i in rng.integers(0, len(names), len(names)) for c in by_scenario[names[i]]]
        fitted = fit_bradley_terry(arms, drawn)
        draws[r] = [fitted[a] for a in arms]
    tail = (1.0 - confidence) / 2
    won, played = _tally(arms, contests)
    out = []
    for i, a in enumerate(arms):
        low, high = (
            np.quantile(draws[:, i], [tail, 1 - tail]) if len(draws) else (math.nan, math.nan)
        )
        out.append(Strength(a, point[a], float(low), float(high), won[a], played[a]))
    return sorted(out, key=lambda s: (-s.strength, s.arm))


def _tally(
    arms: Sequence[str], contests: Sequence[tuple[str, str, float, str]]
) -> tuple[dict[str, float], dict[str, int]]:
    won = dict.fromkeys(arms, 0.0)
    played = dict.fromkeys(arms, 0)
    for a, b, score, _ in contests:
        won[a] += score
        won[b] += 1.0 - score
        played[a] += 1
        played[b] += 1
    return won, played
