"""An experiment, resolved once: the validated spec, its scenarios, the grid of planned
episodes, the cast, the protocol's parameters with every temperature it sends, the extra
evaluators and their judges, and the grids of its ablations.

Validation, `--dry-run`, the runner, resume and the stored config all read this plan;
nothing after `plan_experiment` reads the spec file or its mapping again.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from disputelab.agents.registry import sub_role
from disputelab.errors import PlanError
from disputelab.evaluation.registry import Evaluator, get_evaluator
from disputelab.llm.models import Profile, load_profiles
from disputelab.plan.ablation import ablated_specs
from disputelab.plan.backbones import models_of
from disputelab.plan.cast import (
    EMBEDDINGS,
    JUDGE,
    RULE,
    WRITER,
    Cast,
    calls_endpoint,
    embeddings_model,
)
from disputelab.plan.concurrency import EndpointLimit, endpoint_limits
from disputelab.plan.profiles import profile_temperatures
from disputelab.plan.spec import (
    ExperimentSpec,
    PlannedEpisode,
    check_conditions,
    grid_episodes,
    limit_scenarios,
    load_spec,
    resolve_pool,
    validate_spec,
)
from disputelab.protocols.base import DisputeProtocol, ProtocolParams, behaviour_rows, get_protocol
from disputelab.redact import redact
from disputelab.scenario.behaviour import PARAMETERS, world_overrides
from disputelab.scenario.schema import Scenario
from disputelab.store.manage import id_problem

SpecSource = str | Path | Mapping[str, Any] | ExperimentSpec


@dataclass(frozen=True)
class PlanSummary:
    """What an experiment would run, without running it."""

    scenarios: int
    conditions: int
    mediators: list[str]
    replicates: int
    episodes: int
    twins: bool
    calls: dict[str, int]  # role -> first-attempt model calls at most
    models: dict[str, str] = field(default_factory=dict)  # role -> the model it calls
    concurrency: int = 0  # episodes in flight
    concurrency_set: bool = False  # by the spec or the caller, not the default
    limits: list[EndpointLimit] = field(default_factory=list)  # per model endpoint


@dataclass(frozen=True)
class ExperimentPlan:
    """Everything that decides an experiment, validated together."""

    spec: ExperimentSpec  # as validated
    spec_dir: Path  # what relative paths in the spec (its corpus) are relative to
    protocol: DisputeProtocol
    params: ProtocolParams
    cast: Cast
    scenarios: Mapping[str, Scenario]
    episodes: tuple[PlannedEpisode, ...]
    ablations: tuple[ExperimentPlan, ...] = ()
    warnings: tuple[str, ...] = ()
    # The spec with every temperature it leaves unset at the value sent (its role's model
    # profile's, else the default): what the store records, so that a resume after a
    # profile's temperature changed is refused as a changed spec.
    sent: ExperimentSpec | None = None
    # The model profiles the plan was made with: the endpoints' limits come from them.
    profiles: Mapping[str, Profile] = field(default_factory=dict)
    # Every playable scenario the spec names, before `limit_scenarios`: the corpus the
    # expertise condition retrieves from, so that a trial on two cases retrieves as the
    # full run does. None: the same as `scenarios`.
    pool: Mapping[str, Scenario] | None = None
    # The run this grid is made for (an ablation's experiment, a sensitivity point's
    # spec), '' for an experiment of its own: the store lists it as derived from that.
    parent: str = ""

    @property
    def retrieval_pool(self) -> Mapping[str, Scenario]:
        """The scenarios whose legal bases the expertise condition's BM25 index holds."""
        return self.scenarios if self.pool is None else self.pool

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def config(self) -> dict[str, Any]:
        """The experiment as the store records it (and a resume compares)."""
        data: dict[str, Any] = json.loads((self.sent or self.spec).model_dump_json())
        if not data.get("backbones"):
            # A spec without a model axis is stored as it was before there was one, so
            # its runs resume, and its stored config reads the same.
            data.pop("backbones", None)
        if data.get("worlds") is None:
            # Likewise without a `worlds:` axis: the config of an old spec is unchanged.
            data.pop("worlds", None)
        return data

    @property
    def concurrency(self) -> int:
        """Episodes in flight: the spec's, else the default for the models it calls."""
        return self.spec.run_concurrency

    def endpoint_limits(self, concurrency: int | None = None) -> list[EndpointLimit]:
        """The calls each model endpoint will take at once, at `concurrency` episodes in
        flight (the plan's own when None)."""
        return endpoint_limits(self.models, self.profiles, concurrency or self.concurrency)

    @property
    def conditions(self) -> tuple[str, ...]:
        return tuple(self.spec.conditions)

    @property
    def models(self) -> tuple[str, ...]:
        """Every model the experiment may call (each backbone's too), `rule` left out."""
        named = [*self.spec.models.items()]
        named += [rm for b in self.spec.backbones.values() for rm in b.items()]
        return tuple(sorted({m for r, m in named if calls_endpoint(r, m)}))

    @property
    def backbones(self) -> tuple[str, ...]:
        """The names of the model axis's backbones, in the spec's order (none without)."""
        return tuple(self.spec.backbones)

    def cast_for(self, backbone: str) -> Cast:
        """The cast of an episode played with `backbone` ('' : the spec's own models)."""
        if not backbone:
            return self.cast
        models = models_of(self.spec.backbones, self.spec.models, backbone)
        return Cast(self.cast.kinds, models, backbone).for_protocol(self.protocol)

    @property
    def embeddings(self) -> tuple[str, ...]:
        """What embeds texts for the parties, per backbone, each once (none where the
        parties rank nothing by embeddings)."""
        casts = [self.cast_for(b) for b in self.backbones or ("",)]
        found = (embeddings_model(self.protocol, self.params, c) for c in casts)
        return tuple(dict.fromkeys(e for e in found if e is not None))

    @property
    def judges(self) -> tuple[str, ...]:
        judge = self.spec.models.get(JUDGE, RULE)
        return () if judge == RULE else (judge,)

    @property
    def writer(self) -> str | None:
        writer = self.spec.models.get(WRITER, RULE)
        return None if writer == RULE else writer

    @property
    def evaluators(self) -> tuple[Evaluator, ...]:
        """The extra evaluators the spec asks for (the protocol's own always run)."""
        return tuple(get_evaluator(name) for name in self.spec.evaluators)

    @property
    def bert_model(self) -> str:
        """The BERTScore model of the points-bertscore evaluator, '' when none is named."""
        return self.spec.bert_model or ""

    @property
    def behaviour(self) -> dict[str, Any]:
        """The rule agents' behaviour overrides (what the conditions are applied under)."""
        value = self.params.model_dump().get("behaviour") or {}
        return dict(value)

    @property
    def worlds(self) -> tuple[str, ...]:
        """The parameter worlds the grid is played in; none without a `worlds:` axis."""
        return tuple(self.spec.worlds or ())

    def world_behaviour(self, world: str) -> dict[str, float]:
        """The behaviour overrides of an episode in `world` ('': the spec's own)."""
        own = {k: float(v) for k, v in self.behaviour.items()}
        rows = behaviour_rows(self.spec.protocol, PARAMETERS)
        return world_overrides(world, own, rows) if world else own

    def params_for(self, world: str) -> ProtocolParams:
        """The protocol's parameters of an episode in `world` ('' and `shipped`: the
        plan's own, unchanged)."""
        if not world or world == "shipped":
            return self.params
        return self.params.model_copy(update={"behaviour": self.world_behaviour(world)})

    @property
    def corpus(self) -> Path | None:
        """The statute corpus of the expertise condition, where the spec names one."""
        if not self.spec.corpus:
            return None
        path = Path(self.spec.corpus)
        return path if path.is_absolute() else self.spec_dir / path

    def grids(self) -> tuple[ExperimentPlan, ...]:
        """This experiment's grid, then each ablation's, each stored on its own."""
        return (self, *self.ablations)

    def summary(self, concurrency: int | None = None) -> PlanSummary:
        """The grid's size, a bound on the model calls of each role, and the episodes and
        calls in flight at `concurrency` (the plan's own when None)."""
        calls: dict[str, int] = {}
        models: dict[str, str] = {}
        for ep in self.episodes:
            n_parties = len(self.scenarios[ep.scenario_id].parties)
            self._bound_calls(ep, self.protocol.max_calls(self.params, n_parties), calls, models)
        if self.writer is not None:
            calls[WRITER] = len(self.scenarios) * len(self.conditions)
            models[WRITER] = redact(self.writer)
        twins = self.protocol.plays_twin
        return PlanSummary(
            len(self.scenarios),
            len(self.conditions),
            list(self.spec.mediators),
            self.spec.replicates,
            len(self.episodes),
            twins,
            calls,
            models,
            concurrency or self.concurrency,
            concurrency is not None or self.spec.concurrency is not None,
            self.endpoint_limits(concurrency),
        )

    def _bound_calls(
        self,
        ep: PlannedEpisode,
        bound: Mapping[str, int],
        calls: dict[str, int],
        models: dict[str, str],
    ) -> None:
        for seat in self.protocol.seats:
            if not seat.used(self.params):
                continue
            cast = self.cast_for(ep.backbone)
            kind = ep.mediator if seat is self.protocol.mediator_seat else None
            kind = kind or cast.seat_kind(seat)
            if seat.needs_model(kind) and cast.model(seat.role) != RULE:
                calls[seat.role] = calls.get(seat.role, 0) + bound.get(seat.role, 0)
                _add_model(models, seat.role, cast.model(seat.role))  # borrowed ones too
                for call, m in cast.call_models(seat, kind).items():
                    _add_model(models, sub_role(seat.role, call), m)  # counted with the seat


