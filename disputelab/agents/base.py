"""The interfaces every agent implements, and what each is allowed to see.

Visibility is enforced by construction: a mediator is built from a `PublicScenario`, which
has no preferences, weights, fallbacks or personas, and every agent reads the dialogue as
`PublicTurn`s, which carry no private thoughts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple, Protocol, runtime_checkable

from disputelab.episode import Action, Intervention, Role, Signal, Stance, Tone, Turn, Usage
from disputelab.scenario.schema import Fact, Scenario, Topic


@dataclass(frozen=True, slots=True)
class PublicParty:
    id: str
    name: str
    role: str


@dataclass(frozen=True, slots=True)
class PublicCase:
    """The legal file a mediator may read: the dispute type, brief and established facts.

    The case's gold points of contention and legal bases are left out on purpose: they
    are what the mediator's proposals are scored against.
    """

    dispute_type: str
    brief: str
    facts: tuple[Fact, ...]


@dataclass(frozen=True, slots=True)
class PublicScenario:
    """What everyone at the table knows: the shared background, the topics, who is there."""

    id: str
    title: str
    language: str
    background: str
    history: str
    topics: tuple[Topic, ...]
    parties: tuple[PublicParty, ...]
    case: PublicCase | None = None

    @staticmethod
    def of(scenario: Scenario) -> PublicScenario:
        legal = scenario.legal
        return PublicScenario(
            id=scenario.id,
            title=scenario.title,
            language=scenario.language,
            background=scenario.background,
            history=scenario.history,
            topics=tuple(scenario.topics),
            parties=tuple(PublicParty(p.id, p.name, p.role) for p in scenario.parties),
            case=PublicCase(legal.dispute_type, legal.brief, tuple(legal.facts))
            if legal is not None
            else None,
        )


class PublicTurn(NamedTuple):
    """A turn as the others at the table perceive it: words and stated positions only."""

    turn_index: int  # position in the whole dialogue (`index` is taken by tuple)
    party_turn: int
    speaker: str
    role: Role
    text: str
    stances: Mapping[str, Stance] = MappingProxyType({})
    signal: Signal | None = None
    tone: Tone = "neutral"
    proposal: Mapping[str, str] = MappingProxyType({})
    offer: Mapping[str, float] = MappingProxyType({})  # amounts named for numeric terms

    @staticmethod
    def of(turn: Turn) -> PublicTurn:
        a, m = turn.action, turn.intervention
        offer = a.offer if a is not None else m.offer if m is not None else None
        # Built with tuple.__new__ (the fields in order), skipping the keyword-argument
        # constructor: every turn of every episode is made public once.
        return _new_tuple(
            PublicTurn,
            (
                turn.index,
                turn.party_turn,
                turn.speaker,
                turn.role,
                turn.text,
                MappingProxyType(a.stances) if a else _EMPTY,
                a.signal if a else None,
                a.tone if a else "neutral",
                MappingProxyType(m.proposal) if m else _EMPTY,
                MappingProxyType(offer) if offer else _EMPTY,
            ),
        )


# An empty read-only mapping: nobody holds the dict behind it, so it can be shared.
_EMPTY: Mapping[str, Any] = MappingProxyType({})
_new_tuple = tuple.__new__


class TurnContext(NamedTuple):
    """The protocol's clock, handed to agents so concession can follow the budget."""

    party_turn: int  # party turns completed so far
    budget: int  # party-turn budget
    n_parties: int


class UsageReporter:
    """What model calls an agent made since the session last asked, so a protocol can
    charge them to the agent's seat. Rule agents never call a model and report None."""

    _pending_usage: Usage | None = None

    def report_usage(self, usage: Usage | None) -> None:
        self._pending_usage = usage

    def take_usage(self) -> Usage | None:
        """The usage of the agent's latest move, once; None when it called no model."""
        usage, self._pending_usage = self._pending_usage, None
        return usage


@runtime_checkable
class Agent(Protocol):
    """Anything seated by a protocol: it reports the model usage of its latest move."""

    def take_usage(self) -> Usage | None: ...


@runtime_checkable
class PartyAgent(Agent, Protocol):
    party_id: str

    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        """Take one turn: the whole typed action."""
        ...


@runtime_checkable
class HiddenState(Protocol):
    """A party whose true position is known: the source of the oracle."""

    def hidden_stances(self) -> dict[str, Stance]: ...


@runtime_checkable
class Hears(Protocol):
    """A seat told the dialogue as it has heard it after every turn, not only when it is
    asked to move: a person's seat, whose page shows the others speaking as they do."""

    def hear(self, dialogue: Sequence[PublicTurn]) -> None: ...


@runtime_checkable
class GivesVerdict(Protocol):
    """A party that can answer a final proposal with a verdict (accept, uncertain or
    reject), as at the staged protocol's closure."""

    async def verdict(
        self, dialogue: Sequence[PublicTurn], proposal: Mapping[str, str], ctx: TurnContext
    ) -> Action:
        """Accept, hesitate or reject `proposal`: an action whose `verdict` is set."""
        ...


@runtime_checkable
class AdoptsStrategy(Protocol):
    """A party whose strategy can move mid-session (the adaptive strategy update)."""

    def adopt(self, point: tuple[float, float]) -> None:
        """Play on from `point` (assertiveness, cooperativeness), each 0-10."""
        ...


@runtime_checkable
class MediatorAgent(Agent, Protocol):
    name: str

    async def consider(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext
    ) -> Intervention | None:
        """Called after each party turn: intervene (return what to say) or stay silent."""
        ...


@runtime_checkable
class StagedMediator(Agent, Protocol):
    """A mediator that leads the staged protocol: it opens, proposes, guides each
    bargaining round and closes with a final proposal. Proposals carry a package, the
    points of contention and the legal bases cited."""

    name: str

    async def open(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Intervention: ...

    async def propose(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, final: bool
    ) -> Intervention: ...

    async def guide(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Intervention: ...
