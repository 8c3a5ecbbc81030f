"""The staged protocol's evaluators, registered by name.

- `agentmediation`: the protocol's own success, satisfaction and solution scores.
- `points-rouge`, `points-bertscore`: the points of contention against the case's gold.
- `legal-judges`: AgentMediation's judged consensus and litigation risk, on the paper's
  inputs (bargaining dialogue and final proposal) and anchors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.outcomes import ROUGE_STYLES, RougeStyle, warm_rouge
from disputelab.evaluation.registry import (
    EpisodeToScore,
    Evaluator,
    ScoringContext,
    register_evaluator,
)
from disputelab.protocols.staged.evaluation import agentmediation, bertscore, legal_judges


async def _agentmediation(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
    return agentmediation.score_staged(item.episode, item.scenario)


async def _points_rouge(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
    style = ctx.options.get("rouge", "char")
    if style not in ROUGE_STYLES:
        raise ValueError(f"unknown ROUGE-L style {style!r}; available: {', '.join(ROUGE_STYLES)}")
    if item.scenario.legal is None:
        why = "undefined: not a legal case (no gold points of contention)"
        return {"points_rouge_l": MetricResult(float("nan"), why)}
    scores = agentmediation.score_staged(item.episode, item.scenario, cast(RougeStyle, style))
    constant = agentmediation.CONSTANT_METRIC
    return {"points_rouge_l": scores["points_rouge_l"], constant: scores[constant]}


register_evaluator(
    Evaluator(
        agentmediation.EVALUATOR,
        agentmediation.VERSION,
        "AgentMediation's success, satisfaction and solution scores",
        _agentmediation,
        on_demand=False,
        warm_up=warm_rouge,
    )
)


register_evaluator(
    Evaluator(
        "points-rouge",
        "2",
        "points-of-contention ROUGE-L of legal episodes in the tokenisation of --rouge "
        "(char, jieba, or paper: the released code's words and scorer), and its "
        "constant-text floor",
        _points_rouge,
        stored_as="points-rouge:{rouge}",
        warm_up=warm_rouge,
    )
)


async def _legal_judges(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
    return await legal_judges.legal_judge_scores(item.episode, item.scenario, ctx.judges)


register_evaluator(
    Evaluator(
        legal_judges.EVALUATOR,
        legal_judges.VERSION,
        "AgentMediation's judged Con and LR (Tables 20-21 anchors) on the bargaining "
        "dialogue and the final proposal, without the verdicts",
        _legal_judges,
        needs_judge=True,
    )
)


def _bertscore_unavailable(options: Mapping[str, str]) -> str | None:
    if not options.get("bert_model"):
        return (
            f"needs bert_model NAME ({bertscore.PAPER_MODEL} for the paper's setting, or a "
            "model directory)"
        )
    why = bertscore.bertscore_available()
    return f"cannot run here: {why}" if why else None


async def _points_bertscore(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
    model = ctx.options.get("bert_model", "")
    if not model:
        raise ValueError(
            f"evaluator {bertscore.EVALUATOR!r} needs a model: give `bert_model` "
            f"({bertscore.PAPER_MODEL} for the paper's setting, or a model directory)"
        )
    return {bertscore.METRIC: bertscore.points_bertscore(item.episode, item.scenario, model)}


register_evaluator(
    Evaluator(
        bertscore.EVALUATOR,
        bertscore.VERSION,
        "points-of-contention BERTScore F1 of legal episodes (AgentMediation Table 7) with "
        "the model of --bert-model (the bertscore extra; nothing is downloaded)",
        _points_bertscore,
        stored_as="points-bertscore:{bert_model}",
        after_run=True,
        unavailable=_bertscore_unavailable,
    )
)
