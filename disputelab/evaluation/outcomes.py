"""Outcome metrics of AgentMediation, SettleAgent and the socially-aware remediator, as
pure functions. Each returns a MetricResult; undefined cases are NaN with the reason,
where the released code would crash, return a sentinel or silently score 0."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

from disputelab.evaluation.metrics import MetricResult
from disputelab.legal.citations import chinese_number, normalize_legal_basis

__all__ = ["chinese_number", "normalize_legal_basis"]  # re-exported for older callers

Verdict = Literal["accept", "uncertain", "reject"]

# The five-point scale shared by satisfaction, consensus and litigation risk, scored 0-4.
LIKERT: dict[str, int] = {
    "very low": 0,
    "low": 1,
    "medium": 2,
    "high": 3,
    "very high": 4,
    "非常低": 0,
    "很低": 0,
    "低": 1,
    "中等": 2,
    "中": 2,
    "高": 3,
    "非常高": 4,
    "很高": 4,
}


def _nan(reason: str, **detail: object) -> MetricResult:
    return MetricResult(math.nan, f"undefined: {reason}", dict(detail))


# ---- AgentMediation (AgentMediation paper) --------------------------------------------------
def success_rate(verdicts_per_case: Sequence[Sequence[Verdict]]) -> MetricResult:
    """SR = cases where *every* party accepts / all cases x 100."""
    cases = [v for v in verdicts_per_case if v]
    if not cases:
        return _nan("no cases with verdicts")
    ok = sum(all(x == "accept" for x in v) for v in cases)
    return MetricResult(
        100 * ok / len(cases),
        f"{ok} of {len(cases)} cases accepted by all",
        {"succeeded": ok, "cases": len(cases)},
    )


def likert_score(labels: Sequence[str | None]) -> MetricResult:
    """(1/4) x (sum c_i (i-1) / sum c_i) x 100, pooled over all responses.

    Unknown or missing labels are left out and counted in the detail; the released code
    scored them 0, which drags the mean down silently.
    """
    known = [LIKERT[x.strip().lower()] for x in labels if x and x.strip().lower() in LIKERT]
    unknown = len(labels) - len(known)
    if not known:
        return _nan("no label on the five-point scale", unknown=unknown)
    value = sum(known) / len(known) / 4 * 100
    return MetricResult(
        value,
        f"mean of {len(known)} labels on 0-4, as a percentage",
        {"n": len(known), "unknown": unknown},
    )


class _Tokens:
    """ROUGE tokens: each CJK character on its own, other words whole, lower-cased."""

    pattern = re.compile(r"[\u3400-\u9fff]|[a-z0-9]+")

    def tokenize(self, text: str) -> list[str]:
        return self.pattern.findall(text.lower())


@cache
def _rouge() -> Any:
    """The scorer, built on first use: rouge-score imports nltk, which takes seconds."""
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], tokenizer=_Tokens())


def rouge_l_f1(hypothesis: str, reference: str) -> MetricResult:
    """ROUGE-L F1 (rouge-score), on CJK characters and words."""
    if not reference.strip():
        return _nan("empty reference")
    if not hypothesis.strip():
        return MetricResult(0.0, "empty hypothesis")
    score = _rouge().score(reference, hypothesis)["rougeL"]
    return MetricResult(
        score.fmeasure, "ROUGE-L F1", {"precision": score.precision, "recall": score.recall}
    )


def legal_basis_recall(reference: Sequence[str], cited: Sequence[str]) -> MetricResult:
    """Share of the reference legal bases the cited ones cover, after normalisation."""
    gold = {normalize_legal_basis(g) for g in reference if g.strip()}
    if not gold:
        return _nan("no reference legal bases")
    got = {normalize_legal_basis(e) for e in cited if e.strip()}
    hits = gold & got
    return MetricResult(
        len(hits) / len(gold),
        f"{len(hits)} of {len(gold)} bases cited",
        {"matched": sorted(hits), "missed": sorted(gold - got)},
    )


# ---- SettleAgent (SettleAgent paper) --------------------------------------------------------
def settlement_rate(settled: Sequence[bool]) -> MetricResult:
    if not settled:
        return _nan("no cases")
    return MetricResult(sum(settled) / len(settled), f"{sum(settled)} of {len(settled)} settled")


def accuracy_at(
    amounts: Sequence[float | None],
    references: Sequence[float],
    settled: Sequence[bool],
    tau: float,
) -> MetricResult:
    """Acc@tau over *settled* cases: |agreed - reference| / reference <= tau, x 100.

    Cases with a zero reference are left out (the relative error is undefined), as are
    settled cases whose amount could not be read; both are counted in the detail.
    """
    hits = total = 0
    zero_ref = unreadable = 0
    for a, ref, ok in zip(amounts, references, settled, strict=True):
        if not ok:
            continue
        if ref == 0:
            zero_ref += 1
            continue
        if a is None:
            unreadable += 1
            continue
        total += 1
        hits += abs(a - ref) / abs(ref) <= tau + 1e-12
    detail = {"hits": hits, "scored": total, "zero_reference": zero_ref, "unreadable": unreadable}
    if total == 0:
        return _nan("no settled case with a usable amount", **detail)
    return MetricResult(
        100 * hits / total,
        f"{hits} of {total} settled cases within {tau:.0%} of the reference",
        detail,
    )


def unconditional_accuracy(sr: MetricResult, acc: MetricResult) -> MetricResult:
    """SR x Acc@tau: accuracy over all cases, so rare-but-accurate settlers do not win."""
    if not (sr.defined and acc.defined):
        return _nan("SR or Acc undefined")
    return MetricResult(sr.value * acc.value, "SR x Acc@tau")


# ---- Socially-aware remediator (remediator paper) -------------------------------------------
RELATION = {"deepening": 1, "no change": 0, "weakening": -1, "not involved": 0}


def remediation_reward(
    price: float | None,
    buyer_start: float,
    seller_start: float,
    deal: bool,
    trust: str,
    relation: str,
    weights: tuple[float, float, float, float] = (0.7, 0.1, 0.1, 0.1),
) -> MetricResult:
    """R = a*v_price + b*b_deal + g*d_trust + e*d_bus (Eq. 2).

    v_price is the price scaled to [0, 1] between the buyer's and the seller's opening
    prices (clipped), and 0 without a deal; b_deal is +1 or -1; trust and relation
    changes map deepening/no change/weakening/not involved to +1/0/-1/0.
    """
    if seller_start == buyer_start:
        return _nan("the opening prices are equal, so the price scale is empty")
    if deal and price is None:
        return _nan("a deal without a readable price")
    t, r = trust.strip().lower(), relation.strip().lower()
    if t not in RELATION or r not in RELATION:
        return _nan(f"unknown relation label {trust!r} or {relation!r}")
    v = 0.0
    if deal and price is not None:
        v = min(1.0, max(0.0, (price - buyer_start) / (seller_start - buyer_start)))
    a, b, g, e = weights
    value = a * v + b * (1 if deal else -1) + g * RELATION[t] + e * RELATION[r]
    return MetricResult(
        value,
        "reward R (Eq. 2)",
        {"v_price": v, "deal": deal, "trust": RELATION[t], "relation": RELATION[r]},
    )


def deal_rate(deals: Sequence[bool]) -> MetricResult:
    if not deals:
        return _nan("no negotiations")
    return MetricResult(100 * sum(deals) / len(deals), f"{sum(deals)} of {len(deals)} deals")
