"""A single run, resolved once: the scenario as written, the protocol and its parameters
(under a preset), the cast, the seed, the condition, the corpus and the tracker of the
second table, every one of them checked before anything is played or recorded.

The command line's `run` and the API's `disputelab.run` both come through `plan_run`;
the episode runner reads the plan and nothing else.

Several models (`--model A --model B`) make a model axis of the run, as `models:` lists
make one of an experiment (`backbones.py`): each model plays every seat a single model
would, on the same scenario, condition and seed, so that their episodes are paired. The
judge and the writer are not on the axis: one of each serves every model compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from disputelab.agents.registry import has_hidden_state
from disputelab.errors import PlanError, Problem
from disputelab.evaluation.trackers import LLM_TRACKERS, TRACKERS
from disputelab.plan.backbones import (
    MAX_BACKBONES,
    mediator_only,
    models_of,
    same_model_backbones,
)
from disputelab.plan.cast import (
    EMBEDDINGS,
    JUDGE,
    MEDIATOR,
    RULE,
    WRITER,
    Cast,
    calls_endpoint,
    embeddings_model,
    embeddings_problems,
    mediator_role,
    resolve_cast,
    resolve_seat,
    run_models,
    seat_kind_problems,
)
from disputelab.plan.params import protocol_and_params
from disputelab.protocols.base import DisputeProtocol, ProtocolParams, retrieval_protocols
from disputelab.scenario.checks import unsettlable
from disputelab.scenario.conditions import ConditionError, apply_condition
from disputelab.scenario.io import MAX_SEED, ScenarioError
from disputelab.scenario.library import resolve_scenario
from disputelab.scenario.schema import Scenario

ORACLE = "oracle"


@dataclass(frozen=True)
class RunPlan:
    """Everything that decides one run, validated together."""

    scenario: Scenario  # as written, before the condition
    ref: str  # how it was named: a file's folder lends the expertise condition neighbours
    protocol: DisputeProtocol
    params: ProtocolParams
    cast: Cast
    seed: int = 0
    condition: str = "general"
    corpus: Path | None = None
    tracker: str | None = None  # the second table's consensus source; None: no table
    warnings: tuple[str, ...] = field(default=(), compare=False)
    # The model axis of several `--model`s: backbone name -> the model of each seat on
    # it (none for a run of one model). `cast` then holds what every backbone shares.
    backbones: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # Seats named by key (`seats`), as given -> as resolved (`party:tenant` ->
    # `parties:tenant`): where a host looks for the seats it fills.
    seat_keys: Mapping[str, str] = field(default_factory=dict)

    @property
    def models(self) -> tuple[str, ...]:
        """Every model the run may call (each backbone's too), `rule` left out."""
        named = [*self.cast.models.items()]
        named += [(r, m) for b in self.backbones.values() for r, m in b.items()]
        return tuple(sorted({m for r, m in named if calls_endpoint(r, m)}))

    @property
    def embeddings(self) -> str | None:
        """What embeds texts for the parties (None where nothing does)."""
        return embeddings_model(self.protocol, self.params, self.cast)

    def cast_for(self, backbone: str) -> Cast:
        """The cast of the episodes played with `backbone` ('': the run's own)."""
        if not backbone:
            return self.cast
        models = models_of(self.backbones, self.cast.models, backbone)
        return Cast(self.cast.kinds, models, backbone).for_protocol(self.protocol)

    @property
    def shared_twin(self) -> bool:
        """Whether one unmediated twin serves every backbone: they differ in the
        mediator's models only, so the twin would be the same episode for each."""
        return mediator_only(self.backbones, mediator_role(self.protocol))

    def with_backbones(self, backbones: Mapping[str, Mapping[str, str]]) -> RunPlan:
        """This plan on a model axis of `backbones` (itself without any)."""
        return replace(self, backbones=backbones) if backbones else self

    def models_by_role(self) -> dict[str, list[str]]:
        """The models each role calls, as its episodes record them (each backbone's in
        turn), and the writer's; roles played without a model left out."""
        out: dict[str, list[str]] = {}
        for name in self.backbones or [""]:
            agents = self.cast_for(name).describe(self.protocol, self.params)
            for key, model in agents.items():
                if key.endswith("_model"):
                    listed = out.setdefault(key.removesuffix("_model"), [])
                    listed += [] if model in listed else [model]
        if self.writer is not None:
            out[WRITER] = [self.writer]
        return out

    def episode_names(self) -> list[tuple[str, str]]:
        """What each episode's id adds to the run's, with the backbone it is played
        with, in the order they are played: the unmediated twin first, where one is."""
        seat = self.protocol.mediator_seat
        mediator = self.cast.kind(seat.role, seat.default) if seat else "none"
        twin = self.protocol.plays_twin and seat is not None and mediator != "none"
        return episode_names(mediator, twin, list(self.backbones), self.shared_twin)

    @property
    def writer(self) -> str | None:
        """The model that writes the condition, where one is given (`--model`)."""
        writer = self.cast.model("writer")
        return writer if writer != RULE else None


def plan_run(
    scenario: str | Path | Scenario,
    *,
    protocol: str | None = None,
    preset: str | None = None,
    mediator: str | None = None,
    parties: str | None = None,
    model: str | Sequence[str] = RULE,
    models: Mapping[str, str] | None = None,
    condition: str = "general",
    seed: int = 0,
    params: Mapping[str, Any] | None = None,
    budget: int | None = None,
    corpus: str | Path | None = None,
    tracker: str | None = None,
    library: Path | None = None,
    seats: Mapping[str, str] | None = None,
    participants: Mapping[str, str] | None = None,
) -> RunPlan:
    """Resolve a run; PlanError with every problem found when it cannot be played.

    `models` names a model per role (`parties`, `mediator`, `judge`, `mediator.when`);
    `model` plays every role it leaves out. A list of several models in `model` plays
    the run once with each in every seat it would fill alone (the judge and the writer,
    which serve them all, come from `models` only): a model axis, as in an experiment.
    `params` are the protocol's parameters, over the preset's; `budget` is the
    protocol's turn budget whatever it calls it (party turns of the roundtable,
    bargaining rounds of the staged protocol, ...). `scenario` is a built-in id, an id
    imported into `library`, a file, or a `Scenario`. `seats` casts seats by key
    (`{"parties:tenant": "human"}`), `participants` names who fills them (key -> id).
    """
    ref = scenario.id if isinstance(scenario, Scenario) else str(scenario)
    problems: list[Problem] = []
    listed = _listed(model, problems)
    one = listed[0] if len(listed) == 1 else RULE  # one model, in a list or not: as ever
    models = {**(models or {})}
    if one != RULE:
        models.setdefault("writer", one)
    proto, chosen, found = protocol_and_params(protocol, preset, params or {}, budget)
    problems += found
    base = _base_scenario(scenario, library, problems)
    if not 0 <= seed <= MAX_SEED:
        problems.append(Problem(f"seed: must be from 0 to {MAX_SEED} (2^53), got {seed}"))
    if proto is None or chosen is None:
        raise PlanError("", problems)
    cast, backbones, found = _cast(proto, chosen, mediator, parties, listed, models, condition)
    cast, keys, seated = _seated(proto, cast, base, mediator, seats or {}, participants or {})
    problems += found + seated + [Problem(p) for p in embeddings_problems(models.get(EMBEDDINGS))]
    corpus_path = Path(corpus) if corpus is not None else None
    problems += _corpus_problems(proto, corpus_path)
    chosen_tracker, found = _case_checks(proto, base, condition, cast, preset, tracker)
    problems += found
    if problems or base is None:
        raise PlanError("", problems)
    warnings = tuple(f"{base.id}: {line}" for line in unsettlable(base))
    plan = RunPlan(
        base, ref, proto, chosen, cast, seed, condition, corpus_path, chosen_tracker, warnings
    )
    return replace(plan, seat_keys=keys).with_backbones(backbones)


def _case_checks(
    proto: DisputeProtocol,
    base: Scenario | None,
    condition: str,
    cast: Cast,
    preset: str | None,
    tracker: str | None,
) -> tuple[str | None, list[Problem]]:
    """The scenario's problems under the protocol and condition, and the tracker of the
    second table (a preset's applies only where a judge model is named)."""
    if base is None:
        return None, []
    problems = _scenario_problems(proto, base, condition)
    named = cast.model("judge") != RULE  # a preset's tracker asks for a judge
    preset_tracker = _preset_tracker(preset) if named else None
    chosen, found = _tracker(tracker, proto, cast, base, preset_tracker)
    return chosen, problems + found


def _seated(
    proto: DisputeProtocol,
    cast: Cast,
    scenario: Scenario | None,
    mediator: str | None,
    seats: Mapping[str, str],
    participants: Mapping[str, str],
) -> tuple[Cast, dict[str, str], list[Problem]]:
    """The cast with the seats named by key, the keys as resolved, and the problems:
    a seat no protocol seat names, a kind it does not take, a seat named twice."""
    kinds = dict(cast.kinds)
    keys: dict[str, str] = {}
    problems: list[Problem] = []
    for given, kind in seats.items():
        key = resolve_seat(proto, scenario, given)
        if isinstance(key, Problem):
            problems.append(key)
            continue
        role = key.split(":", 1)[0]
        if key in keys.values() or (mediator is not None and key == mediator_role(proto)):
            problems.append(Problem(f"seat {given}: its kind is named twice"))
            continue
        problems += seat_kind_problems(proto, key, kind, cast.model(role))
        keys[given] = key
        kinds[key] = kind
    who: dict[str, str] = {}
    for given, name in participants.items():
        if given in seats and given not in keys:
            continue  # its seat's own problem is said already
        key = keys.get(given) or resolve_seat(proto, scenario, given)
        if isinstance(key, Problem) or key not in keys.values():
            problems.append(Problem(f"participants: {given} is not a seat named in seats"))
            continue
        who[key] = name
    return Cast(kinds, cast.models, cast.backbone, who), keys, problems


def _cast(
    proto: DisputeProtocol,
    params: ProtocolParams,
    mediator: str | None,
    parties: str | None,
    listed: list[str],
    models: Mapping[str, str],
    condition: str,
) -> tuple[Cast, dict[str, dict[str, str]], list[Problem]]:
    """The run's cast, and its backbones where several models are listed."""
    if len(listed) > 1:
        cast, backbones, found = _axis_cast(proto, params, mediator, parties, listed, models)
        return cast, backbones, found + _writer_problems(models, condition)
    cast, found = resolve_cast(proto, mediator, parties, listed[0] if listed else RULE, models)
    return cast, {}, found


def _listed(model: str | Sequence[str], problems: list[Problem]) -> list[str]:
    """The models `model` names: one, or a list of them (empty for `rule` alone)."""
    if isinstance(model, str):
        return [model] if model != RULE else []
    listed = list(model)
    if not listed or not all(isinstance(m, str) and m for m in listed):
        problems.append(Problem("model: a model name, or a list of model names"))
        return []
    if len(listed) > 1 and RULE in listed:
        problems.append(
            Problem(
                "model: rule is not a model to compare; compare agent kinds with "
                "--mediator in runs of their own"
            )
        )
        return [m for m in listed if m != RULE]
    return listed


def _axis_cast(
    proto: DisputeProtocol,
    params: ProtocolParams,
    mediator: str | None,
    parties: str | None,
    listed: list[str],
    models: Mapping[str, str],
) -> tuple[Cast, dict[str, dict[str, str]], list[Problem]]:
    """The cast every backbone shares and the backbones of several models: each model in
    every seat that one model would fill and that calls a model, unless its own option
    names that seat's model. The seats' kinds are those one model would give them."""
    if len(listed) > MAX_BACKBONES:
        return Cast(), {}, [Problem(f"model: {len(listed)} models, more than {MAX_BACKBONES}")]
    shared = {JUDGE: RULE, **models}  # the first model must not judge them all
    cast, problems = resolve_cast(proto, mediator, parties, listed[0], shared)
    own = {mediator_role(proto) if r == MEDIATOR else r for r in models}
    roles = [
        s.role
        for s in proto.seats
        if not s.model_from
        and s.role not in own
        and s.used(params)
        and s.takes_model(cast.seat_kind(s))
    ]
    kinds = {**cast.kinds, **{s.role: cast.seat_kind(s) for s in proto.seats}}
    named = {r: m for r, m in run_models(proto, RULE, models).items() if m != RULE}
    base = Cast(kinds, named).for_protocol(proto)
    if problems:
        return base, {}, problems
    if not roles:
        why = "every seat plays without a model or has its own model option"
        return base, {}, [Problem(f"model: several models are compared in the seats; {why}")]
    try:
        return base, same_model_backbones(listed, roles), []
    except ValueError as exc:
        return base, {}, [Problem(str(exc))]


def _writer_problems(models: Mapping[str, str], condition: str) -> list[Problem]:
    """A condition a model writes has one writer for every model compared, or the
    models would not meet the same scenario."""
    from disputelab.authoring.scenario_writer import needs_writer

    if models.get(WRITER, RULE) != RULE or not needs_writer(condition):
        return []
    return [
        Problem(
            f"condition {condition}: it is written by a model, and no one of several models "
            "compared writes it for all; run one model at a time, or name the writer "
            "(models.writer in the API or an experiment spec)"
        )
    ]


def episode_names(
    mediator: str, twin: bool, backbones: Sequence[str], shared_twin: bool = True
) -> list[tuple[str, str]]:
    """(what an episode's id adds to its run's, its backbone) for each episode of a
    run, in playing order: `unmediated` (the twin) then the mediator's, each with
    `@BACKBONE` on a model axis, except a twin every backbone shares."""
    mediated = mediator if mediator != "none" else "unmediated"
    if not backbones:
        return [*([("unmediated", "")] if twin else []), (mediated, "")]
    out = [("unmediated", "")] if twin and shared_twin else []
    for b in backbones:
        if twin and not shared_twin:
            out.append((f"unmediated@{b}", b))
        out.append((f"{mediated}@{b}", b))
    return out


def _base_scenario(
    scenario: str | Path | Scenario, library: Path | None, problems: list[Problem]
) -> Scenario | None:
    if isinstance(scenario, Scenario):
        return scenario
    try:
        return resolve_scenario(str(scenario), library)
    except ScenarioError as exc:
        problems += [Problem(f"{exc.source}: {p}") for p in exc.problems]
        return None


def _scenario_problems(proto: DisputeProtocol, base: Scenario, condition: str) -> list[Problem]:
    """The scenario as written, before a condition gives it what the protocol asks for
    (an expertise level hands any scenario a legal context), and the condition's own
    name and argument, checked offline as an experiment checks its conditions."""
    problems = []
    if (problem := proto.scenario_problem(base)) is not None:
        problems.append(Problem(problem))
    try:
        conditioned = apply_condition(base, condition)
    except ConditionError as exc:
        return [*problems, Problem(f"condition: {exc}")]
    legal = conditioned.legal
    if legal is not None and legal.retrieval_top_k and not proto.uses_retrieval:
        names = " or ".join(retrieval_protocols())
        problems.append(
            Problem(
                f"the expertise condition applies to the {names} protocol, whose mediator "
                f"proposes legal bases, and this run plays the {proto.name} protocol"
            )
        )
    return problems


def _corpus_problems(proto: DisputeProtocol, corpus: Path | None) -> list[Problem]:
    if corpus is None or proto.uses_retrieval:
        return []
    names = " or ".join(retrieval_protocols())
    return [
        Problem(
            f"corpus serves the expertise condition of the {names} protocol, and this run "
            f"plays the {proto.name} protocol"
        )
    ]


def default_tracker(proto: DisputeProtocol, cast: Cast) -> str:
    """What an experiment with this cast would read: the oracle only where every party
    exposes its true stances (a person's never does)."""
    seat = proto.party_seat
    kinds = [cast.seat_kind(seat), *cast.party_kinds(seat).values()]
    hidden = all(has_hidden_state(seat.interface, k) for k in kinds)
    return ORACLE if hidden else "self-report"


def _preset_tracker(preset: str | None) -> str | None:
    if preset is None:
        return None
    from disputelab.protocols.presets import PRESETS, TRACKER

    if preset not in PRESETS:
        return None  # said by the preset's own check
    value = PRESETS.get(preset).value(TRACKER)
    return value if isinstance(value, str) else None


def _tracker(
    given: str | None,
    proto: DisputeProtocol,
    cast: Cast,
    scenario: Scenario,
    preset_default: str | None,
) -> tuple[str | None, list[Problem]]:
    """The tracker of the second table, or None when there is none to show: the oracle
    is the protocol's own table, and a case without topics (a price, a settlement's sum)
    has no consensus to follow. Unasked, it is the preset's, which applies (as in an
    experiment) only when a judge model is named, else what an experiment would read."""
    judged = cast.model("judge") != RULE
    if given is None:
        fallback = preset_default or default_tracker(proto, cast)
        tracker = fallback if scenario.topics else ORACLE
    elif given not in TRACKERS:
        return None, [Problem(f"tracker: unknown {given!r}; use {', '.join(TRACKERS)}")]
    elif given != ORACLE and not scenario.topics:
        why = f"scenario {scenario.id} has no topics whose consensus a tracker could follow"
        return None, [Problem(f"tracker {given}: {why}")]
    else:
        tracker = given
    if tracker in LLM_TRACKERS and not judged:
        return None, [Problem(f"tracker {tracker} asks a judge model", ("models.judge", "model"))]
    return (None if tracker == ORACLE else tracker), []
