"""The roundtable's evaluators, registered by name.

- `socrates-oracle`: the protocol's own scores, SoCRATES's metrics on the rule parties'
  true consensus, read off the episode and its twin without a judge.
- `turn-taking`: speaking shares under motivated turn-taking.
- `promediate`: ProMediate's CC, TLE, RL and ME on the trajectory of the `tracker`
  option, indexed by dialogue line, undefined states dropped.
"""

from __future__ import annotations

from disputelab.evaluation.evaluators import trajectory
from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.promediate import promediate_scores
from disputelab.evaluation.registry import (
    EpisodeToScore,
    Evaluator,
    ScoringContext,
    register_evaluator,
)
from disputelab.evaluation.trackers import LLM_TRACKERS, RUBRIC_VERSION
from disputelab.protocols.roundtable.evaluation import promediate_judges, socrates, turn_taking


async def _socrates(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
    return socrates.score_episode(item.episode, item.baseline)


async def _turn_taking(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
    # Cyclic episodes give every party an equal share by construction (up to an early
    # stop): scores there would only be noise in every roundtable table.
    if not any(t.choice is not None for t in item.episode.turns):
        return {}
    return turn_taking.turn_taking_scores(item.episode, [p.id for p in item.scenario.parties])


async def _promediate(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
    tracker = ctx.options.get("tracker", "self-report")
    traj = await trajectory(tracker, item.episode, item.episode_id, item.scenario, ctx)
    if not ctx.judges:
        return promediate_scores(traj, item.episode)
    # With a judge, TLE's topic mentions and ME's targeted topics are judged, as in
    # ProMediate, instead of read off the stances and the mediator's proposal.
    judged = await promediate_judges.judge_events(ctx.judges, item.episode, item.scenario)
    return promediate_scores(traj, item.episode, judged=judged)


register_evaluator(
    Evaluator(
        socrates.EVALUATOR,
        socrates.VERSION,
        "oracle consensus with the SoCRATES metrics (consensus gain against the twin)",
        _socrates,
        on_demand=False,
    )
)


register_evaluator(
    Evaluator(
        "promediate",
        f"3.{RUBRIC_VERSION}.{promediate_judges.VERSION}",
        "ProMediate's CC, TLE, RL and ME on the trajectory of --tracker, by dialogue line "
        "(with a judge model, TLE's topic mentions and ME's targeted topics are judged)",
        _promediate,
        judged_when=("tracker", LLM_TRACKERS),
        stored_as="promediate:{tracker}",
        judge_optional=True,
    )
)


register_evaluator(
    Evaluator(
        "turn-taking",
        turn_taking.VERSION,
        "motivated turn-taking: speaking shares, their Gini, interruptions, voiced motivation",
        _turn_taking,
    )
)
