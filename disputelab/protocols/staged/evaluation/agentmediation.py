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

Sat's range: `satisfaction`'s detail["reachable"] holds the structural range of the
case's summed levels under the rule parties' verdict rule (`satisfaction_range`): over
every package, and over those no party rejects.

ROUGE-L's floor: `points_rouge_l_constant` scores each of a few fixed sentences
(`CONSTANT_POINTS`, in the case's language) against the same gold points, whatever the
mediator said; its value is the first sentence's F1 and its detail holds every
sentence's. A table shows the best sentence's mean over a row's cases beside the
mediators' ROUGE-L: a mediator below it does no better than a text that ignores the case.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from disputelab.agents.parties.satisfaction_range import satisfaction_range
from disputelab.consensus import consensus_score
from disputelab.episode import SATISFACTION, Episode, Intervention, Status, Verdict
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
# 4: points_rouge_l_constant, the constant-text floor of ROUGE-L, and Sat's reachable range.
VERSION = "4"
# Metric name -> column header in the paper's tables, in the paper's order.
OUTCOME_COLUMNS = {
    "success": "SR",
    "satisfaction": "Sat",
    "consensus": "Con",
    "litigation_risk": "LR",
}
SOLUTION_COLUMNS = {"points_rouge_l": "ROUGE-L", "legal_basis_recall": "Recall"}
CONSTANT_METRIC = "points_rouge_l_constant"
# Fixed "points of contention" that ignore the case, by language. The Chinese sentences
# follow the stock opening of the dataset's gold answers (本案的主要争议焦点为 ... 是否构成 ...,
# 以及 ...) with a generic subject, so they measure what a text gets for that template
# alone; the English ones are the same idea in English. Written for disputelab.
CONSTANT_POINTS: dict[str, tuple[str, ...]] = {
    "zh": (
        "本案的主要争议焦点为被告的行为是否构成违约，以及其是否应承担相应的法律责任。",
        "本案的主要争议焦点为被告的行为是否构成侵权，以及其应承担的赔偿责任范围如何认定。",
        "本案的主要争议焦点为某公司的行为是否构成违约或侵权，以及其是否应承担相应的赔偿责任和法律责任。",
        "本案的争议焦点为当事人之间的合同是否有效、一方是否违约以及损失赔偿数额如何确定。",
    ),
    "en": (
        "whether the defendant breached its duty or the contract, and what it owes as a result",
        "the facts of the dispute, who is liable, and the amount of compensation",
        "whether the claim is supported by the evidence and the law, and how much is due",
    ),
}


def constant_points(language: str) -> tuple[str, ...]:
    """The fixed sentences for a case's language (English for any without its own)."""
    return CONSTANT_POINTS.get(language.split("-")[0].lower(), CONSTANT_POINTS["en"])


def constant_rouge(gold: str, language: str, rouge: RougeStyle = "char") -> MetricResult:
    """ROUGE-L F1 of every constant sentence against `gold`: the value is the first's,
    `detail["per_constant"]` lists all of them in `constant_points` order."""
    scores = [rouge_l_f1(text, gold, rouge).value for text in constant_points(language)]
    return MetricResult(
        scores[0],
        f"ROUGE-L F1 {ROUGE_STYLES[rouge]} of a fixed text that ignores the case (the floor)",
        {"per_constant": scores, "language": language},
    )


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


def _satisfaction(verdicts: Sequence[Verdict], scenario: Scenario) -> MetricResult:
    """The pooled labels, with their counts per level and, where rule parties can play
    the case, the range they can reach at all (summed levels, 0-4 each)."""
    sat = likert_score([v.satisfaction for v in verdicts])
    sat.detail["levels"] = [
        sum(1 for v in verdicts if v.satisfaction == label) for label in SATISFACTION
    ]
    reach = satisfaction_range(scenario)
    if reach is not None:
        sat.detail["reachable"] = [
            reach.parties,
            reach.lowest,
            reach.highest,
            reach.unrejected_lowest,
            reach.unrejected_highest,
        ]
    return sat


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
        out["satisfaction"] = _satisfaction(verdicts, scenario)
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
        out[CONSTANT_METRIC] = _nan("the scenario has no gold points of contention")
    else:
        gold = "".join(legal.points_of_contention)
        out["points_rouge_l"] = _mean(
            [rouge_l_f1(m.points, gold, rouge) for m in moves],
            f"ROUGE-L F1 {ROUGE_STYLES[rouge]}",
        )
        out[CONSTANT_METRIC] = constant_rouge(gold, scenario.language, rouge)
    if legal is None or not legal.legal_bases:
        out["legal_basis_recall"] = _nan("the scenario has no gold legal bases")
    else:
        out["legal_basis_recall"] = _mean(
            [legal_basis_recall(legal.legal_bases, m.bases) for m in moves], "legal-basis recall"
        )
    return out
