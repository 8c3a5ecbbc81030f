"""Who plays each seat: the cast of a run or of an experiment's cells, and the one set of
rules that resolves it from what the user named (kinds and models by role).

A run and an experiment name their cast in different words (`--mediator rule --model M`,
`mediators: [rule]` with `models: {mediator: M}`), but the rules are the same and live
here: a kind must be one the seat takes, a kind that needs a model must get one, and a
call's own model (`mediator.when`) must be one some kind of the seat makes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from disputelab.agents.registry import kind_calls, kind_embeds, sub_role
from disputelab.errors import Problem
from disputelab.protocols.base import (
    NONE,
    DisputeProtocol,
    ProtocolParams,
    Seat,
    mediator_kinds,
)
from disputelab.redact import redact
from disputelab.scenario.schema import Scenario

RULE = "rule"  # the model name of a role played without a model
JUDGE = "judge"  # a role no seat has, which evaluators and trackers use
WRITER = "writer"  # the role that rewrites scenarios for conditions a model writes
MEDIATOR = "mediator"  # what `--mediator-model` and `models: {mediator: M}` fill
# The role whose model embeds texts for parties that rank memories by salience (LLM
# parties under motivated turn-taking): an endpoint, or one of the in-process embedders.
EMBEDDINGS = "embeddings"
IN_PROCESS = "local"  # as an embeddings model: all-MiniLM-L6-v2, run in this process
LEXICAL = "lexical"  # hashed bag-of-words vectors: no model at all
IN_PROCESS_EMBEDDINGS = (IN_PROCESS, LEXICAL)


def calls_endpoint(role: str, model: str) -> bool:
    """Whether `model` in `role` is a model to open (not `rule`, nor an in-process
    embedder, which `local` names in the embeddings role)."""
    return model != RULE and not (role == EMBEDDINGS and model in IN_PROCESS_EMBEDDINGS)


@dataclass(frozen=True)
class Cast:
    """Who plays each seat: an agent kind per role and a model per role.

    Roles are the protocol's seat roles (`parties`, `mediator`, `counsel`, ...) plus
    `judge`, which no seat has but evaluators use. A sub-role `ROLE.CALL` (`mediator.when`)
    gives one call of the seat's agent a model of its own, for kinds that offer the call;
    without one, the call uses the seat's model and is charged to the seat.
    """

    kinds: Mapping[str, str] = field(default_factory=lambda: {"parties": RULE})
    models: Mapping[str, str] = field(default_factory=dict)
    # The backbone these models are, on an experiment's model axis ('' without one):
    # stored with the episode's agents, so results group by it.
    backbone: str = ""
    # Who fills a person's seat, by seat key (`parties:tenant`, `mediator`): a
    # pseudonymous participant id, stored with the episode's agents.
    participants: Mapping[str, str] = field(default_factory=dict)

    def kind(self, role: str, default: str = NONE) -> str:
        return self.kinds.get(role, default)

    def for_protocol(self, protocol: DisputeProtocol) -> Cast:
        """This cast with a model for every seat that borrows another role's model
        (`Seat.model_from`) and has none of its own, when that role's agents use a model:
        rule parties given `--model` still get the rule predictor, not a model's."""
        models = dict(self.models)
        by_role = {s.role: s for s in protocol.seats}
        for seat in protocol.seats:
            source = by_role.get(seat.model_from)
            if source is None or seat.model_from not in models or seat.role in models:
                continue
            if source.needs_model(self.seat_kind(source)):
                models[seat.role] = models[seat.model_from]
        return Cast(self.kinds, models, self.backbone, self.participants)

    def seat_kind(self, seat: Seat) -> str:
        """The kind in `seat`: as cast, else the seat's default with or without a model."""
        if seat.role in self.kinds:
            return self.kinds[seat.role]
        return seat.default_with_model if self.model(seat.role) != RULE else seat.default

    def model(self, role: str) -> str:
        return self.models.get(role, RULE)

    def party_kinds(self, seat: Seat) -> dict[str, str]:
        """Party id -> kind, for the parties of a per-party `seat` cast apart from the
        seat's own kind (`kinds["parties:tenant"] = "human"`)."""
        prefix = f"{seat.role}:"
        return {k[len(prefix) :]: v for k, v in self.kinds.items() if k.startswith(prefix)}

    def call_models(self, seat: Seat, kind: str) -> dict[str, str]:
        """Call -> model for the calls of `kind` in `seat` that have a model of their own."""
        if self.model(seat.role) == RULE:
            return {}  # a seat played without a model asks none of its calls of one
        own = {c: self.model(sub_role(seat.role, c)) for c in kind_calls(seat.interface, kind)}
        return {c: m for c, m in own.items() if m != RULE}

    def with_kind(self, role: str, kind: str) -> Cast:
        return Cast({**self.kinds, role: kind}, self.models, self.backbone, self.participants)

    def describe(
        self, protocol: DisputeProtocol, params: ProtocolParams | None = None
    ) -> dict[str, str]:
        """The agents as stored with an episode: kinds of the seats in use, then the
        models of seats whose kind uses one, then the judge model when there is one."""
        seats = [s for s in protocol.seats if s.used(params)]
        out = {s.role: self.seat_kind(s) for s in seats}
        for s in seats:  # a party cast apart from its seat: `parties:tenant: human`
            out |= {f"{s.role}:{pid}": k for pid, k in self.party_kinds(s).items()}
        out |= {f"{key}_participant": who for key, who in self.participants.items()}
        for s in seats:
            kind = out[s.role]
            if s.needs_model(kind) or (s.takes_model(kind) and self.model(s.role) != RULE):
                out[f"{s.role}_model"] = self.model(s.role)
                for call, m in self.call_models(s, kind).items():
                    out[f"{sub_role(s.role, call)}_model"] = m
        if self.model(JUDGE) != RULE:
            out["judge_model"] = self.model(JUDGE)
        embeddings = embeddings_model(protocol, params, self)
        if embeddings is not None:
            out[f"{EMBEDDINGS}_model"] = embeddings
        if self.backbone:
            out["backbone"] = self.backbone
        return out


