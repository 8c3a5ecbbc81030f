"""What a person at a seat is shown and asked: the `SeatPrompt`, its fields, and the
`Move` that answers it.

A prompt holds only what the seat's view allows: the seat's own brief, the dialogue as
it was delivered to that seat, and the choices of this move with their options, bounds
and defaults. Everything is plain, immutable data, so that any front end (the terminal,
a web page) can show it and send the answers back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

# What a field's answer is once read: a text, picked option ids (the first is the one
# backed), an amount, or nothing (a field not asked, an amount left out).
Value = str | tuple[str, ...] | float | None


@dataclass(frozen=True)
class SeatRef:
    """Which seat a prompt is for. `key` names it as a run does (`mediator`,
    `parties:tenant`); `role` is the protocol's seat role; `party_id` is set for a
    party's seat; `name` is how the others at the table call its occupant."""

    key: str
    role: str
    name: str
    party_id: str = ""


@dataclass(frozen=True)
class Line:
    """One turn of the dialogue as the seat received it."""

    index: int  # position in the whole dialogue
    speaker: str  # a party id, `mediator`, or a system speaker (clerk, auditor, ...)
    name: str  # how the seat's prompt names the speaker
    role: str  # party, mediator or system
    text: str  # what the seat heard (a rewrite, where one was delivered to it)
    mine: bool = False  # said from this seat


@dataclass(frozen=True)
class Option:
    id: str
    label: str


@dataclass(frozen=True)
class Needs:
    """A field asked only when an earlier one (`key`) was answered with one of `values`,
    or, with no values, with anything at all (a non-empty text, a pick, an amount)."""

    key: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class TextField:
    """Words to say or write. An empty answer takes `default`; where that is empty too,
    the field is left empty when not `required` (`placeholder` says what then happens)."""

    key: str
    label: str
    default: str = ""
    required: bool = False
    max_chars: int = 2000
    placeholder: str = ""
    help: str = ""
    needs: Needs | None = None


@dataclass(frozen=True)
class PickField:
    """Options to choose from, by id: between `min_picks` and `max_picks` of them, the
    first named being the one backed (a stance's option) and the rest its companions
    (the other options it would accept). An empty answer takes `default`."""

    key: str
    label: str
    options: tuple[Option, ...]
    default: tuple[str, ...] = ()
    min_picks: int = 1
    max_picks: int = 1
    help: str = ""
    needs: Needs | None = None

    def ids(self) -> tuple[str, ...]:
        return tuple(o.id for o in self.options)


@dataclass(frozen=True)
class AmountField:
    """A number (a price, a settlement sum) from `low` to `high` where they are set. An
    empty answer takes `default`; with none, an answer is needed unless not `required`."""

    key: str
    label: str
    low: float | None = None
    high: float | None = None
    default: float | None = None
    unit: str = ""
    required: bool = True
    help: str = ""
    needs: Needs | None = None


Field = TextField | PickField | AmountField


@dataclass(frozen=True)
class SeatPrompt:
    """One move asked of a person: who they are, what they know, what they choose."""

    seat: SeatRef
    ask: str  # what is asked now, in a few words ("your turn", "your verdict")
    brief: str  # the seat's private brief
    transcript: tuple[Line, ...]  # the dialogue as delivered to the seat
    fields: tuple[Field, ...]
    turn: int = 0  # party turns completed so far
    budget: int = 0  # the protocol's party-turn clock, where it has one (0: none)

    def field(self, key: str) -> Field:
        for f in self.fields:
            if f.key == key:
                return f
        raise KeyError(key)

    @property
    def key(self) -> str:
        """What tells one prompt from another in a replay: the seat, the question, and
        how much of the dialogue it had heard."""
        return f"{self.seat.key}|{self.ask}|{len(self.transcript)}"


@dataclass(frozen=True)
class Move:
    """A validated answer to a prompt: one value per field (None for a field not asked).
    Made by `disputelab.humans.moves.validate`, never by hand."""

    values: Mapping[str, Value] = field(default_factory=lambda: MappingProxyType({}))

    def text(self, key: str) -> str:
        v = self.values.get(key)
        return v if isinstance(v, str) else ""

    def picks(self, key: str) -> tuple[str, ...]:
        v = self.values.get(key)
        return v if isinstance(v, tuple) else ()

    def pick(self, key: str) -> str | None:
        chosen = self.picks(key)
        return chosen[0] if chosen else None

    def amount(self, key: str) -> float | None:
        v = self.values.get(key)
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.values.items()}