def _add_model(models: dict[str, str], role: str, model: str) -> None:
    """File `model` under `role`; a role on the model axis lists each of its models."""
    shown = redact(model)
    listed = models[role].split(", ") if role in models else []
    if shown not in listed:
        models[role] = ", ".join([*listed, shown])


def cast_of(spec: ExperimentSpec) -> Cast:
    """The spec's cast; each planned episode sets its own mediator."""
    protocol = get_protocol(spec.protocol)
    return Cast({"parties": spec.parties}, dict(spec.models)).for_protocol(protocol)


def plan_experiment(
    source: SpecSource,
    overrides: Mapping[str, Any] | None = None,
    library_dir: Path | None = None,
    profiles: Mapping[str, Profile] | None = None,
    base: Path | None = None,
    name: str | None = None,
) -> ExperimentPlan:
    """Resolve an experiment from a spec file, a mapping of its fields or a validated
    spec, with `overrides` in place of the spec's own; SpecError with every problem.
    `name` stores it under another experiment name than the spec's (a trial beside the
    full run); PlanError when it cannot be a run id.

    `profiles` are the model profiles whose temperatures fill those the spec leaves
    unset (read from `disputelab.toml` when not given); `library_dir` holds the cases
    imported into the store; `base` is what a mapping's relative paths are relative to
    (a file's are relative to its folder; default: the working directory).
    """
    if name is not None:
        if problem := id_problem(name):
            raise PlanError("name", [problem])
        overrides = {**(overrides or {}), "name": name}
    if isinstance(source, ExperimentSpec):
        data = source.model_dump() if overrides else None
        spec = validate_spec(data, "spec", base, overrides, library_dir) if data else source
        spec_dir = base or Path.cwd()
    elif isinstance(source, Mapping):
        spec_dir = base or Path.cwd()
        spec = validate_spec(dict(source), "spec", spec_dir, overrides, library_dir)
    else:
        spec = load_spec(source, overrides, library_dir)
        spec_dir = Path(source).parent
    return plan_spec(spec, spec_dir, library_dir, load_profiles() if profiles is None else profiles)


