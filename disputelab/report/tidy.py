"""A run as tidy tables, one observation a row: its turns (who spoke, a person or an
agent, when and how long it took) and its actions (each structured part of a move in a
row of its own: a stance on a topic, an option accepted, an amount offered, a clause,
a verdict), ready for pandas, R or a spreadsheet without unpacking JSON."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from disputelab.episode import Action, Turn
from disputelab.store.records import EpisodeRecord
from disputelab.store.sqlite import Store

TURN_COLUMNS = (
    "run_id", "episode_id", "index", "party_turn", "stage", "speaker", "role", "seat",
    "participant", "text", "signal", "tone", "latency_s", "input_tokens", "output_tokens",
)  # fmt: skip
ACTION_COLUMNS = ("run_id", "episode_id", "index", "speaker", "part", "key", "value")


def seat_of(agents: Mapping[str, Any], turn: Turn) -> tuple[str, str]:
    """Who filled the speaker's seat: its kind (`human`, `rule`, `llm`, ...) and, for a
    person, their pseudonymous id. A party's own cast (`parties:ID`) comes before its
    seat's (`parties`)."""
    keys = [f"{r}:{turn.speaker}" for r in ("parties", "party")] + [turn.role, turn.speaker]
    for key in keys:
        if key in agents:
            return str(agents[key]), str(agents.get(f"{key}_participant", ""))
    return str(agents.get("parties", "")) if turn.role == "party" else "", ""


def turn_row(rec: EpisodeRecord, turn: Turn) -> dict[str, Any]:
    seat, participant = seat_of(rec.episode.agents, turn)
    action = turn.action
    return {
        "run_id": rec.run_id,
        "episode_id": rec.episode_id,
        "index": turn.index,
        "party_turn": turn.party_turn,
        "stage": turn.stage,
        "speaker": turn.speaker,
        "role": turn.role,
        "seat": seat,
        "participant": participant,
        "text": turn.text,
        "signal": action.signal.value if action else "",
        "tone": action.tone if action else "",
        "latency_s": turn.latency_s,
        "input_tokens": turn.usage.input_tokens if turn.usage else 0,
        "output_tokens": turn.usage.output_tokens if turn.usage else 0,
    }


def action_parts(action: Action) -> Iterator[tuple[str, str, str]]:
    """Each structured part of a move as (part, key, value), values as text."""
    for topic, stance in action.stances.items():
        yield "stance", topic, "" if stance.option is None else stance.option
        for option in stance.acceptable:
            yield "acceptable", topic, option
    for term, amount in action.offer.items():
        yield "offer", term, repr(amount)
    for n, clause in enumerate(action.clauses):
        yield "clause", str(n), clause
    if action.verdict is not None:
        for key, value in action.verdict.to_dict().items():
            yield "verdict", str(key), str(value)
    if action.strategy is not None:
        yield "strategy", "assertiveness", repr(action.strategy[0])
        yield "strategy", "cooperativeness", repr(action.strategy[1])


def run_tables(store: Store, run_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The run's turn rows and action rows, episode by episode, in turn order."""
    turns: list[dict[str, Any]] = []
    actions: list[dict[str, Any]] = []
    for episode_id in store.episode_ids(run_id):
        rec = store.load_episode(episode_id)
        for turn in rec.episode.turns:
            turns.append(turn_row(rec, turn))
            if turn.action is None:
                continue
            where = (rec.run_id, rec.episode_id, turn.index, turn.speaker)
            for part in action_parts(turn.action):
                actions.append(dict(zip(ACTION_COLUMNS, (*where, *part), strict=True)))
    return turns, actions
