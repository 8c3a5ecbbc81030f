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

# The five-point scale shared by satisfaction, consensus and litigation risk, scored 0-4:
# the paper's English labels, AgentMediation's Chinese ones (很低/较低/中等/较高/很高, in its
# satisfaction, consensus and risk prompts) and the plain Chinese our own parties speak.
LIKERT: dict[str, int] = {
    "very low": 0,
    "low": 1,
    "medium": 2,
    "high": 3,
    "very high": 4,
    "很低": 0,
    "非常低": 0,
    "较低": 1,
    "低": 1,
    "中等": 2,
    "中": 2,
    "较高": 3,
    "高": 3,
    "很高": 4,
    "非常高": 4,
}


class UnknownLabelError(ValueError):
    """A label that is not on the five-point scale; the message names it."""


def likert_level(label: str | None) -> int:
    """The 0-4 level of a five-point label, case and surrounding space ignored.

    An unknown or missing label is an error naming it: the released code scored it 0,
    which drags the mean down without a word."""
    if label is None or not label.strip():
        raise UnknownLabelError(f"missing five-point label ({label!r})")
    level = LIKERT.get(label.strip().lower())
    if level is None:
        raise UnknownLabelError(
            f"unknown five-point label {label!r}: expected one of {', '.join(LIKERT)}"
        )
    return level


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

    Every label must be on the scale (see `likert_level`); one that is not raises
    UnknownLabelError rather than being left out or scored 0.
    """
    levels = [likert_level(x) for x in labels]
    if not levels:
        return _nan("no labels")
    value = sum(levels) / len(levels) / 4 * 100
    return MetricResult(
        value, f"mean of {len(levels)} labels on 0-4, as a percentage", {"n": len(levels)}
    )


RougeStyle = Literal["char", "jieba", "paper"]
# What each style scores, for the metric's explanation. The paper's released code segments
# both texts with jieba and scores them with the `rouge` package (1.0.1), whose ROUGE-L
# splits sentences at '.', counts each distinct word once and takes the union of the
# per-sentence LCS words: "jieba" takes only its tokens, "paper" its scorer too.
ROUGE_STYLES: dict[str, str] = {
    "char": "on CJK characters (other words whole, lower-cased)",
    "jieba": "on jieba words, as the paper segments them",
    "paper": "on jieba words, with the paper's scorer (distinct words, union LCS over "
    "'.'-split sentences)",
}


class _CharTokens:
    """Each CJK character on its own, other words whole, lower-cased; punctuation dropped."""

    pattern = re.compile(r"[\u3400-\u9fff]|[a-z0-9]+")

    def tokenize(self, text: str) -> list[str]:
        return self.pattern.findall(text.lower())


@cache
def _jieba() -> Any:
    """jieba, loaded on first use and quiet: its dictionary takes a second to build."""
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def jieba_words(text: str) -> list[str]:
    """The paper's tokens: jieba's words joined by spaces and split on whitespace, so
    whitespace goes and punctuation stays a word; case is kept."""
    words: list[str] = " ".join(_jieba().lcut(text)).split()
    return words


class _JiebaTokens:
    def tokenize(self, text: str) -> list[str]:
        return jieba_words(text)


@cache
def _rouge(style: str) -> Any:
    """The scorer, built on first use: rouge-score imports nltk, which takes seconds."""
    from rouge_score import rouge_scorer

    tokens = _CharTokens() if style == "char" else _JiebaTokens()
    return rouge_scorer.RougeScorer(["rougeL"], tokenizer=tokens)


def warm_rouge() -> None:
    """Build the ROUGE scorers and load jieba's dictionary, which take seconds the first
    time (rouge-score imports nltk)."""
    for style in ROUGE_STYLES:
        if style != "paper":
            _rouge(style)
    jieba_words("预热")


def _lcs_words(ref: Sequence[str], hyp: Sequence[str]) -> set[str]:
    """The distinct words on one longest common subsequence, traced back from the end. On
    a tie the trace steps back in the hypothesis, as the `rouge` package's does: which LCS
    is traced changes how many distinct words it holds."""
    table = [[0] * (len(hyp) + 1) for _ in range(len(ref) + 1)]
    for i, r in enumerate(ref, 1):
        row, above = table[i], table[i - 1]
        for j, h in enumerate(hyp, 1):
            row[j] = above[j - 1] + 1 if r == h else max(above[j], row[j - 1])
    words: set[str] = set()
    i, j = len(ref), len(hyp)
    while i and j:
        if ref[i - 1] == hyp[j - 1]:
            words.add(ref[i - 1])
            i, j = i - 1, j - 1
        elif table[i - 1][j] > table[i][j - 1]:
            i -= 1
        else:
            j -= 1
    return words


def _sentences(text: str) -> list[list[str]]:
    """The paper's scorer's input: jieba words joined by spaces, cut into sentences at '.'
    (so a decimal point splits too), each sentence's words split on single spaces."""
    joined = " ".join(jieba_words(text))
    return [" ".join(part.split()).split(" ") for part in joined.split(".") if part]


