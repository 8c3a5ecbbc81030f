"""The evaluators every protocol over topics shares, registered by name.

- `oracle`, `self-report`, `topic-localized`, `per-turn`: consensus trackers, scored with
  the SoCRATES metrics; the last two need a judge.
- `outcome-judges`, `mediator-intelligence`: judged consensus and litigation risk, and
  ProMediate's mediator-intelligence ratings.
"""

from __future__ import annotations

from collections.abc import Sequence

from disputelab.episode import Episode
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
from disputelab.evaluation.promediate import mediator_intelligence
from disputelab.evaluation.registry import (
    EpisodeToScore,
    Evaluator,
    ScoringContext,
    register_evaluator,
)
from disputelab.evaluation.trackers import (
    LLM_TRACKERS,
    RUBRIC_VERSION,
    TRACKERS,
    Trajectory,
    track,
)
from disputelab.llm.base import ChatModel
from disputelab.llm.concurrency import each
from disputelab.scenario.schema import Scenario


def tracker_scores(
    traj: Trajectory, episode: Episode, baseline: Trajectory | None
) -> dict[str, MetricResult]:
    """Final consensus and the SoCRATES metrics on a tracker's trajectory."""
    s = traj.overall()
    if traj.failure or not s:
        why = MetricResult(float("nan"), _no_trajectory(traj, episode))
        return {"final_consensus": why} | (
            {"topics_agreed_by_label": why} if traj.label_agreement else {}
        )
    out = {"final_consensus": MetricResult(s[-1], f"tracker consensus after turn {len(s) - 1}")}
    if traj.label_agreement:
        out["topics_agreed_by_label"] = label_agreement_score(traj)
    if episode.agents.get("mediator", "none") != "none":
        out |= _timeliness_and_effectiveness(s, episode.intervention_positions())
        base = baseline.overall() if baseline else []
        out["consensus_gain"] = (
            consensus_gain(s[-1], base[-1])
            if base and base[-1] == base[-1]
            else MetricResult(float("nan"), "undefined: no matched baseline scored")
        )
    return out


def label_agreement_score(traj: Trajectory) -> MetricResult:
    """The share of topics the judge ends with every party on one and the same option
    label (`labels_agree`; with several judges, the mean of their verdicts)."""
    final = {t: v[-1] for t, v in traj.label_agreement.items() if v}
    if not final:
        return MetricResult(float("nan"), "undefined: no turn was tracked")
    agreed = sorted(t for t, v in final.items() if v == 1.0)
    share = sum(final.values()) / len(final)
    named = f" ({', '.join(agreed)})" if agreed else ""
    labels = {t: v[-1] for t, v in traj.stances.items() if v}
    return MetricResult(
        share,
        f"{len(agreed)} of {len(final)} topics end with every party on the same option"
        f"{named}, by the judge's option labels",
        {"final_stances": labels} if labels else {},
    )


def _no_trajectory(traj: Trajectory, episode: Episode) -> str:
    """Why a tracker gave no consensus to score: it failed, the dialogue is empty, or the
    case has no topics to agree on (a bilateral deal, a settlement's single sum)."""
    if traj.failure:
        return f"undefined: {traj.failure}"
    if not traj.by_topic:
        return "undefined: the case has no topics whose consensus a tracker could follow"
    return "undefined: empty dialogue" if not episode.turns else "undefined: no turn was tracked"


def _timeliness_and_effectiveness(
    s: Sequence[float], positions: Sequence[int]
) -> dict[str, MetricResult]:
    """IT and IE on the defined states only. A tracker such as self-report is undefined
    until every party has spoken: those leading states are dropped (filling them with 0
    would invent a disagreement nobody expressed), positions shift with them, and an
    intervention made before the tracker had any value is left out, with the reason."""
    lead = next((i for i, v in enumerate(s) if v == v), len(s))
    rest = s[lead:]
    if any(v != v for v in rest):
        why = MetricResult(float("nan"), "undefined: the tracker lost its value mid-dialogue")
        return {"intervention_timeliness": why, "intervention_effectiveness": why}
    early = [k for k in positions if k < lead]
    shifted = [k - lead for k in positions if k >= lead]
    it = intervention_timeliness(rest, shifted)
    ie = intervention_effectiveness(rest, shifted)
    if lead:
        note = f"; the first {lead} state(s) were undefined and dropped"
        if early:
            note += f", and {len(early)} intervention(s) before them left out"
        it = MetricResult(it.value, it.explanation + note, {**it.detail, "dropped": lead})
        ie = MetricResult(
            ie.value, ie.explanation + note, {**ie.detail, "dropped": lead, "left_out": early}
        )
    return {"intervention_timeliness": it, "intervention_effectiveness": ie}


