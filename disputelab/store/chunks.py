"""Turns as the store writes them since schema 8: a commit's turns in one record.

The runner commits an episode's turns in groups (a rule episode whole, a long LLM episode
at least once a second). Schema 7 wrote each turn as a row of its own and shared what
repeats through the table of strings, which cost a lookup per new value and an index
entry per turn; it was the largest cost of a rule grid after the simulation itself.
Schema 8 writes each group as one row of `turn_chunks`: the turns' values, each distinct
value once (a speaker, an utterance, the repeating part of a move, a consensus vector),
then one compact list per turn naming them by position, the whole compressed. A chunk
names nothing outside itself, so it reads, or is lost, on its own.

The layout, version 1: `_MAGIC`, then zlib of (a 4-byte big-endian length, a header of
that many bytes of UTF-8 JSON, and the values' text, UTF-8, one after another):

    header: [1, [length of each value in code points, ...],
             [[index, party_turn, speaker#, role, text#, action#, action_own,
               intervention#, intervention_own, consensus#, latency_s, usage, stage,
               delivered, turn_taking], ...]]

Every value is text; `#` fields are positions in the value list (or null). A move's
repeating part is its JSON as `disputelab.store.rows` shares it (without the utterance
when that is the turn's text), and `_own` holds what is the turn's alone (a party's
private reasoning, an utterance that differs from the text). The values travel outside
the JSON because they are most of a chunk (a rule episode's utterances): escaping them
into JSON and back cost more than everything else a chunk does.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from disputelab.episode import Action, Intervention, Turn, TurnChoice, Usage
from disputelab.redact import mask_secrets
from disputelab.store.rows import consensus_text, said, shared_json

Move = TypeVar("Move", Action, Intervention)
_MAGIC = b"DLT1"  # disputelab turns, layout 1
_VERSION = 1
_WIDTH = 15  # fields per turn
# zlib's fastest level: a rule episode's chunk compresses to a seventh of its size here
# (benchmarks/bench_store_size.py), at about a quarter of the CPU the default level takes.
_LEVEL = 1


def encode_turns(turns: Sequence[Turn]) -> bytes:
    """The record of `turns` (in their order) as `turn_chunks.data` holds it."""
    values: dict[str, int] = {}  # each distinct value, by its position
    at = values.setdefault  # at(value, len(values)): its position, added if new
    rows: list[list[Any]] = []
    last_consensus: object = None
    last_at: int | None = None
    for t in turns:
        text = t.text
        action_at = action_own = intervention_at = intervention_own = None
        action = t.action
        if action is not None:
            shared = shared_json(action, text, ("thought",))
            action_at = at(shared, len(values))
            if action.utterance == text:  # a party's own part is its private reasoning
                action_own = {"thought": action.thought} if action.thought else None
            else:
                action_own = _own(action, text, ("thought",))
        if t.intervention is not None:
            shared = shared_json(t.intervention, text, ())
            intervention_at = at(shared, len(values))
            intervention_own = _own(t.intervention, text, ())
        consensus = t.consensus
        if consensus is None:
            consensus_at = None
        elif consensus is last_consensus:  # turns share one object while nothing moves
            consensus_at = last_at
        else:
            consensus_at = last_at = at(consensus_text(consensus), len(values))
            last_consensus = consensus
        rows.append(
            [
                t.index,
                t.party_turn,
                at(t.speaker, len(values)),
                t.role,
                at(text, len(values)),
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
    # A remembered secret (the API key) quoted by a model or a party is not stored.
    texts = [mask_secrets(v) for v in values]
    header = json.dumps(
        [_VERSION, [len(v) for v in texts], rows], ensure_ascii=False, separators=(",", ":")
    ).encode("utf-8", "surrogatepass")
    body = len(header).to_bytes(4, "big") + header + "".join(texts).encode("utf-8", "surrogatepass")
    return _MAGIC + zlib.compress(body, _LEVEL)


def _own(move: Action | Intervention, text: str, own: tuple[str, ...]) -> dict[str, Any] | None:
    """What of a move is the turn's alone: the fields named in `own` that are set, and
    the utterance when it differs from the turn's text; None when nothing is."""
    mine: dict[str, Any] = {
        name: mask_secrets(value) if isinstance(value, str) else value
        for name in own
        if (value := getattr(move, name))
    }
    if move.utterance != text:
        mine["utterance"] = mask_secrets(move.utterance)
    return mine or None


