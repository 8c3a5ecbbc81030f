"""What a protocol declares, and the registry that holds the protocols.

A protocol is one folder under `protocols/` whose `__init__` registers a `DisputeProtocol`
subclass instance: its name, its parameters as a pydantic model, its seats (which agent
interface each needs, and so which agent kinds fill it), whether a matched unmediated twin
is played, its default evaluators, its report layout and its episode view. The CLI, the
experiment spec, the runner and the report read these declarations; none of them tests a
protocol's name.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from disputelab.agents.base import Agent
from disputelab.agents.registry import UnknownAgentError, kind_names, needs_model, takes_model
from disputelab.episode import Episode, Outcome
from disputelab.errors import DisputelabError
from disputelab.protocols.view import EpisodeView, default_view
from disputelab.registry import Registry
from disputelab.scenario.schema import Scenario

if TYPE_CHECKING:
    from disputelab.protocols.session import Session
    from disputelab.store.sqlite import Store

NONE = "none"  # the kind that leaves an optional seat empty


class ProtocolParams(BaseModel):
    """A protocol's parameters; subclasses add typed fields with defaults and help text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    def as_played(cls, stored: dict[str, Any]) -> dict[str, Any]:
        """Parameters stored by an earlier version, as that version played them: a
        subclass drops a value a newer rule refuses because it never had any effect, so
        that the stored set validates again and can be compared on resume."""
        return stored


class ParamsError(DisputelabError, ValueError):
    """Parameters that do not fit a protocol: every problem found, one line each in
    `problems`; the message joins them into one line."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Seat:
    """A role at the table and the agent interface that fills it.

    `role` is also the usage role its model calls are charged to and the name of its
    model option (`--ROLE-model`, `models: {ROLE: ...}` in a spec). A seat with
    `used_when` is filled only when the protocol's parameters call for it (the
    roundtable's turn-taking predictor, under motivated turn-taking); `model_from` names
    the role whose model it takes when it is given none of its own.
    """

    role: str
    interface: str  # the agent interface its occupant implements
    optional: bool = False  # may be left empty with the kind `none`
    default: str = "rule"  # the kind without a model
    default_with_model: str = "llm"  # the kind when a model is given
    per_party: bool = False  # one agent per scenario party (the parties seat)
    used_when: Callable[[Any], bool] | None = None  # given the protocol's parameters
    model_from: str = ""

    def used(self, params: ProtocolParams | None) -> bool:
        return self.used_when is None or (params is not None and self.used_when(params))

    def kinds(self, hosted: bool = True) -> tuple[str, ...]:
        """Kinds that can fill this seat, `none` first when it may stay empty; without
        `hosted`, the kinds a person fills (`human`) left out."""
        return ((NONE,) if self.optional else ()) + kind_names(self.interface, hosted)

    def needs_model(self, kind: str) -> bool:
        return needs_model(self.interface, kind)

    def takes_model(self, kind: str) -> bool:
        """Whether `kind` is handed this seat's model when one is given."""
        return takes_model(self.interface, kind)


@dataclass(frozen=True)
class ReportLayout:
    """How reports show this protocol's runs (its tables are `experiment_tables`)."""

    metrics_title: str = "metrics"
    # The scores whose condition effects the ablation table follows, as
    # "evaluator:metric"; empty follows every score. Binary ones are tested with McNemar.
    effect_metrics: tuple[str, ...] = ()
    binary_metrics: tuple[str, ...] = ()
    # Mediator kinds the worlds table measures the run's other mediators against, the
    # first the run played (a protocol that compares methods, not conditions).
    reference_mediators: tuple[str, ...] = ()


