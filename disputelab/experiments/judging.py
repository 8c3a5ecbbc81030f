"""Re-score stored episodes with a tracker, and validate trackers against the oracle."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from disputelab.episode import Episode
from disputelab.evaluation import socrates
from disputelab.evaluation.judges import (
    JUDGE_VERSION,
    RUBRICS,
    level_judgement,
    mediator_intelligence_ratings,
    transcript,
)
from disputelab.evaluation.metrics import (
    MetricResult,
    consensus_gain,
    intervention_effectiveness,
    intervention_timeliness,
)
from disputelab.evaluation.promediate import (
    consensus_change,
    mediator_effectiveness,
    mediator_intelligence,
    response_latency,
    topic_level_efficiency,
)
from disputelab.evaluation.trackers import (
    RUBRIC_VERSION,
    TRACKERS,
    Agreement,
    Trajectory,
    oracle,
    track,
)
from disputelab.evaluation.validation import compare
from disputelab.experiments.single import Agents, run_matched_async
from disputelab.llm.base import ChatModel
from disputelab.llm.models import ModelHub
from disputelab.scenario.schema import Scenario
from disputelab.store.sqlite import EpisodeRecord, Store


def tracker_scores(
    traj: Trajectory, episode: Episode, baseline: Trajectory | None
) -> dict[str, MetricResult]:
    """Final consensus and the SoCRATES metrics on a tracker's trajectory."""
    s = traj.overall()
    if traj.failure or not s:
        why = f"undefined: {traj.failure or 'empty dialogue'}"
        return {"final_consensus": MetricResult(float("nan"), why)}
    out = {"final_consensus": MetricResult(s[-1], f"tracker consensus after turn {len(s) - 1}")}
    if episode.agents.get("mediator", "none") != "none":
        positions = episode.intervention_positions()
        clean = [0.0 if v != v else v for v in s]  # NaN before everyone spoke counts as 0
        out["intervention_timeliness"] = intervention_timeliness(clean, positions)
        out["intervention_effectiveness"] = intervention_effectiveness(clean, positions)
        base = baseline.overall() if baseline else []
        out["consensus_gain"] = (
            consensus_gain(s[-1], base[-1])
            if base and base[-1] == base[-1]
            else MetricResult(float("nan"), "undefined: no matched baseline scored")
        )
    return out


JUDGE_EVALUATORS = ("outcome-judges", "mediator-intelligence")
EVALUATORS = (*TRACKERS, "promediate", *JUDGE_EVALUATORS)


async def evaluate_run(
    store: Store,
    run_id: str,
    evaluator: str,
    hub: ModelHub,
    judge_models: Sequence[str],
    tracker: str = "self-report",
) -> dict[str, dict[str, MetricResult]]:
    """Score every complete episode of a run again; stores scores beside the old ones,
    versioned by evaluator, rubric version and judge model."""
    judges = [hub.model(m, "judge") for m in judge_models]
    judge_name = ",".join(judge_models)
    records = [store.load_episode(e) for e in store.episode_ids(run_id)]
    complete = [r for r in records if r.complete]
    if evaluator in JUDGE_EVALUATORS or evaluator == "promediate":
        results: dict[str, dict[str, MetricResult]] = {}
        for rec in complete:
            scenario = Scenario.model_validate(rec.scenario)
            if evaluator == "promediate":
                traj = await track(tracker, rec.episode, scenario, judges)
                scores = promediate_scores(traj, rec.episode)
                name, version = f"promediate:{tracker}", f"1.{RUBRIC_VERSION}"
            else:
                scores = await judge_scores(evaluator, rec.episode, scenario, judges)
                name, version = evaluator, JUDGE_VERSION
            store.add_scores(rec.episode_id, name, version, scores, judge_name)
            results[rec.episode_id] = scores
        return results
    return await _tracker_run(store, complete, evaluator, judges, judge_name)


def promediate_scores(traj: Trajectory, episode: Episode) -> dict[str, MetricResult]:
    """CC, RL and ME on a tracker trajectory indexed by party turn. A mediator turn after
    party turn k sits at line k + 1, so answering a drop at once is a latency of 1; an
    intervention targets the topics of its proposal, or every topic if it proposed none."""
    if traj.failure:
        nan = MetricResult(float("nan"), f"undefined: {traj.failure}")
        return {"consensus_change": nan, "response_latency": nan, "mediator_effectiveness": nan}
    overall = [0.0 if v != v else v for v in traj.overall()]
    by_topic = {t: [0.0 if v != v else v for v in s] for t, s in traj.by_topic.items()}
    positions = episode.intervention_positions()
    targets = [
        list(t.intervention.proposal) or list(by_topic)
        for t in episode.turns
        if t.role == "mediator" and t.intervention is not None
    ]
    return {
        "consensus_change": consensus_change(overall),
        "topic_level_efficiency": topic_level_efficiency(by_topic, topic_mentions(episode)),
        "response_latency": response_latency(overall, [k + 1 for k in positions]),
        "mediator_effectiveness": mediator_effectiveness(
            by_topic, list(zip(positions, targets, strict=True))
        ),
    }


