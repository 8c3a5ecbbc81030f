"""`compare`: stored runs' episodes into a leaderboard of models, mediators or runs."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from disputelab.compare.episodes import (
    CompareError,
    Played,
    arm_of,
    compared,
    load_played,
    match_of,
    metric_columns,
    resolve_metric,
)
from disputelab.compare.leaderboard import Leaderboard, mean_usage
from disputelab.compare.stats import (
    ArmEstimate,
    Outcome,
    Strength,
    arm_estimates,
    bradley_terry,
    comparisons,
    paired_differences,
)
from disputelab.store.sqlite import Store

# What a comparison ranks on when no metric is named: the first of these the runs score.
DEFAULT_METRICS = ("resolved", "final_consensus", "agreement", "success")


def outcomes(played: Sequence[Played], column: str, by: str) -> list[Outcome]:
    return [
        Outcome(arm_of(p, by), p.scenario, match_of(p, by), p.values.get(column, math.nan))
        for p in played
    ]


def default_metric(played: Sequence[Played]) -> str:
    """The first of DEFAULT_METRICS that the runs score and that tells their episodes
    apart (a metric every episode scores alike ranks nothing); failing that, the first
    scored at all."""
    columns = metric_columns(played)
    found = []
    for name in DEFAULT_METRICS:
        try:
            found.append(resolve_metric(played, name))
        except CompareError:
            continue
    for column in found:
        defined = {
            p.values[column] for p in played if not math.isnan(p.values.get(column, math.nan))
        }
        if len(defined) > 1:
            return column
    if found:
        return found[0]
    if not columns:
        raise CompareError("these runs have no scored episode to compare")
    raise CompareError(f"name a metric to compare on; these runs score {', '.join(columns)}")


def compare_played(
    played: Sequence[Played],
    runs: Sequence[str],
    metric: str | None = None,
    by: str = "model",
    higher_is_better: bool = True,
    resamples: int = 1000,
    seed: int = 0,
) -> Leaderboard:
    """The leaderboard of `played`'s arms (`by` model, mediator, run or people) on `metric`."""
    played = compared(played, by)
    column = resolve_metric(played, metric) if metric else default_metric(played)
    chosen = outcomes(played, column, by)
    arms = list(dict.fromkeys(o.arm for o in chosen))
    if len(arms) < 2:
        raise CompareError(
            f"by {by}: these runs have {len(arms)} {by} ({', '.join(arms) or 'none'}); a "
            "comparison needs two or more"
        )
    contests = comparisons(chosen, higher_is_better)
    if not contests:
        raise CompareError(
            f"no two {by}s share a scenario, condition and seed with {column} scored; "
            "nothing is paired to compare"
        )
    # An arm with no defined value paired with another's has no contest to rank it by:
    # it is listed after the ranked arms, unranked, rather than given a strength.
    fought = [a for a in arms if any(a in c[:2] for c in contests)]
    unranked = [Strength(a, math.nan, math.nan, math.nan, 0.0, 0) for a in arms if a not in fought]
    strengths = [*bradley_terry(fought, contests, resamples, seed), *unranked]
    ranked = [s.arm for s in strengths]
    return Leaderboard(
        column,
        by,
        tuple(runs),
        higher_is_better,
        tuple(strengths),
        _every_metric(played, by),
        tuple(paired_differences(chosen, ranked)),
        _usage(played, by),
        resamples,
    )


def _every_metric(played: Sequence[Played], by: str) -> dict[str, dict[str, ArmEstimate]]:
    out = {}
    for column in metric_columns(played):
        found = arm_estimates(outcomes(played, column, by))
        if any(e.episodes for e in found):
            out[column] = {e.arm: e for e in found}
    return out


def _usage(played: Sequence[Played], by: str) -> dict[str, dict[str, float]]:
    per_arm: dict[str, list[dict[str, float]]] = defaultdict(list)
    for p in played:
        per_arm[arm_of(p, by)].append(dict(p.usage))
    return {arm: mean_usage(u) for arm, u in per_arm.items()}


def compare(
    store: Store,
    runs: Sequence[str],
    metric: str | None = None,
    by: str = "model",
    higher_is_better: bool = True,
    resamples: int = 1000,
    seed: int = 0,
) -> Leaderboard:
    """Compare the stored runs `runs` (ids, unique prefixes, labels or `last`): their
    arms `by` model, mediator, run or people (seats people filled against
    agents only), ranked on `metric` (default: the first of
    DEFAULT_METRICS scored). CompareError when there is nothing to compare."""
    if not runs:
        raise CompareError("give one or more runs, or an experiment's name")
    if not 1 <= resamples <= 100_000:
        raise CompareError(f"resamples: from 1 to 100000, not {resamples}")
    ids = list(dict.fromkeys(store.resolve_run(r) for r in runs))
    played = load_played(store, ids)
    if not played:
        raise CompareError(f"no finished episode in {', '.join(ids)}")
    return compare_played(played, ids, metric, by, higher_is_better, resamples, seed)
