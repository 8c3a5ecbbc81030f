"""A turn's move split into the part that repeats across turns and the part that is its
own, with the encodings the store writes and reads back.

A rule episode's moves repeat (the same stances, signal and tone turn after turn), so
what repeats is encoded once per value and remembered, and a chunk of turns (see
`disputelab.store.chunks`) holds each such value once; what is a turn's own (a party's
private reasoning, an utterance other than the turn's text) is kept with the turn.
Stores of schema 7 held the same split in a turn's row, the repeating part in the table
of strings; `said` reads those back too.
"""

from __future__ import annotations

import json
import re
from array import array
from dataclasses import fields
from typing import Any, get_type_hints

from disputelab.episode import Action, Intervention

# The repeating part of moves and consensus vectors, already encoded, by value: most turns
# repeat one seen before, and encoding it again was a third of a rule turn's store CPU.
_ENCODED: dict[Any, str] = {}
_ENCODED_LIMIT = 100_000
_MOVE_FIELDS: dict[tuple[type, tuple[str, ...]], tuple[tuple[str, bool], ...]] = {}
_NUMERIC = re.compile(r"\b(int|float|complex|bool|Any|object|Decimal)\b")


def shared_json(move: Action | Intervention, text: str, own: tuple[str, ...]) -> str:
    """The JSON of what repeats across turns in a move: all of it but its utterance (the
    turn's text holds that) and the fields named in `own`; remembered by value."""
    key = _action_key(move) if own == ("thought",) else _move_key(move, own)
    try:
        shared = None if key is None else _ENCODED.get(key)
    except TypeError:  # a field that does not hash: encode it every time
        key, shared = None, None
    if shared is None:
        d = unsaid(move.to_dict(), text) or {}
        for name in (*own, "utterance"):
            d.pop(name, None)
        shared = dumps_or_none(d) or "{}"
        if key is not None:
            _remember(key, shared)
    return shared


# The fields of an Action as `_action_key` knows them; another layout takes `_move_key`.
_ACTION_LAYOUT = (
    *("utterance", "stances", "signal", "thought"),
    *("tone", "verdict", "offer", "clauses", "strategy"),
)
_ACTION_KNOWN = tuple(f.name for f in fields(Action)) == _ACTION_LAYOUT


def _action_key(move: Action | Intervention) -> tuple[Any, ...] | None:
    """`_move_key(move, ("thought",))` for a party's move, in a third of the time: stances
    (options and acceptable sets: text), signal, tone, verdict (text) and clauses hold no
    numbers; an offer and a strategy do, so a move with either is not memoised."""
    if not (_ACTION_KNOWN and type(move) is Action):
        return _move_key(move, ("thought",))
    if move.offer or move.strategy is not None:
        return None
    return (Action, tuple(move.stances.items()), move.signal, move.tone, move.verdict, move.clauses)


def _move_key(move: Action | Intervention, own: tuple[str, ...]) -> tuple[Any, ...] | None:
    """Every field of a move but its utterance and `own` ones, dicts as item tuples; None
    when a field that may hold numbers holds some: numbers compare equal where their JSON
    differs (1, 1.0 and True; 0.0 and -0.0), and the memo must never hand one value
    another's encoding."""
    kind = type(move)
    plan = _MOVE_FIELDS.get((kind, own))
    if plan is None:
        plan = _MOVE_FIELDS[(kind, own)] = _fields_plan(kind, (*own, "utterance"))
    key: list[Any] = [kind]
    for name, numeric in plan:
        value = getattr(move, name)
        if numeric:
            if value:
                return None
            value = repr(value)  # {}, None, 0.0 and -0.0 encode differently
        elif isinstance(value, dict):
            value = tuple(value.items())
        key.append(value)
    return tuple(key)


def _fields_plan(kind: type, skip: tuple[str, ...]) -> tuple[tuple[str, bool], ...]:
    """A move type's fields but `skip`, each with whether its declared type may hold a
    number (an unknown type may)."""
    try:
        hints = {name: str(hint) for name, hint in get_type_hints(kind).items()}
    except (NameError, TypeError):
        hints = {}
    return tuple(
        (f.name, f.name not in hints or bool(_NUMERIC.search(hints[f.name])))
        for f in fields(kind)
        if f.name not in skip
    )


def consensus_text(consensus: dict[str, float]) -> str:
    """A consensus vector's JSON, by the exact bits of its values (see `_move_key`)."""
    values = tuple(consensus.values())
    if not all(type(v) is float for v in values):
        return dumps_or_none(consensus) or "{}"
    key = (tuple(consensus), array("d", values).tobytes())
    text = _ENCODED.get(key)
    if text is None:
        text = dumps_or_none(consensus) or "{}"
        _remember(key, text)
    return text


def _remember(key: Any, text: str) -> None:
    if len(_ENCODED) >= _ENCODED_LIMIT:
        _ENCODED.clear()
    _ENCODED[key] = text


def unsaid(move: dict[str, Any] | None, text: str) -> dict[str, Any] | None:
    """A move as stored: without its utterance when that is the turn's text, which the
    turn row holds already (the utterance was a third of a rule episode's bytes), and
    each stance as a pair [option, acceptable] rather than an object with both names."""
    if move is None:
        return None
    out = {k: v for k, v in move.items() if not (k == "utterance" and v == text)}
    if "stances" in out:
        out["stances"] = {t: [s["option"], s["acceptable"]] for t, s in out["stances"].items()}
    return out


def said(move: dict[str, Any] | None, text: str) -> dict[str, Any] | None:
    """A stored move as `Action.from_dict` reads it: its utterance and stance objects
    back (rows written before either was compacted carry their own)."""
    if move is None:
        return None
    move.setdefault("utterance", text)
    stances = move.get("stances")
    if stances:
        move["stances"] = {
            t: {"option": s[0], "acceptable": s[1]} if isinstance(s, list) else s
            for t, s in stances.items()
        }
    return move


def dumps_or_none(value: Any) -> str | None:
    # No spaces after separators: a tenth of a stored turn's JSON was blanks.
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def loads_or_none(text: str | None) -> Any:
    return None if text is None else json.loads(text)
