"""Agent kinds, by the seat interface they implement.

A protocol seats agents behind interfaces: `party`, and its own (the roundtable's
`mediator`, the staged protocol's `staged-mediator`, the settlement's counsel, ...). Each
kind a user can name (`rule`, `llm`, `hybrid`, `generic`, ...) is registered for one
interface with a builder. A protocol's seat lists
the interface it needs, so the kinds it accepts follow from what is registered here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypeVar

from disputelab.agents.base import Agent, PartyAgent, PublicScenario
from disputelab.agents.memos import AgentMemos
from disputelab.agents.settings import DEFAULT_SETTINGS, AgentSettings
from disputelab.llm.base import ChatModel
from disputelab.llm.embedding import Embeds
from disputelab.registry import Registry, UnknownPluginError
from disputelab.scenario.schema import Scenario

# The seat interface every protocol over topics seats its parties behind; a protocol's
# other interfaces are named in its own package.
PARTY = "party"


class UnknownAgentError(UnknownPluginError):
    pass


@dataclass(frozen=True)
class AgentSetup:
    """What a builder gets: the case, the episode's seed, the seat's model (None for rule
    kinds), any documents retrieved for the case (the expertise condition), the
    episode's agent settings (context window, temperatures, party style, ...), a
    model per call of the kind's `calls` that has one of its own (the rest use `model`),
    and the memos its agents share with the other episodes of the run (a fresh set when
    the caller has no run to share them with)."""

    scenario: Scenario
    seed: int
    model: ChatModel | None = None
    retrieved: tuple[str, ...] = ()
    settings: AgentSettings = DEFAULT_SETTINGS
    call_models: Mapping[str, ChatModel] = field(default_factory=lambda: MappingProxyType({}))
    memos: AgentMemos = field(default_factory=AgentMemos, compare=False, repr=False)
    # What ranks texts by similarity for kinds that `embeds` (None: their own default).
    embedder: Embeds | None = field(default=None, compare=False, repr=False)
    # The seat's role (`parties`, `mediator`, `counsel`, ...), and what hosts the people
    # in the run's seats, by seat key (`mediator`, `parties:tenant`): a human kind takes
    # its seat's move source from here (`disputelab.humans`). Empty for agents alone.
    role: str = ""
    hosts: Mapping[str, object] = field(
        default_factory=lambda: MappingProxyType({}), compare=False, repr=False
    )
    public: PublicScenario = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "public", PublicScenario.of(self.scenario))


@dataclass(frozen=True)
class AgentKind:
    """One nameable kind of agent for one interface."""

    interface: str
    name: str
    description: str
    build: Callable[[AgentSetup], Agent | Sequence[PartyAgent]]
    needs_model: bool = False
    # Plays with the seat's model when one is given and without one otherwise (a
    # remediator: templates offline, the model's rewrites with --model).
    uses_model: bool = False
    # Its agents expose their true positions (`HiddenState`), so the oracle can track
    # consensus: what an experiment's default consensus source depends on.
    hidden_state: bool = False
    # Model calls that may take a model of their own, under the sub-role `ROLE.CALL`
    # (`models: {mediator.when: M}`, `run --mediator-when-model M`); unset, the seat's.
    calls: tuple[str, ...] = ()
    # Ranks its memories by embedding similarity under motivated turn-taking, and so is
    # handed the run's embeddings (the `embeddings` role).
    embeds: bool = False
    # A person fills the seat, through what hosts it (`AgentSetup.hosts`): played by
    # `disputelab.api.play.play` (or a host of its own), never by a run or an experiment alone.
    hosted: bool = False
    # Its agents read the behaviour table (`disputelab.scenario.behaviour`) without being
    # the rule policy (a protocol's own rule agents): worlds and ablation reach them.
    behaviour: bool = False


# Keyed `interface/name`: one name may serve several interfaces (`rule` parties, a
# `rule` mediator).
AGENT_KINDS: Registry[AgentKind] = Registry("agent kind")

Builder = Callable[[AgentSetup], Agent | Sequence[PartyAgent]]
B = TypeVar("B", bound=Builder)


def register_kind(kind: AgentKind) -> AgentKind:
    return AGENT_KINDS.register(f"{kind.interface}/{kind.name}", kind)


def agent_kind(
    interface: str,
    name: str,
    description: str,
    *,
    needs_model: bool = False,
    uses_model: bool = False,
    hidden_state: bool = False,
    calls: tuple[str, ...] = (),
    embeds: bool = False,
) -> Callable[[B], B]:
    """Register the decorated builder as the kind `name` of seats with `interface`."""

    def register(build: B) -> B:
        register_kind(
            AgentKind(
                interface,
                name,
                description,
                build,
                needs_model,
                uses_model,
                hidden_state,
                calls,
                embeds,
            )
        )
        return build

    return register


def kinds_for(interface: str) -> tuple[AgentKind, ...]:
    """Every kind registered for `interface`, in registration order."""
    return tuple(k for _, k in AGENT_KINDS.items() if k.interface == interface)


def kind_names(interface: str, hosted: bool = True) -> tuple[str, ...]:
    """The kinds' names for `interface`; without `hosted`, those a person fills left out
    (what a run or an experiment can seat on its own)."""
    return tuple(k.name for k in kinds_for(interface) if hosted or not k.hosted)


def is_hosted(interface: str, name: str) -> bool:
    """Whether the kind seats a person, who needs a host to play through."""
    key = f"{interface}/{name}"
    return key in AGENT_KINDS and AGENT_KINDS.get(key).hosted


def all_kind_names(interfaces: Sequence[str]) -> tuple[str, ...]:
    """Kind names across `interfaces`, each once, in registration order."""
    return tuple(dict.fromkeys(n for i in interfaces for n in kind_names(i)))


def get_kind(interface: str, name: str) -> AgentKind:
    key = f"{interface}/{name}"
    if key not in AGENT_KINDS:
        raise UnknownAgentError(
            f"unknown {interface} kind {name!r}; available: {', '.join(kind_names(interface))}"
        )
    return AGENT_KINDS.get(key)


def needs_model(interface: str, name: str) -> bool:
    key = f"{interface}/{name}"
    return key in AGENT_KINDS and AGENT_KINDS.get(key).needs_model


def takes_model(interface: str, name: str) -> bool:
    """Whether the kind is handed the seat's model: it needs one, or uses one if given."""
    key = f"{interface}/{name}"
    return key in AGENT_KINDS and (
        AGENT_KINDS.get(key).needs_model or AGENT_KINDS.get(key).uses_model
    )