def unpack(data: bytes) -> tuple[list[str], list[Any]]:
    """A chunk's values and its turns' rows, as `encode_turns` laid them out; ValueError
    (or TypeError) when the record is not such a chunk."""
    if not isinstance(data, bytes) or not data.startswith(_MAGIC):
        raise ValueError("a chunk of turns that is not in a known layout")
    try:
        body = zlib.decompress(data[len(_MAGIC) :])
    except zlib.error as exc:
        raise ValueError(f"a chunk of turns that does not decompress ({exc})") from None
    size = int.from_bytes(body[:4], "big")
    parsed = json.loads(body[4 : 4 + size].decode("utf-8", "surrogatepass"))
    if not (isinstance(parsed, list) and len(parsed) == 3 and parsed[0] == _VERSION):
        raise ValueError("a chunk of turns in an unknown layout")
    lengths, rows = parsed[1], parsed[2]
    if not (isinstance(lengths, list) and isinstance(rows, list)):
        raise ValueError("a chunk of turns without its values or turns")
    text = body[4 + size :].decode("utf-8", "surrogatepass")
    if sum(lengths) != len(text):
        raise ValueError("a chunk of turns whose values are not the text it holds")
    values: list[str] = []
    at = 0
    for n in lengths:
        values.append(text[at : at + n])
        at += n
    return values, rows


def decode_turns(data: bytes) -> list[Turn]:
    """The turns of a record `encode_turns` made; ValueError (or TypeError, KeyError,
    IndexError) when it does not decode: the store reports that as damage."""
    values, rows = unpack(data)
    turns = []
    for r in rows:
        if not (isinstance(r, list) and len(r) == _WIDTH):
            raise ValueError("a turn of a chunk with fields missing")
        text = values[r[4]]
        turns.append(
            Turn(
                index=r[0],
                party_turn=r[1],
                speaker=values[r[2]],
                role=r[3],
                text=text,
                action=None if r[5] is None else _action(values[r[5]], r[6], text),
                intervention=None if r[7] is None else _intervention(values[r[7]], r[8], text),
                consensus=None if r[9] is None else dict(_parsed(values[r[9]])),
                latency_s=r[10],
                usage=Usage(**r[11]) if r[11] else None,
                stage=r[12] or "",
                delivered=r[13] or None,
                choice=TurnChoice.from_dict(r[14]) if r[14] else None,
            )
        )
    return turns


# A move's repeating part, built once as the object it reads back as, by its JSON, with
# whether it holds its own utterance. A rule run repeats a few hundred moves over
# hundreds of thousands of turns, and building each from its dict again (stances,
# signal, verdict) was most of the time a report took to read a run. Each turn gets a
# copy of the mutable parts; the memo starts over when full.
_ACTIONS: dict[str, tuple[Action, bool]] = {}
_INTERVENTIONS: dict[str, tuple[Intervention, bool]] = {}
_MOVES_LIMIT = 20_000


def _action(value: str, own: dict[str, Any] | None, text: str) -> Action:
    if own and not own.keys() <= {"thought", "utterance"}:  # a layout of another version
        return Action.from_dict(_read({**_parsed(value), **own}, text))
    p, spoken = _built(_ACTIONS, value, Action.from_dict)
    own = own or {}
    return Action(
        own.get("utterance", p.utterance if spoken else text),
        dict(p.stances),
        p.signal,
        own.get("thought", p.thought),
        p.tone,
        p.verdict,
        dict(p.offer),
        p.clauses,
        p.strategy,
    )


def _intervention(value: str, own: dict[str, Any] | None, text: str) -> Intervention:
    if own and not own.keys() <= {"utterance"}:
        return Intervention.from_dict(_read({**_parsed(value), **own}, text))
    p, spoken = _built(_INTERVENTIONS, value, Intervention.from_dict)
    return Intervention(
        (own or {}).get("utterance", p.utterance if spoken else text),
        dict(p.proposal),
        p.thought,
        p.points,
        p.bases,
        dict(p.offer),
    )


def _built(
    memo: dict[str, tuple[Move, bool]], value: str, build: Callable[[dict[str, Any]], Move]
) -> tuple[Move, bool]:
    """The move `value` reads as (built once, from then on from `memo`), and whether it
    holds its own utterance."""
    found = memo.get(value)
    if found is None:
        parsed = _parsed(value)
        found = (build(_read(dict(parsed), "")), "utterance" in parsed)
        _remember(memo, value, found)
    return found


def _read(move: dict[str, Any], text: str) -> dict[str, Any]:
    """`move` as `from_dict` reads it (`said` fills it in where it is)."""
    said(move, text)
    return move


def _remember(memo: dict[str, Any], key: str, value: Any) -> None:
    if len(memo) >= _MOVES_LIMIT:
        memo.clear()
    memo[key] = value


# The repeating parts of moves and consensus vectors, parsed, by their JSON: they repeat
# across the chunks of a run as they do within one, and reading a run parsed each again
# for every episode. Callers copy what they change; the memo starts over when full.
_PARSED: dict[str, Any] = {}
_PARSED_LIMIT = 100_000


def _parsed(text: str) -> Any:
    found = _PARSED.get(text)
    if found is None:
        if len(_PARSED) >= _PARSED_LIMIT:
            _PARSED.clear()
        found = _PARSED[text] = json.loads(text)
    return found