def topic_mentions(episode: Episode) -> dict[str, list[int]]:
    """Party turns (1-based) that touch each topic, read from the structure rather than
    asked of a judge: the speaker's stance on the topic moved, or its words name the topic
    or back a new option. A mediator proposal counts at the next party turn's index."""
    mentions: dict[str, list[int]] = {}
    last: dict[tuple[str, str], object] = {}
    for turn in episode.turns:
        if turn.role == "mediator" and turn.intervention is not None:
            for topic in turn.intervention.proposal:
                mentions.setdefault(topic, []).append(turn.party_turn)
            continue
        if turn.action is None:
            continue
        for topic, stance in turn.action.stances.items():
            key = (turn.speaker, topic)
            if last.get(key) != stance:
                mentions.setdefault(topic, []).append(turn.party_turn)
            last[key] = stance
    return {t: sorted(set(v)) for t, v in mentions.items()}


async def judge_scores(
    evaluator: str, episode: Episode, scenario: Scenario, judges: Sequence[ChatModel]
) -> dict[str, MetricResult]:
    if not judges:
        raise ValueError(f"evaluator {evaluator!r} needs a judge: pass --judge-model")
    if evaluator == "outcome-judges":
        material = transcript(episode, scenario)
        line = f"Dispute: {scenario.title}"
        return {
            "consensus_judge": await level_judgement(judges, RUBRICS["consensus"], material, line),
            "litigation_risk_judge": await level_judgement(
                judges, RUBRICS["litigation_risk"], material, line
            ),
        }
    ratings = await mediator_intelligence_ratings(judges, episode, scenario)
    if isinstance(ratings, str):
        return {"mediator_intelligence": MetricResult(float("nan"), f"undefined: {ratings}")}
    return {"mediator_intelligence": mediator_intelligence(ratings)}


async def _tracker_run(
    store: Store,
    complete: Sequence[EpisodeRecord],
    tracker: str,
    judges: Sequence[ChatModel],
    judge_name: str,
) -> dict[str, dict[str, MetricResult]]:
    evaluator = f"tracker:{tracker}"
    version = f"{socrates.VERSION}.{RUBRIC_VERSION}"
    trajectories: dict[str, Trajectory] = {}
    for rec in complete:
        scenario = Scenario.model_validate(rec.scenario)
        trajectories[rec.episode_id] = await track(tracker, rec.episode, scenario, judges)
    results: dict[str, dict[str, MetricResult]] = {}
    for rec in complete:
        base = trajectories.get(rec.matched_episode_id or "")
        scores = tracker_scores(trajectories[rec.episode_id], rec.episode, base)
        traj = trajectories[rec.episode_id]
        scores["judge_calls"] = MetricResult(float(traj.calls), "judge calls for this episode")
        store.add_scores(rec.episode_id, evaluator, version, scores, judge_name)
        results[rec.episode_id] = scores
    return results


@dataclass
class ValidationReport:
    tracker: str
    judge: str
    agreement: Agreement


async def validate_judge(
    store: Store,
    hub: ModelHub,
    scenario: Scenario,
    trackers: Sequence[str],
    judge_models: Sequence[str],
    episodes: int,
    budget: int,
    mediator: str,
    first_seed: int = 0,
) -> list[ValidationReport]:
    """Run rule-party episodes (known truth) and score each tracker against the oracle."""
    played: list[Episode] = []
    for seed in range(first_seed, first_seed + episodes):
        result = await run_matched_async(
            store, scenario, Agents(mediator=mediator), seed=seed, budget=budget, hub=hub
        )
        played.append(result.episode)
    truth = [oracle(ep, scenario) for ep in played]
    judges = [hub.model(m, "judge") for m in judge_models]
    reports = []
    for name in trackers:
        got = [await track(name, ep, scenario, judges) for ep in played]
        reports.append(ValidationReport(name, ",".join(judge_models) or "-", compare(got, truth)))
    return reports
