"""The `human` kind of every seat: how a protocol registers one, and how a seat that no
person can take is declared (the shared `party` seat's is in `party_kind.py`).

A protocol's folder registers the human kind of each of its own seat interfaces with
`human_kind` (a seat of one agent: a mediator, a counsel) or `human_party_kind` (a seat
of one agent per party), handing over a small adapter that builds its seat from the
seat's own view. A seat no person should take (a turn-taking predictor, the moderator
that reads a deal off the dialogue) is declared with `no_human_seat` and a reason, so
that every seat of every protocol is either open to people or says why not.

The builders here are the one place a human seat touches the whole scenario: they hand
each seat the public scenario and its own party's data, and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from disputelab.agents.base import Agent, PartyAgent, PublicScenario
from disputelab.agents.registry import AgentKind, AgentSetup, register_kind, seat_key
from disputelab.errors import DisputelabError
from disputelab.humans.seat import HUMAN
from disputelab.humans.source import MoveSource
from disputelab.scenario.schema import Party


class HumanSeatError(DisputelabError, ValueError):
    """A person's seat with nothing to host it, or a host that is not a move source."""


# Seat interfaces no person takes, with the reason: interface -> why.
_NO_HUMAN: dict[str, str] = {}


def no_human_seat(interface: str, reason: str) -> None:
    """Declare that no person takes seats of `interface`, and why."""
    _NO_HUMAN[interface] = reason


def no_human_seats() -> Mapping[str, str]:
    """Every seat interface declared closed to people, with its reason."""
    return MappingProxyType(_NO_HUMAN)


def source_for(setup: AgentSetup, key: str) -> MoveSource:
    """What hosts seat `key` of the run: HumanSeatError when nothing does."""
    host = setup.hosts.get(key)
    if host is None:
        hosted = ", ".join(sorted(setup.hosts)) or "none"
        raise HumanSeatError(
            f"seat {key} is a person's (kind {HUMAN}) and nothing hosts it (hosted seats: "
            f"{hosted}); a person plays it with `disputelab play` (from Python, "
            "`disputelab.api.play.play`)"
        )
    if not isinstance(host, MoveSource):
        raise HumanSeatError(f"the host of seat {key} has no `move` method: not a move source")
    return host


SeatBuilder = Callable[[PublicScenario, MoveSource, AgentSetup], Agent]
PartyBuilder = Callable[[PublicScenario, Party, MoveSource, AgentSetup], PartyAgent]


def human_kind(interface: str, description: str, build: SeatBuilder) -> AgentKind:
    """Register the human kind of a one-agent seat with `interface`: `build` gets the
    public scenario, the seat's move source and the setup (for the seat's settings and
    retrieved bases), and makes the seat's agent."""

    def builder(setup: AgentSetup) -> Agent:
        return build(setup.public, source_for(setup, setup.role), setup)

    return register_kind(AgentKind(interface, HUMAN, description, builder, hosted=True))


def human_party_kind(interface: str, description: str, build: PartyBuilder) -> AgentKind:
    """Register the human kind of a per-party seat with `interface`: one agent for each
    party whose seat is hosted, each made by `build` from the public scenario, that
    party's own data, its move source and the setup (`setup.role` is the seat's role;
    an adapter takes from `setup.scenario` only what is that party's own)."""

    def builder(setup: AgentSetup) -> list[PartyAgent]:
        role = setup.role or "parties"
        keys = {p.id: seat_key(role, p.id) for p in setup.scenario.parties}
        hosted = [p for p in setup.scenario.parties if keys[p.id] in setup.hosts]
        if not hosted:
            source_for(setup, keys[setup.scenario.parties[0].id])  # says nothing hosts it
        return [build(setup.public, p, source_for(setup, keys[p.id]), setup) for p in hosted]

    return register_kind(AgentKind(interface, HUMAN, description, builder, hosted=True))
