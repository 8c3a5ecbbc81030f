"""Turns as the store writes them since schema 8: a commit's turns in one record.

The runner commits an episode's turns in groups (a rule episode whole, a long LLM episode
at least once a second). Schema 7 wrote each turn as a row of its own and shared what
repeats through the table of strings, which cost a lookup per new value and an index
entry per turn; it was the largest cost of a rule grid after the simulation itself.
Schema 8 writes each group as one row of `turn_chunks`: the turns' values, each distinct
value once (a speaker, an utterance, the repeating part of a move, a consensus vector),
then one compact list per turn naming them by position, the whole compressed. A chunk
names nothing outside itself, so it reads, or is lost, on its own.

The layout, version 1, before compression (`_MAGIC` first, then zlib of UTF-8 JSON):

    [1, [value, ...], [[index, party_turn, speaker#, role, text#, action#, action_own,
      intervention#, intervention_own, consensus#, latency_s, usage, stage, delivered,
      turn_taking], ...]]

`#` fields are positions in the value list (or null); a move's repeating part is its JSON
as `disputelab.store.rows` shares it (without the utterance when that is the turn's text),
and `_own` holds what is the turn's alone (a party's private reasoning, an utterance that
differs from the text).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from typing import Any

from disputelab.episode import Action, Intervention, Turn
from disputelab.store.rows import consensus_text, said, shared_json

_MAGIC = b"DLT1"  # disputelab turns, layout 1
_VERSION = 1
_WIDTH = 15  # fields per turn
# zlib's fastest level: a rule episode's chunk compresses to a seventh of its JSON here,
# at about a tenth of the CPU the default level takes (benchmarks/bench_store_size.py).
_LEVEL = 1


def encode_turns(turns: Sequence[Turn]) -> bytes:
    """The record of `turns` (in their order) as `turn_chunks.data` holds it."""
    values: dict[Any, int] = {}

    def at(value: Any) -> int:
        found = values.get(value)
        if found is None:
            found = values[value] = len(values)
        return found

    rows: list[list[Any]] = []
    last_consensus: object = None
    last_at: int | None = None
    for t in turns:
        text = t.text
        action_at = action_own = intervention_at = intervention_own = None
        if t.action is not None:
            action_at, action_own = _move(t.action, text, ("thought",), at)
        if t.intervention is not None:
            intervention_at, intervention_own = _move(t.intervention, text, (), at)
        consensus = t.consensus
        if consensus is None:
            consensus_at = None
        elif consensus is last_consensus:  # turns share one object while nothing moves
            consensus_at = last_at
        else:
            consensus_at = last_at = at(consensus_text(consensus))
            last_consensus = consensus
        rows.append(
            [
                t.index,
                t.party_turn,
                at(t.speaker),
                t.role,
                at(text),
                action_at,
                action_own,
                intervention_at,
                intervention_own,
                consensus_at,
                t.latency_s,
                None if t.usage is None else t.usage.to_dict(),
                t.stage,
                t.delivered,
                None if t.choice is None else t.choice.to_dict(),
            ]
        )
    body = json.dumps([_VERSION, list(values), rows], ensure_ascii=False, separators=(",", ":"))
    return _MAGIC + zlib.compress(body.encode("utf-8", "surrogatepass"), _LEVEL)


def _move(
    move: Action | Intervention, text: str, own: tuple[str, ...], at: Any
) -> tuple[int, dict[str, Any] | None]:
    """A move's repeating part (by position) and its own part (None when empty)."""
    mine: dict[str, Any] = {name: getattr(move, name) for name in own if getattr(move, name)}
    if move.utterance != text:
        mine["utterance"] = move.utterance
    return at(shared_json(move, text, own)), (mine or None)


def decode_turns(data: bytes) -> list[Turn]:
    """The turns of a record `encode_turns` made; ValueError (or TypeError, KeyError,
    IndexError) when it does not decode: the store reports that as damage."""
    if not isinstance(data, bytes) or not data.startswith(_MAGIC):
        raise ValueError("a chunk of turns that is not in a known layout")
    try:
        body = zlib.decompress(data[len(_MAGIC) :])
    except zlib.error as exc:
        raise ValueError(f"a chunk of turns that does not decompress ({exc})") from None
    parsed = json.loads(body.decode("utf-8", "surrogatepass"))
    if not (isinstance(parsed, list) and len(parsed) == 3 and parsed[0] == _VERSION):
        raise ValueError("a chunk of turns in an unknown layout")
    values, rows = parsed[1], parsed[2]
    if not (isinstance(values, list) and isinstance(rows, list)):
        raise ValueError("a chunk of turns without its values or turns")
    moves: dict[int, dict[str, Any]] = {}  # each distinct move part parsed once

    def move(i: int | None, own: dict[str, Any] | None, text: str) -> dict[str, Any] | None:
        if i is None:
            return None
        shared = moves.get(i)
        if shared is None:
            shared = moves[i] = json.loads(values[i])
        return said({**shared, **(own or {})}, text)

    turns = []
    for r in rows:
        if not (isinstance(r, list) and len(r) == _WIDTH):
            raise ValueError("a turn of a chunk with fields missing")
        text = values[r[4]]
        turns.append(
            Turn.from_dict(
                {
                    "index": r[0],
                    "party_turn": r[1],
                    "speaker": values[r[2]],
                    "role": r[3],
                    "text": text,
                    "action": move(r[5], r[6], text),
                    "intervention": move(r[7], r[8], text),
                    "consensus": None if r[9] is None else dict(json.loads(values[r[9]])),
                    "latency_s": r[10],
                    "usage": r[11],
                    "stage": r[12],
                    "delivered": r[13],
                    "turn_taking": r[14],
                }
            )
        )
    return turns
