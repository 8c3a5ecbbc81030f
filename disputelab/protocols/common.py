"""Bookkeeping every protocol shares: the oracle's running consensus, the agreement read
off stated stances, and model usage charged to the episode per role."""

from __future__ import annotations

from collections.abc import Sequence

from disputelab.consensus import consensus_by_topic, topic_consensus
from disputelab.episode import Episode, Stance, Usage


def agreement(
    topic_ids: Sequence[str], stated: dict[str, dict[str, Stance]]
) -> dict[str, str | None]:
    """Per topic, the option every party backs, or None where they differ."""
    out: dict[str, str | None] = {}
    for t in topic_ids:
        options = {s[t].option if t in s else None for s in stated.values()}
        out[t] = options.pop() if len(options) == 1 else None
    return out


def update_consensus(
    previous: dict[str, float] | None,
    topic_ids: Sequence[str],
    hidden: dict[str, dict[str, Stance]],
    speaker: str,
    new: dict[str, Stance],
) -> dict[str, float]:
    """Oracle consensus after `speaker` moved, recomputing only the topics it changed."""
    old = hidden.get(speaker, {})
    hidden[speaker] = new
    if previous is None:
        return consensus_by_topic(topic_ids, list(hidden.values()))
    out = dict(previous)
    everyone = list(hidden.values())
    for t in topic_ids:
        if old.get(t) != new.get(t):
            out[t] = topic_consensus([s.get(t) for s in everyone])
    return out


def charge(episode: Episode, role: str, usage: Usage | None) -> None:
    """Add one agent call's usage to the episode's total for its role."""
    if usage is None:
        return
    total = episode.usage.setdefault(role, Usage(cost_usd=None))
    total.calls += usage.calls
    total.input_tokens += usage.input_tokens
    total.output_tokens += usage.output_tokens
