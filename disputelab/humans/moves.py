"""Moves are validated here, in one place, for every front end: what a person typed at a
terminal, what a web form posted, and a move replayed from the log all pass through
`validate`, which checks every field against its options and bounds and says what is
wrong in one line (`MoveError`), so that the front end can ask again.

An empty answer takes the field's default, so that pressing Enter plays the move shown.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping
from types import MappingProxyType

from disputelab.errors import DisputelabError
from disputelab.humans.prompt import (
    AmountField,
    Field,
    Move,
    PickField,
    SeatPrompt,
    TextField,
    Value,
)

NONE_PICKED = "-"  # typed for "none of them", where a field may be left without a pick
_SEPARATORS = re.compile(r"[\s,;/]+")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


class MoveError(DisputelabError, ValueError):
    """An answer a field cannot take: `key` names the field, the message says why in
    one line, worded for the person who typed it."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(reason)
        self.key = key
        self.reason = reason


def asked(f: Field, values: Mapping[str, Value]) -> bool:
    """Whether `f` is asked, given the answers to the fields before it."""
    if f.needs is None:
        return True
    given = values.get(f.needs.key)
    if f.needs.values:
        picked = given if isinstance(given, tuple) else (given,) if isinstance(given, str) else ()
        return bool(picked) and picked[0] in f.needs.values
    return given is not None and given != "" and given != ()


def clean_text(text: str) -> str:
    """Text as a person meant it: control characters (a terminal's escape sequences, a
    pasted NUL) removed, line breaks and tabs kept, surrounding space stripped."""
    kept = (c for c in text if c in "\n\t" or unicodedata.category(c)[0] != "C")
    return "".join(kept).strip()


def parse(f: Field, raw: str) -> Value:
    """What a person typed into `f`, read and checked; '' takes the default."""
    if isinstance(f, TextField):
        return _text(f, clean_text(raw))
    raw = clean_text(raw)
    if isinstance(f, PickField):
        if not raw:
            return check(f, f.default)
        if raw == NONE_PICKED:
            return check(f, ())
        return check(f, tuple(p for p in _SEPARATORS.split(raw) if p))
    return _amount(f, raw)


def check(f: Field, value: object) -> Value:
    """A typed answer (a web form's JSON, a replayed move) checked against `f`."""
    if isinstance(f, TextField):
        if not isinstance(value, str):
            raise MoveError(f.key, f"{f.label}: give words, not {type(value).__name__}")
        return _text(f, clean_text(value))
    if isinstance(f, PickField):
        if isinstance(value, str):
            value = (value,)
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise MoveError(f.key, f"{f.label}: give option ids")
        return _picks(f, tuple(value))
    if value is None or value == "":
        return _amount(f, "")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MoveError(f.key, f"{f.label}: give a number")
    return _in_range(f, float(value))


def validate(prompt: SeatPrompt, answers: Mapping[str, object]) -> Move:
    """The move that `answers` (field key -> what was typed, or a typed value) make for
    `prompt`, every field checked in order; MoveError names the first that is wrong. A
    field left out takes its default; a field not asked (`Needs`) is None."""
    unknown = sorted(set(answers) - {f.key for f in prompt.fields})
    if unknown:
        raise MoveError(unknown[0], f"{unknown[0]}: not a choice of this move")
    values: dict[str, Value] = {}
    for f in prompt.fields:
        if not asked(f, values):
            values[f.key] = None
            continue
        given = answers.get(f.key, "")
        values[f.key] = parse(f, given) if isinstance(given, str) else check(f, given)
    return Move(MappingProxyType(values))


def _text(f: TextField, text: str) -> str:
    text = text or f.default
    if not text and f.required:
        raise MoveError(f.key, f"{f.label}: say something")
    if len(text) > f.max_chars:
        raise MoveError(f.key, f"{f.label}: at most {f.max_chars} characters, got {len(text)}")
    return text


def _picks(f: PickField, given: tuple[str, ...]) -> tuple[str, ...]:
    by_folded = {o.id.casefold(): o.id for o in f.options}
    chosen: list[str] = []
    for raw in given:
        found = by_folded.get(raw.strip().casefold())
        if found is None:
            shown = raw if len(raw) <= 20 else raw[:19] + "…"
            raise MoveError(
                f.key, f"{f.label}: {shown!r} is not an option; choose from {', '.join(f.ids())}"
            )
        if found not in chosen:
            chosen.append(found)
    if len(chosen) < f.min_picks:
        need = "one option" if f.min_picks == 1 else f"at least {f.min_picks} options"
        raise MoveError(f.key, f"{f.label}: choose {need} from {', '.join(f.ids())}")
    if len(chosen) > f.max_picks:
        most = "one option" if f.max_picks == 1 else f"at most {f.max_picks} options"
        raise MoveError(f.key, f"{f.label}: choose {most}, not {len(chosen)}")
    return tuple(chosen)


def _amount(f: AmountField, raw: str) -> float | None:
    if not raw:
        if f.default is not None:
            return _in_range(f, f.default)
        if f.required:
            raise MoveError(f.key, f"{f.label}: give an amount{_bounds(f)}")
        return None
    text = raw.replace(",", "").replace("_", "").lstrip("$€£¥").strip()
    if f.unit and text.endswith(f.unit):
        text = text[: -len(f.unit)].strip()
    if not _NUMBER.match(text):
        shown = raw if len(raw) <= 20 else raw[:19] + "…"
        raise MoveError(f.key, f"{f.label}: {shown!r} is not a number")
    return _in_range(f, float(text))


def _in_range(f: AmountField, value: float) -> float:
    if not math.isfinite(value):
        raise MoveError(f.key, f"{f.label}: give a finite amount")
    if (f.low is not None and value < f.low) or (f.high is not None and value > f.high):
        raise MoveError(f.key, f"{f.label}: {value:,.2f} is out of range{_bounds(f)}")
    return value


def _bounds(f: AmountField) -> str:
    if f.low is not None and f.high is not None:
        return f" (from {f.low:,.2f} to {f.high:,.2f})"
    if f.low is not None:
        return f" (at least {f.low:,.2f})"
    if f.high is not None:
        return f" (at most {f.high:,.2f})"
    return ""


def default_shown(f: Field) -> str:
    """What Enter plays, in words, for a prompt line."""
    if isinstance(f, TextField):
        return f.default or f.placeholder
    if isinstance(f, PickField):
        return ",".join(f.default) if f.default else ("none" if f.min_picks == 0 else "")
    if f.default is not None:
        return f"{f.default:,.2f}".rstrip("0").rstrip(".")
    return "" if f.required else "none"


def field_help(f: Field) -> list[str]:
    """What a field asks, its options or bounds, and how to answer: the lines `?` shows
    at a terminal, and a web form's hints."""
    lines = [f.help] if f.help else []
    if isinstance(f, PickField):
        lines += [f"  {o.id}) {o.label}" for o in f.options]
        if f.max_picks > 1:
            lines.append(
                "Type one option id, or several separated by commas: the first is the one "
                "you back, the others ones you would also accept."
            )
        else:
            lines.append("Type one option id.")
        if f.min_picks == 0:
            lines.append(f"Type {NONE_PICKED} for none.")
    elif isinstance(f, AmountField):
        unit = f" {f.unit}" if f.unit else ""
        lines.append(f"Type an amount{unit}{_bounds(f)}.")
    else:
        lines.append(f"Type your words on one line (at most {f.max_chars} characters).")
    shown = default_shown(f)
    lines.append(f"Enter alone takes: {shown}" if shown else "This needs an answer.")
    return lines