def _with_embeddings(sent: ExperimentSpec, cast: Cast) -> ExperimentSpec:
    """`sent` with the embeddings its parties use written in, where the spec leaves them
    to the default and one model serves every episode: the stored config then says it
    (on a model axis, each episode's agents record their own)."""
    protocol = get_protocol(sent.protocol)
    name = embeddings_model(protocol, sent.protocol_params(), cast)
    if name is None or EMBEDDINGS in sent.models or sent.backbones:
        return sent
    return sent.model_copy(update={"models": {**sent.models, EMBEDDINGS: name}})


def plan_spec(
    spec: ExperimentSpec,
    spec_dir: Path,
    library_dir: Path | None,
    profiles: Mapping[str, Profile],
    scenarios: Mapping[str, Scenario] | None = None,
    pool: Mapping[str, Scenario] | None = None,
) -> ExperimentPlan:
    """The plan of a validated spec (its ablations' grids too, sharing its scenarios and
    their unlimited pool)."""
    protocol = get_protocol(spec.protocol)
    cast = cast_of(spec)
    params = profile_temperatures(spec.protocol_params(), cast, profiles)
    sent = _with_embeddings(spec.model_copy(update={"params": params.model_dump()}), cast)
    if scenarios is None:
        pool = resolve_pool(spec, spec_dir, library_dir)
        scenarios = limit_scenarios(spec, pool)
        check_conditions(spec, dict(scenarios))
    episodes = tuple(grid_episodes(spec, list(scenarios)))
    ablations = tuple(
        plan_spec(a, spec_dir, library_dir, profiles, scenarios, pool) for a in ablated_specs(spec)
    )
    return ExperimentPlan(
        spec,
        spec_dir,
        protocol,
        params,
        cast,
        scenarios,
        episodes,
        ablations,
        tuple(spec.warnings),
        sent,
        profiles,
        pool if pool is not None and len(pool) != len(scenarios) else None,
        spec.ablation_of or "",
    )
