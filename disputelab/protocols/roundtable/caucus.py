"""Private caucus turns: after every K-th mediator turn (`caucus: K`), the mediator meets
each party alone, and the party tells it what it would not say at the table.

A caucus turn is recorded as a system turn spoken by the party, at stage `caucus`, and
delivered only to that party and the mediator: the other parties never hear it, and it
moves neither the party-turn clock nor the party's stated stances. Only parties that can
caucus (the rule policy and those built on it) take part; the others are skipped.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from disputelab.episode import Action
from disputelab.protocols.session import MEDIATOR, Session

STAGE = "caucus"


@runtime_checkable
class CaucusParty(Protocol):
    """A party that can speak to the mediator in private."""

    party_id: str

    def caucus(self) -> Action: ...


def due(every: int, mediator_turns: int) -> bool:
    """Whether the mediator turn just taken (the `mediator_turns`-th) calls a caucus."""
    return every > 0 and mediator_turns > 0 and mediator_turns % every == 0


def hold_caucus(session: Session) -> int:
    """One private session with each party that can caucus; returns how many were held."""
    held = 0
    for agent in session.parties:
        if isinstance(agent, CaucusParty):
            session.confide(agent.party_id, agent.caucus(), (agent.party_id, MEDIATOR), STAGE)
            held += 1
    return held
