"""The consensus state a mediator may be shown: per topic, whether every party last
backed the same option, read off what the parties said (their stated stances), never off
their private briefs. ProMediate's social mediator plans with such a live state (its
online tracker's); this one needs no extra model call."""

from __future__ import annotations

from collections.abc import Sequence

from disputelab.agents.base import PublicScenario, PublicTurn
from disputelab.agents.prompts import texts


def latest_options(
    public: PublicScenario, dialogue: Sequence[PublicTurn]
) -> dict[str, dict[str, str]]:
    """topic id -> party id -> the option that party last said it backs."""
    out: dict[str, dict[str, str]] = {t.id: {} for t in public.topics}
    for turn in dialogue:
        if turn.role != "party":
            continue
        for topic, stance in turn.stances.items():
            if topic in out and stance.option is not None:
                out[topic][turn.speaker] = stance.option
    return out


def stated_consensus(public: PublicScenario, dialogue: Sequence[PublicTurn]) -> str:
    """One line per topic: agreed on an option, or open with each party's position."""
    x = texts(public.language)
    names = {p.id: p.name for p in public.parties}
    lines = [x["consensus_state"]]
    for topic in public.topics:
        backed = latest_options(public, dialogue)[topic.id]
        options = set(backed.values())
        if len(backed) == len(public.parties) and len(options) == 1:
            state = x["agreed"].format(option=options.pop())
        else:
            positions = ", ".join(f"{names[p.id]}: {backed.get(p.id, '-')}" for p in public.parties)
            state = x["open"].format(positions=positions)
        lines.append(f"- {topic.name}: {state}")
    return "\n".join(lines)