def paper_rouge_l(hypothesis: str, reference: str) -> tuple[float, float, float]:
    """(P, R, F1) of the released code's ROUGE-L (summary level, distinct words).

    R = |U| / m and P = |U| / n, where m and n count the distinct words of the reference
    and of the hypothesis and U is the union, over reference and hypothesis sentences, of
    the words on their LCS. The package adds 1e-8 to F1's denominator, so it scores a text
    against itself 0.999999995; here that is 1.
    """
    ref, hyp = _sentences(reference), _sentences(hypothesis)
    m = len({w for s in ref for w in s})
    n = len({w for s in hyp for w in s})
    if not m or not n:
        return 0.0, 0.0, 0.0
    union: set[str] = set()
    for r in ref:
        for h in hyp:
            union |= _lcs_words(r, h)
    p, rec = len(union) / n, len(union) / m
    return p, rec, (2 * p * rec / (p + rec) if p + rec else 0.0)


def rouge_l_f1(hypothesis: str, reference: str, style: RougeStyle = "char") -> MetricResult:
    """ROUGE-L F1 of a hypothesis against a reference, tokenised as `style` says.

    "char" (the default) and "jieba" are rouge-score's ROUGE-L on CJK characters or on the
    paper's jieba words; "paper" also takes the paper's scorer (see `paper_rouge_l`). The
    explanation names the style, since the three are not on one scale.
    """
    if style not in ROUGE_STYLES:
        raise ValueError(
            f"unknown ROUGE-L style {style!r}: expected one of {', '.join(ROUGE_STYLES)}"
        )
    what = f"ROUGE-L F1 {ROUGE_STYLES[style]}"
    if not reference.strip():
        return _nan(f"empty reference ({what})")
    if not hypothesis.strip():
        return MetricResult(0.0, f"{what}; empty hypothesis", {"style": style})
    if style == "paper":
        p, r, f = paper_rouge_l(hypothesis, reference)
    else:
        score = _rouge(style).score(reference, hypothesis)["rougeL"]
        p, r, f = score.precision, score.recall, score.fmeasure
    return MetricResult(f, what, {"precision": p, "recall": r, "style": style})


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

    The denominator is the settled cases, as in SettleAgent. A settled case whose amount
    could not be read counts as a miss: it settled, and nothing shows it settled near the
    reference. Cases with a zero reference are left out (the relative error is
    undefined). Both are counted in the detail.
    """
    hits = total = 0
    zero_ref = unreadable = 0
    for a, ref, ok in zip(amounts, references, settled, strict=True):
        if not ok:
            continue
        if ref == 0:
            zero_ref += 1
            continue
        total += 1
        if a is None:
            unreadable += 1
            continue
        hits += abs(a - ref) / abs(ref) <= tau + 1e-12
    detail = {"hits": hits, "scored": total, "zero_reference": zero_ref, "unreadable": unreadable}
    if total == 0:
        return _nan("no settled case with a non-zero reference", **detail)
    return MetricResult(
        100 * hits / total,
        f"{hits} of {total} settled cases within {tau:.0%} of the reference"
        + (f" ({unreadable} with an unreadable amount, counted as misses)" if unreadable else ""),
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
