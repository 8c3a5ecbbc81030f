"""AgentMediation's third-party judge: consensus and litigation risk of a staged
episode, each a five-level label with anchors (its Tables 20 and 21).

As in the paper, the judge reads the case background, the bargaining stage's dialogue and
the mediator's final proposal, and nothing else: not the statements, not the parties'
verdicts (which would give the answer away). The anchors keep the meaning of the paper's
levels in our own words. Several judges combine by majority, as every level judge does.
"""

from __future__ import annotations

from collections.abc import Sequence

from disputelab.episode import Episode
from disputelab.evaluation.judges import level_judgement
from disputelab.evaluation.metrics import MetricResult
from disputelab.llm.base import ChatModel
from disputelab.llm.concurrency import each
from disputelab.scenario.schema import Scenario

VERSION = "1"
EVALUATOR = "legal-judges"
CONSENSUS = "consensus_judged"
LITIGATION_RISK = "litigation_risk_judged"

CONSENSUS_RUBRIC = (
    "You are a neutral observer of a mediation. Judge how much consensus the parties had "
    "reached by the final proposal. Reason step by step, then give one label:\n"
    "- very low: little real exchange; silence, evasion or hostility; the key issues were "
    "dodged and there is nothing to negotiate from.\n"
    "- low: some willingness to listen, but the talk stays about attitudes and never gets "
    "into the concrete issues.\n"
    "- medium: first signs of agreement; positions meet on some issues or rough solutions "
    "appear, but key matters stay open and the progress is fragile.\n"
    "- high: a preliminary agreement on the main issues is taking shape; the language is "
    "concrete and constructive; a shared framework is mostly in place.\n"
    "- very high: clear agreement on the main issues; the parties work together; there is a "
    "workable way forward, ready to be written up."
)

LITIGATION_RISK_RUBRIC = (
    "You are a neutral observer of a mediation. Judge the risk that the conflict escalates, "
    "with a party going to court or other outside means. Reason step by step, then give one "
    "label:\n"
    "- very low: calm, smooth communication; the differences are minor or a first "
    "agreement is reached; hardly any need to step in.\n"
    "- low: differences remain, but the talk is open and measured and the parties clearly "
    "want to negotiate.\n"
    "- medium: clear disagreement or slow progress: vague statements, repeated small "
    "concessions, substantive issues avoided, or core demands swallowed to keep the peace; "
    "no confrontation yet, but no movement either.\n"
    "- high: frequent confrontational language; communication close to breaking down; the "
    "mediation stalls or is resisted; some party may prefer to litigate.\n"
    "- very high: emotions out of control; communication has collapsed; some party says it "
    "will go to court or take other outside action."
)


def judge_material(episode: Episode, scenario: Scenario) -> str:
    """The judge's inputs: background, bargaining dialogue, final proposal (no verdicts)."""
    names = {p.id: p.name for p in scenario.parties} | {"mediator": "Mediator"}
    bargaining = [
        f"{names.get(t.speaker, t.speaker)}: {t.text}"
        for t in episode.turns
        if t.stage == "bargaining" and t.role in ("party", "mediator")
    ]
    # The final proposal; with the closure stage ablated, the initial one stands in.
    final = next(
        (
            t.text
            for t in reversed(episode.turns)
            if t.stage in ("closure", "option") and t.role == "mediator" and t.intervention
        ),
        "",
    )
    return "\n\n".join(
        [
            f"Case background:\n{scenario.background}",
            "Bargaining dialogue:\n" + ("\n".join(bargaining) or "(no bargaining turns)"),
            f"Final mediation proposal:\n{final or '(none was made)'}",
        ]
    )


async def legal_judge_scores(
    episode: Episode, scenario: Scenario, judges: Sequence[ChatModel]
) -> dict[str, MetricResult]:
    """Judged Con and LR on 0-100 (level / 4 x 100), NaN with the reason on failure."""
    if not judges:
        raise ValueError(f"evaluator {EVALUATOR!r} needs a judge: give `judges`")
    if not any(t.stage == "closure" for t in episode.turns):
        why = MetricResult(float("nan"), "undefined: the episode has no closure stage")
        return {CONSENSUS: why, LITIGATION_RISK: why}
    material = judge_material(episode, scenario)
    title = f"Dispute: {scenario.title}"
    # Two rubrics on one material: asked together (each judge's failure is its NaN).
    consensus, risk = await each(
        lambda rubric: level_judgement(judges, rubric, material, title),
        (CONSENSUS_RUBRIC, LITIGATION_RISK_RUBRIC),
    )
    return {CONSENSUS: consensus, LITIGATION_RISK: risk}