def sub_role(role: str, call: str) -> str:
    """The role one call of a seat's agent is given a model and charged under."""
    return f"{role}.{call}"


def kind_calls(interface: str, name: str) -> tuple[str, ...]:
    """The calls of a kind that may take a model of their own (none for unknown kinds)."""
    key = f"{interface}/{name}"
    return AGENT_KINDS.get(key).calls if key in AGENT_KINDS else ()


def all_sub_roles(seats: Iterable[tuple[str, str]]) -> tuple[str, ...]:
    """Every `ROLE.CALL` some registered kind offers, given (seat role, interface) pairs."""
    return tuple(
        dict.fromkeys(
            sub_role(role, call)
            for role, interface in seats
            for kind in kinds_for(interface)
            for call in kind.calls
        )
    )


def kind_embeds(interface: str, name: str) -> bool:
    """Whether agents of the kind rank texts by embeddings where the protocol asks them."""
    key = f"{interface}/{name}"
    return key in AGENT_KINDS and AGENT_KINDS.get(key).embeds


def has_hidden_state(interface: str, name: str) -> bool:
    """Whether agents of the kind expose their true positions to the oracle."""
    key = f"{interface}/{name}"
    return key in AGENT_KINDS and AGENT_KINDS.get(key).hidden_state


def reads_behaviour(interface: str, name: str) -> bool:
    """Whether agents of the kind read the behaviour table, so that a run's `behaviour`
    overrides, parameter worlds and ablations change them: the rule policy (every kind
    with hidden state plays it) or a kind registered with `behaviour=True`."""
    key = f"{interface}/{name}"
    return key in AGENT_KINDS and (
        AGENT_KINDS.get(key).hidden_state or AGENT_KINDS.get(key).behaviour
    )


def seat_key(role: str, party_id: str = "") -> str:
    """How a seat is named where one party's seat is meant: `parties:tenant`; a seat
    that is not per party is named by its role alone (`mediator`)."""
    return f"{role}:{party_id}" if party_id else role


def build_parties(
    scenario: Scenario,
    kind: str,
    seed: int,
    model: ChatModel | None = None,
    interface: str = PARTY,
    settings: AgentSettings = DEFAULT_SETTINGS,
    memos: AgentMemos | None = None,
    embedder: Embeds | None = None,
    role: str = "parties",
    hosts: Mapping[str, object] | None = None,
) -> list[PartyAgent]:
    """One agent per party, in the scenario's speaking order; `interface` is the party
    seat's (a protocol whose parties bargain over amounts seats its own kinds). `memos`
    are the run's, shared with its other episodes (default: fresh ones). `hosts` hold
    what hosts people's seats, for a human kind (`AgentSetup.hosts`)."""
    k = get_kind(interface, kind)
    if k.needs_model and model is None:
        raise UnknownAgentError(f"{kind} parties need a model: give `model` or `models.parties`")
    memos = memos if memos is not None else AgentMemos()
    setup = AgentSetup(
        scenario,
        seed,
        model,
        settings=settings,
        memos=memos,
        embedder=embedder,
        role=role,
        hosts=MappingProxyType(dict(hosts or {})),
    )
    built = k.build(setup)
    assert isinstance(built, Sequence)
    return list(built)


def build_agent(
    interface: str,
    kind: str,
    scenario: Scenario,
    seed: int = 0,
    model: ChatModel | None = None,
    retrieved: Sequence[str] = (),
    role: str = "mediator",
    settings: AgentSettings = DEFAULT_SETTINGS,
    call_models: Mapping[str, ChatModel] | None = None,
    memos: AgentMemos | None = None,
    hosts: Mapping[str, object] | None = None,
) -> Agent:
    """One agent of `kind` for a seat with `interface`; `role` names the seat in errors.
    `call_models` gives calls of the kind's `calls` a model of their own; `memos` are
    the run's (default: fresh ones); `hosts` what hosts people's seats."""
    k = get_kind(interface, kind)
    if k.needs_model and model is None:
        raise UnknownAgentError(f"{role} {kind!r} needs a model, and its seat was given none")
    own = MappingProxyType(dict(call_models or {}))
    memos = memos if memos is not None else AgentMemos()
    setup = AgentSetup(
        scenario,
        seed,
        model,
        tuple(retrieved),
        settings,
        own,
        memos,
        role=role,
        hosts=MappingProxyType(dict(hosts or {})),
    )
    built = k.build(setup)
    assert not isinstance(built, Sequence)
    return built
