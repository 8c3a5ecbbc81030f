"""Score a staged (AgentMediation) episode: outcome and solution, per case.

Per-case values aggregate to the paper's table cells: `success` averages to SR (x100),
`satisfaction` pools the parties' five-point labels, `consensus` is the oracle's final
consensus (x100) when every party's hidden state is known, and `litigation_risk` is a
proxy from the verdicts: the share of parties who would rather go to court, counting a
hesitant party as half (x100). With an LLM judge, `disputelab evaluate --evaluator
outcome-judges` adds the paper's judged Con and LR beside these.

Solution scores compare the mediator's option-generation and final proposals with the
case's gold points of contention (ROUGE-L F1) and legal bases (recall), averaged over the
two proposals as the paper does. ROUGE-L is on CJK characters unless `rouge` asks for the
paper's jieba words ("jieba") or its words and scorer ("paper"); the explanation says which.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from disputelab.consensus import consensus_score
from disputelab.episode import SATISFACTION, Episode, Intervention, Status
from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.outcomes import (
    ROUGE_STYLES,
    RougeStyle,
    legal_basis_recall,
    likert_score,
    rouge_l_f1,
)
from disputelab.scenario.schema import Scenario

EVALUATOR = "agentmediation"
# 2: law names compared by their short form; 3: an article is read past bracketed notes
# after the title, so two articles of one regulation no longer collapse into its title.
VERSION = "3"
# Metric name -> column header in the paper's tables, in the paper's order.
OUTCOME_COLUMNS = {
    "success": "SR",
    "satisfaction": "Sat",
    "consensus": "Con",
    "litigation_risk": "LR",
}
SOLUTION_COLUMNS = {"points_rouge_l": "ROUGE-L", "legal_basis_recall": "Recall"}


def _nan(reason: str) -> MetricResult:
    return MetricResult(math.nan, f"undefined: {reason}")


def proposals(episode: Episode) -> list[Intervention]:
    """The option-generation and closure proposals, in order."""
    return [
        t.intervention
        for t in episode.turns
        if t.intervention is not None and t.stage in ("option", "closure")
    ]


def _mean(results: Sequence[MetricResult], what: str) -> MetricResult:
    values = [r.value for r in results if not math.isnan(r.value)]
    if not values:
        reasons = "; ".join(r.explanation for r in results) or "no proposals"
        return _nan(f"{what}: {reasons}")
    return MetricResult(
        sum(values) / len(values),
        f"{what}, mean over {len(values)} proposal(s)",
        {"per_proposal": [r.value for r in results]},
    )


def score_staged(
    episode: Episode, scenario: Scenario, rouge: RougeStyle = "char"
) -> dict[str, MetricResult]:
    """Outcome and solution metrics of one staged episode; `rouge` picks ROUGE-L's tokens
    (see `rouge_l_f1`)."""
    out: dict[str, MetricResult] = {}
    verdicts = [t.action.verdict for t in episode.turns if t.action and t.action.verdict]
    status = episode.outcome.status if episode.outcome else Status.INCOMPLETE
    if not verdicts:
        out["success"] = _nan(f"no verdicts (episode {status.value})")
    else:
        ok = all(v.decision == "accept" for v in verdicts)
        out["success"] = MetricResult(
            100.0 if ok else 0.0,
            f"{sum(v.decision == 'accept' for v in verdicts)} of {len(verdicts)} parties accepted",
        )
        sat = likert_score([v.satisfaction for v in verdicts])
        sat.detail["levels"] = [
            sum(1 for v in verdicts if v.satisfaction == label) for label in SATISFACTION
        ]
        out["satisfaction"] = sat
        against = sum(
            1.0 if v.decision == "reject" else 0.5 if v.decision == "uncertain" else 0.0
            for v in verdicts
        )
        risk = 100 * against / len(verdicts)
        out["litigation_risk"] = MetricResult(
            risk,
            "proxy: share of parties who would rather litigate (uncertain counts half)",
            {"level": round(risk / 25)},
        )
    last = next((t.consensus for t in reversed(episode.turns) if t.consensus), None)
    if last:
        con = 100 * consensus_score(last)
        out["consensus"] = MetricResult(
            con, "oracle consensus after closure, x100", {"level": round(con / 25)}
        )
    else:
        out["consensus"] = _nan("no oracle: some party has no known hidden state")
    out["bargaining_turns"] = MetricResult(
        float(sum(1 for t in episode.turns if t.stage == "bargaining" and t.role == "party")),
        "party turns in the bargaining stage",
    )
    moves = proposals(episode)
    legal = scenario.legal
    if legal is None or not legal.points_of_contention:
        out["points_rouge_l"] = _nan("the scenario has no gold points of contention")
    else:
        gold = "".join(legal.points_of_contention)
        out["points_rouge_l"] = _mean(
            [rouge_l_f1(m.points, gold, rouge) for m in moves],
            f"ROUGE-L F1 {ROUGE_STYLES[rouge]}",
        )
    if legal is None or not legal.legal_bases:
        out["legal_basis_recall"] = _nan("the scenario has no gold legal bases")
    else:
        out["legal_basis_recall"] = _mean(
            [legal_basis_recall(legal.legal_bases, m.bases) for m in moves], "legal-basis recall"
        )
    return out