def embeddings_model(
    protocol: DisputeProtocol, params: ProtocolParams | None, cast: Cast
) -> str | None:
    """What embeds texts for the parties: None where none of them does (rule parties rank
    lexically, as ever); else the `embeddings` model when named, else the parties'
    endpoint (ProMediate asks its endpoint), else, for the embedded `local` model, the
    in-process sentence model."""
    seat = protocol.party_seat
    if not (protocol.embeds(params) and kind_embeds(seat.interface, cast.seat_kind(seat))):
        return None
    named = cast.model(EMBEDDINGS)
    if named != RULE:
        return named
    parties = cast.model(seat.role)
    return IN_PROCESS if parties in (RULE, "local") else parties


def embeddings_line(name: str) -> str:
    """What `name` (an `embeddings_model`) embeds with, in words for a plan or a run."""
    if name == IN_PROCESS:
        return "all-MiniLM-L6-v2 in process (local)"
    if name == LEXICAL:
        return "lexical vectors, no model (lexical)"
    return f"{redact(name)}, through its /embeddings endpoint"


def embeddings_problems(name: str | None) -> list[str]:
    """Why the embeddings named cannot be used here: the in-process model asked for by
    name and not installed (unasked, its absence falls back to lexical, as ever)."""
    from disputelab.llm.embedding import embedding_available  # numpy: only when asked

    if name == IN_PROCESS and (reason := embedding_available()) is not None:
        return [f"models.{EMBEDDINGS}: local is the in-process sentence model: {reason}"]
    if name == RULE:
        return [
            f"models.{EMBEDDINGS}: rule is no embeddings; name an endpoint, local (the "
            "in-process model) or lexical"
        ]
    return []


def mediator_role(protocol: DisputeProtocol) -> str:
    """The role of the protocol's mediator seat (the first that is not the parties'):
    `mediator`, or `counsel` for the settlement's method under test."""
    seat = protocol.mediator_seat
    return seat.role if seat is not None else MEDIATOR


def run_models(protocol: DisputeProtocol, model: str, models: Mapping[str, str]) -> dict[str, str]:
    """The model of every role of a run: `model` for each, unless `models` names one.
    `models: {mediator: M}` fills the protocol's mediator seat whatever its role is
    called; a seat that borrows another role's model gets it later (`for_protocol`)."""
    own = {mediator_role(protocol) if r == MEDIATOR else r: m for r, m in models.items()}
    base = {s.role: model for s in protocol.seats if not s.model_from}
    base |= {protocol.party_seat.role: model, mediator_role(protocol): model, JUDGE: model}
    return base | own


def seat_problems(protocol: DisputeProtocol, seat: Seat, kind: str, model: str) -> list[Problem]:
    """Why `kind` cannot fill `seat` with `model`: a person's kind (which a host, not a
    run, seats), a kind of no protocol, one this seat does not take, or one that needs
    a model and has none."""
    allowed = seat.kinds(hosted=False)
    if kind in seat.kinds() and kind not in allowed:
        return [
            Problem(
                f"{seat.role} {kind!r} is a person's seat, which a run cannot fill on its "
                "own; a person plays it with `disputelab play` (from Python, "
                "`disputelab.api.play.play`)"
            )
        ]
    known = allowed if seat.per_party else mediator_kinds()
    if kind not in known:  # a kind of no protocol: name the ones this seat takes
        what = "party kind" if seat.per_party else seat.role
        takes = ", ".join(allowed)
        return [Problem(f"unknown {what} {kind!r}; the {protocol.name} protocol takes {takes}")]
    if kind not in allowed:
        return [
            Problem(
                f"the {protocol.name} protocol takes {seat.role} {' or '.join(allowed)}, "
                f"not {kind!r}"
            )
        ]
    if seat.needs_model(kind) and model == RULE:
        if seat.per_party:
            return [Problem(f"{kind} parties need a model", ("model", "models.parties"))]
        return [Problem(f"{seat.role} {kind!r} needs a model", ("model", "models.mediator"))]
    return []