class DisputeProtocol(ABC):
    """One way of running a dispute: who sits at the table, who speaks when, when it ends."""

    name: ClassVar[str]
    summary: ClassVar[str]
    Params: ClassVar[type[ProtocolParams]] = ProtocolParams
    seats: ClassVar[tuple[Seat, ...]]
    # Play an unmediated episode with the same scenario, condition and seed beside every
    # mediated one (consensus gain needs it).
    plays_twin: ClassVar[bool] = False
    evaluators: ClassVar[tuple[str, ...]] = ()
    report: ClassVar[ReportLayout] = ReportLayout()
    # Whether the expertise condition applies: the mediator is handed retrieved bases.
    uses_retrieval: ClassVar[bool] = False
    # Whether a party turn that states no stance keeps the party's earlier stances.
    keeps_silent_stances: ClassVar[bool] = False
    # The listener whose view each non-party seat is handed (seat role -> listener), so a
    # person in that seat is told it after every turn; a seat left out hears at its moves.
    heard_as: ClassVar[Mapping[str, str]] = {}
    # Judged evaluators an experiment runs on this protocol's episodes whenever it has a
    # judge model (the staged protocol's judged Con and LR).
    judged_evaluators: ClassVar[tuple[str, ...]] = ()
    # The parameter that bounds a session's length, and what it counts: what a run's
    # `budget` (`--budget N`) sets, whatever the protocol calls it.
    turn_budget: ClassVar[str] = ""
    turn_budget_unit: ClassVar[str] = "turns"
    # Behaviour-table rows this protocol's agents alone read, by name prefix (the
    # settlement's `settlement.`): what a condition or world moves for another protocol
    # leaves them out (`behaviour_rows`).
    own_behaviour: ClassVar[tuple[str, ...]] = ()

    def params(self, values: Mapping[str, Any] | None = None) -> ProtocolParams:
        """Validated parameters; unknown or out-of-range ones raise ParamsError."""
        try:
            return self.Params.model_validate(dict(values or {}))
        except ValidationError as exc:
            raise ParamsError([self._problem(e) for e in exc.errors(include_url=False)]) from None

    def _problem(self, e: Any) -> str:
        where = ".".join(str(x) for x in e["loc"]) or "params"
        msg = str(e["msg"]).replace("Value error, ", "")
        if e["type"] == "extra_forbidden":
            known = ", ".join(self.Params.model_fields) or "none"
            msg = f"not a parameter of the {self.name} protocol (its parameters: {known})"
        return f"{where}: {msg}"

    def seat(self, role: str) -> Seat:
        for s in self.seats:
            if s.role == role:
                return s
        raise KeyError(role)

    @property
    def party_seat(self) -> Seat:
        return next(s for s in self.seats if s.per_party)

    @property
    def mediator_seat(self) -> Seat | None:
        """The seat `--mediator` fills: the first one that is not the parties'. Further
        seats (a turn-taking predictor, say) take their kind from their defaults."""
        return next((s for s in self.seats if not s.per_party), None)

    def check_seat(self, role: str, kind: str) -> None:
        """Raise UnknownAgentError when `kind` cannot fill this protocol's `role` seat."""
        allowed = self.seat(role).kinds()
        if kind not in allowed:
            raise UnknownAgentError(
                f"the {self.name} protocol takes {role} {' or '.join(allowed)}, not {kind!r}"
            )

    def resource_problems(
        self, params: ProtocolParams, mediators: Sequence[str], store_dir: Path | None
    ) -> list[str]:
        """What the run needs that is not there, said before anything is played: files
        or saved sets the parameters name (for `mediators`), looked up under the store
        at `store_dir`. None by default."""
        return []

    def scenario_problem(self, scenario: Scenario) -> str | None:
        """Why this protocol cannot play `scenario`, or None when it can. The topic
        protocols need topics; a price-only scenario (numeric terms alone) is for a
        protocol that bargains over amounts."""
        if not scenario.topics:
            return (
                f"the {self.name} protocol negotiates over topics and scenario {scenario.id} "
                "has none (only numeric terms); choose a protocol that bargains over amounts"
            )
        return None

    def max_calls(self, params: ProtocolParams, n_parties: int) -> dict[str, int]:
        """An upper bound on one episode's first-attempt model calls per seat role, were
        every seat played by a model (re-asks and retries come on top)."""
        return {}

    def embeds(self, params: ProtocolParams | None) -> bool:
        """Whether, under `params`, party kinds that can (`AgentKind.embeds`) rank texts
        by embeddings, and so use the run's `embeddings` model."""
        return False

    def experiment_tables(self, store: Store, run_id: str, config: Mapping[str, Any]) -> str:
        """An experiment's tables in markdown. This default is the generic layout (one
        row per condition and seat kind); a protocol with tables of its own overrides it
        and imports them here, when a report is made, since tables need scipy."""
        from disputelab.tables.generic import experiment_markdown

        return experiment_markdown(store, run_id, dict(config))

    def details(self, episode: Episode) -> list[tuple[str, str]]:
        """Extra lines `disputelab run` prints under an episode: (heading, text) pairs."""
        return []

    def episode_view(self, episode: Episode) -> EpisodeView:
        """What the visual report shows of an episode beyond its transcript: private
        thoughts and notes per turn, the stage headings, panels and charts. The default
        covers what every turn carries; a protocol adds what only it records."""
        return default_view(episode, self.details(episode))

    @abstractmethod
    async def play(
        self, session: Session, seated: Mapping[str, Agent | None], params: ProtocolParams
    ) -> Outcome:
        """Play one episode through `session` with the agents `seated` per non-party
        role (None for an empty optional seat); return how it ended."""


PROTOCOLS: Registry[DisputeProtocol] = Registry("protocol")
DEFAULT_PROTOCOL = "roundtable"


def register_protocol(protocol: DisputeProtocol, replace: bool = False) -> DisputeProtocol:
    return PROTOCOLS.register(protocol.name, protocol, replace)


P = TypeVar("P", bound=type[DisputeProtocol])


def protocol(cls: P) -> P:
    """Register the decorated protocol class (one instance of it) under its `name`."""
    register_protocol(cls())
    return cls


def get_protocol(name: str) -> DisputeProtocol:
    return PROTOCOLS.get(name)


def behaviour_rows(protocol: str, names: Iterable[str]) -> tuple[str, ...]:
    """`names` less the behaviour rows another protocol's agents alone read (its
    `own_behaviour`), so that a condition's ablation, a sensitivity design and a world
    played under `protocol` set and vary only what its agents can read."""
    others = tuple(
        prefix for n, p in PROTOCOLS.items() if n != protocol for prefix in p.own_behaviour
    )
    return tuple(x for x in names if not others or not x.startswith(others))


def retrieval_protocols() -> Sequence[str]:
    return [n for n, p in PROTOCOLS.items() if p.uses_retrieval]


def mediator_kinds() -> tuple[str, ...]:
    """Every kind any protocol's mediator seat (the one `--mediator` fills) takes, each
    once, for help and errors; a further seat's kinds (a detector's) are not listed, nor
    a person's (`human`), which only a host can seat."""
    seats = (p.mediator_seat for _, p in PROTOCOLS.items())
    return tuple(dict.fromkeys(k for s in seats if s is not None for k in s.kinds(False)))


def party_kinds() -> tuple[str, ...]:
    """Every kind any protocol's party seat takes, each once (for help); a person's
    seat (`human`), which a run cannot fill on its own, is left out, as above."""
    kinds = (k for _, p in PROTOCOLS.items() for k in p.party_seat.kinds(False))
    return tuple(dict.fromkeys(kinds))
