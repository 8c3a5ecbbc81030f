"""Who speaks next under motivated turn-taking (Inner Thoughts, as ProMediate runs it).

The rules, as pure functions:

- `boosted`: a thought's motivation grows by 1% per party turn since its party last
  spoke, clipped to [1, 5] and rounded to one decimal (ProMediate's post-processing).
- `selects`: a party selects its best new thought unconditionally when the turn was
  predicted for it, when the floor is open to anyone and the rating reaches its
  `im_threshold`, or, when the turn was predicted for someone else, when it reaches its
  `interrupt_threshold`.
- `choose`: the speaker is the party with the highest selected motivation, never the
  previous party speaker; when nobody selects, each eligible party's most salient thought
  competes on motivation instead (the fallback).

Decisions where ProMediate's code is ambiguous or broken (its spec, sections 3.3-3.5):
- No party takes two party turns in a row, even with a mediator turn between them
  (ProMediate only bars the very last speaker, so a party could answer the mediator
  right after itself). With two parties the order therefore alternates.
- With no thought at all anywhere, ProMediate's `max()` raises; here the party silent
  longest speaks, with rule "fallback" and NaN motivation.
- An unknown prediction counts as "anyone", once (ProMediate asks again on broadcast).
- A rating that failed is NaN: it never selects, and loses every comparison.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from disputelab.episode import SelectionRule, Thought

ANYONE = "anyone"
SILENCE_BOOST = 1.01
LOW, HIGH = 1.0, 5.0


def boosted(raw: float, silent_turns: int, factor: float = SILENCE_BOOST) -> float:
    """`raw` after the silence boost, clipped to [1, 5], one decimal; NaN stays NaN."""
    if math.isnan(raw):
        return raw
    return round(min(HIGH, max(LOW, raw * factor ** max(0, silent_turns))), 1)


def selects(
    rating: float, party: str, predicted: str, im_threshold: float, interrupt_threshold: float
) -> SelectionRule | None:
    """Why `party` would take the floor with a thought rated `rating`, or None."""
    if math.isnan(rating):
        return None
    if predicted == party:
        return "predicted"
    if predicted == ANYONE:
        return "self-selected" if rating >= im_threshold else None
    return "interrupted" if rating >= interrupt_threshold else None


@dataclass(frozen=True)
class Choice:
    speaker: str
    thought: Thought | None
    rule: SelectionRule
    selected: dict[str, float]


def _key(t: Thought) -> float:
    return -math.inf if math.isnan(t.rating) else t.rating


def choose(
    new: Mapping[str, Sequence[Thought]],
    salient: Mapping[str, Thought | None],
    predicted: str,
    thresholds: Mapping[str, tuple[float, float]],
    eligible: Sequence[str],
) -> Choice:
    """The next speaker among `eligible` parties; ties go to the earlier in `eligible`
    (the caller lists them longest silent first).

    `new` holds each party's new thoughts (boosted), `salient` each party's most salient
    reservoir thought (boosted), `thresholds` each party's (im, interrupt) thresholds.
    """
    selected: dict[str, tuple[Thought, SelectionRule]] = {}
    for pid in eligible:
        thoughts = new.get(pid) or ()
        if not thoughts:
            continue
        best = max(thoughts, key=_key)
        im, interrupt = thresholds[pid]
        rule = selects(best.rating, pid, predicted, im, interrupt)
        if rule is not None:
            selected[pid] = (best, rule)
    ratings = {pid: t.rating for pid, (t, _) in selected.items()}
    if selected:
        pid = max(selected, key=lambda p: _key(selected[p][0]))
        thought, rule = selected[pid]
        return Choice(pid, thought, rule, ratings)
    fallback = {pid: salient.get(pid) for pid in eligible if salient.get(pid) is not None}
    if fallback:
        pid = max(fallback, key=lambda p: _key(fallback[p]))  # type: ignore[arg-type]
        return Choice(pid, fallback[pid], "fallback", ratings)
    return Choice(eligible[0], None, "fallback", ratings)
