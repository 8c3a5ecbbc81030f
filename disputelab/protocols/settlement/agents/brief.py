"""What a counsel knows before bargaining (its brief) and what it reads off the dialogue.

The clerk writes each side a brief: its own target and walk-away amount (private), the
BATNA the outcome analyst built (shared by both sides, as the paper has both counsel
bargain around b_t), the clause topics with its own ranking, and the round limit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from disputelab.agents.base import PublicTurn
from disputelab.protocols.settlement.agents.model import Batna, Side, other
from disputelab.scenario.schema import Scenario


@dataclass(frozen=True)
class Brief:
    """One side's private brief plus the shared BATNA and the table's rules."""

    side: Side
    party_id: str
    opponent_id: str
    term_id: str
    target: float
    reservation: float  # own walk-away amount
    batna: Batna
    rounds: int  # counsel turns in the whole episode (both sides)
    opens: bool  # whether this side makes the first offer
    language: str = "en"
    vulnerable: Side | None = None
    dispute_type: str = ""
    issues: tuple[str, ...] = ()
    # Clause topics: topic id -> this side's acceptable options, best first.
    rankings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)  # "topic/option" -> label
    text: str = ""  # the clerk's role brief, for model counsel

    @property
    def own_turns(self) -> int:
        """How many turns this side gets before the round limit."""
        first = 0 if self.opens else 1
        return max(1, len(range(first, self.rounds, 2)))

    def progress(self, turns_taken: int) -> float:
        return turns_taken / max(self.own_turns - 1, 1)


@dataclass(frozen=True)
class Reading:
    """The dialogue as one counsel reads it: both sides' offers and stated options, the
    latest mediator proposal, and clauses the auditor struck."""

    own: tuple[float, ...]
    theirs: tuple[float, ...]
    their_options: Mapping[str, str]
    mediator: float | None
    struck: frozenset[str]
    last_speaker: str | None
    their_clauses: tuple[str, ...] = ()


TERM_BULLET = "- "


def with_terms(utterance: str, clauses: Sequence[str]) -> str:
    """A proposal's words followed by its clauses, one bulleted line each: the clauses are
    part of what the other side hears."""
    return "\n".join([utterance, *(TERM_BULLET + c for c in clauses)])


def terms_in(text: str) -> tuple[str, ...]:
    return tuple(
        line[len(TERM_BULLET) :] for line in text.splitlines()[1:] if line.startswith(TERM_BULLET)
    )


def read(dialogue: Sequence[PublicTurn], brief: Brief) -> Reading:
    own: list[float] = []
    theirs: list[float] = []
    options: dict[str, str] = {}
    mediator: float | None = None
    struck: set[str] = set()
    last: str | None = None
    their_clauses: tuple[str, ...] = ()
    for t in dialogue:
        amount = t.offer.get(brief.term_id)
        if t.speaker == brief.party_id and amount is not None:
            own.append(amount)
        elif t.speaker == brief.opponent_id:
            if amount is not None:
                theirs.append(amount)
                their_clauses = terms_in(t.text)
            options.update({k: s.option for k, s in t.stances.items() if s.option})
        elif t.role == "mediator" and amount is not None:
            mediator = amount
        if t.speaker == "auditor":
            struck.update(
                line.removeprefix("struck: ")
                for line in t.text.splitlines()
                if line.startswith("struck: ")
            )
        if t.role == "party":
            last = t.speaker
    return Reading(
        tuple(own), tuple(theirs), options, mediator, frozenset(struck), last, their_clauses
    )


def sides(scenario: Scenario) -> dict[str, Side]:
    """The first party is the plaintiff (the payee), the second the defendant (the payer)."""
    if len(scenario.parties) != 2:
        raise ValueError(
            f"a settlement needs exactly two parties (plaintiff, defendant); "
            f"{scenario.id} has {len(scenario.parties)}"
        )
    return {scenario.parties[0].id: "plaintiff", scenario.parties[1].id: "defendant"}


def opponent_of(side: Side, ids: Mapping[str, Side]) -> str:
    return next(pid for pid, s in ids.items() if s == other(side))