async def judge_scores(
    evaluator: str, episode: Episode, scenario: Scenario, judges: Sequence[ChatModel]
) -> dict[str, MetricResult]:
    if not judges:
        raise ValueError(f"evaluator {evaluator!r} needs a judge: give `judges`")
    if evaluator == "outcome-judges":
        material = transcript(episode, scenario)
        line = f"Dispute: {scenario.title}"
        # Two rubrics on one transcript: asked together (each judge's failure is its NaN).
        consensus, risk = await each(
            lambda rubric: level_judgement(judges, RUBRICS[rubric], material, line),
            ("consensus", "litigation_risk"),
        )
        return {"consensus_judge": consensus, "litigation_risk_judge": risk}
    ratings = await mediator_intelligence_ratings(judges, episode, scenario)
    if isinstance(ratings, str):
        return {"mediator_intelligence": MetricResult(float("nan"), f"undefined: {ratings}")}
    return {"mediator_intelligence": mediator_intelligence(ratings)}


async def trajectory(
    tracker: str, episode: Episode, key: str, scenario: Scenario, ctx: ScoringContext
) -> Trajectory:
    """A tracker's trajectory of an episode, judged once per scoring pass."""
    memo_key = ("trajectory", tracker, key or id(episode))
    if memo_key not in ctx.memo:
        ctx.memo[memo_key] = await track(tracker, episode, scenario, ctx.judges)
    result: Trajectory = ctx.memo[memo_key]
    return result


# 2: IT and IE drop a tracker's undefined leading states instead of counting them as 0.
TRACKER_VERSION = "2"


def _tracker_evaluator(name: str) -> Evaluator:
    async def score(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
        traj = await trajectory(name, item.episode, item.episode_id, item.scenario, ctx)
        base = None
        if item.baseline is not None:
            key = item.baseline_id or ""
            base = await trajectory(name, item.baseline, key, item.scenario, ctx)
        scores = tracker_scores(traj, item.episode, base)
        final = scores["final_consensus"]
        # The trajectory itself, for the report's charts (JSON: NaN becomes null).
        by_topic = {t: [None if v != v else v for v in vs] for t, vs in traj.by_topic.items()}
        scores["final_consensus"] = MetricResult(
            final.value, final.explanation, {**final.detail, "by_topic": by_topic}
        )
        # Counted as the usage line counts: calls to the model, cache hits apart.
        scores["judge_calls"] = MetricResult(
            float(traj.calls),
            f"judge calls to the model for this episode ({traj.cached} more answered from "
            "the cache)",
        )
        return scores

    return Evaluator(
        name,
        f"{TRACKER_VERSION}.{RUBRIC_VERSION}",
        f"{name} consensus tracker, scored with the SoCRATES metrics",
        score,
        needs_judge=name in LLM_TRACKERS,
        stored_as=f"tracker:{name}",
    )


def _judged(name: str) -> Evaluator:
    async def score(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
        return await judge_scores(name, item.episode, item.scenario, ctx.judges)

    what = {
        "outcome-judges": "judged consensus and litigation risk (AgentMediation's anchors)",
        "mediator-intelligence": "ProMediate's mediator-intelligence ratings",
    }[name]
    return Evaluator(name, JUDGE_VERSION, what, score, needs_judge=True)


for _name in TRACKERS:
    register_evaluator(_tracker_evaluator(_name))
register_evaluator(_judged("outcome-judges"))
register_evaluator(_judged("mediator-intelligence"))