def call_problems(protocol: DisputeProtocol, cast: Cast) -> list[Problem]:
    """A call's own model (`mediator.when`) that the kind in its seat does not make."""
    problems = []
    for seat in protocol.seats:
        kind = cast.seat_kind(seat)
        for role in cast.models:
            call = role.removeprefix(f"{seat.role}.")
            if call == role or call in kind_calls(seat.interface, kind):
                continue
            offering = [k for k in seat.kinds() if call in kind_calls(seat.interface, k)]
            problems.append(
                Problem(
                    f"models.{role}: the {kind} {seat.role} makes no {call}-call; "
                    f"{', '.join(offering) or f'no {seat.role} of this protocol'} does"
                )
            )
    return problems


def resolve_cast(
    protocol: DisputeProtocol,
    mediator: str | None,
    parties: str | None,
    model: str = RULE,
    models: Mapping[str, str] | None = None,
) -> tuple[Cast, list[Problem]]:
    """A run's cast: kinds from what was named or the seats' defaults (with or without a
    model), models from `model` and `models`; with every problem found."""
    roles = run_models(protocol, model, models or {})
    kinds: dict[str, str] = {}
    problems: list[Problem] = []
    for seat, given in ((protocol.mediator_seat, mediator), (protocol.party_seat, parties)):
        if seat is None:
            continue
        llm = roles.get(seat.role, model) != RULE
        kind = given or (seat.default_with_model if llm else seat.default)
        found = seat_problems(protocol, seat, kind, roles.get(seat.role, RULE))
        problems += found
        if not found:
            kinds[seat.role] = kind
    cast = Cast(kinds, roles).for_protocol(protocol)
    return cast, problems + (call_problems(protocol, cast) if not problems else [])


def seat_keys(protocol: DisputeProtocol, scenario: Scenario | None) -> list[str]:
    """Every seat a person could be named for: `ROLE` for each seat, and `ROLE:ID` for
    each party of a per-party seat."""
    out = []
    for seat in protocol.seats:
        out.append(seat.role)
        if seat.per_party and scenario is not None:
            out += [f"{seat.role}:{p.id}" for p in scenario.parties]
    return out


def resolve_seat(protocol: DisputeProtocol, scenario: Scenario | None, key: str) -> str | Problem:
    """The seat `key` names, as a run names it (`mediator`, `parties:tenant`), or the
    problem with it. `party:ID` and a bare party id name that party's seat."""
    role, colon, pid = key.strip().partition(":")
    party_seat = protocol.party_seat
    ids = [p.id for p in scenario.parties] if scenario is not None else []
    if not colon and role in ids and role not in {s.role for s in protocol.seats}:
        role, pid, colon = party_seat.role, role, ":"
    if role in ("party", "parties"):
        role = party_seat.role
    seat = next((s for s in protocol.seats if s.role == role), None)
    known = ", ".join(seat_keys(protocol, scenario))
    if seat is None:
        return Problem(
            f"seat {key!r}: the {protocol.name} protocol has no such seat; its seats: {known}"
        )
    if not colon:
        return seat.role
    if not seat.per_party:
        return Problem(f"seat {key!r}: the {seat.role} seat is one seat, not one per party")
    if scenario is not None and pid not in ids:
        return Problem(f"seat {key!r}: no party {pid!r} in the scenario; its seats: {known}")
    return f"{seat.role}:{pid}"


def seat_kind_problems(protocol: DisputeProtocol, key: str, kind: str, model: str) -> list[Problem]:
    """Why `kind` cannot fill seat `key` (resolved already); a person's kind (`human`)
    is allowed here, since a seat named by key is one a host fills."""
    seat = protocol.seat(key.split(":", 1)[0])
    if kind not in seat.kinds():
        takes = ", ".join(seat.kinds())
        return [Problem(f"seat {key}: the {protocol.name} protocol takes {takes}, not {kind!r}")]
    if seat.needs_model(kind) and model == RULE:
        return [Problem(f"seat {key}: {kind!r} needs a model", ("model",))]
    return []
