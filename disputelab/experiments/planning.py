"""What an experiment would run, and the model calls it may make, without running it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from disputelab.agents.registry import sub_role
from disputelab.experiments.episodes import Cast
from disputelab.experiments.spec import ExperimentSpec, check_conditions, plan, resolve_scenarios
from disputelab.protocols.base import get_protocol
from disputelab.redact import redact


def cast_of(spec: ExperimentSpec) -> Cast:
    """The spec's cast; each planned episode sets its own mediator."""
    return Cast({"parties": spec.parties}, dict(spec.models)).for_protocol(
        get_protocol(spec.protocol)
    )


@dataclass
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


def dry_run(spec: ExperimentSpec, spec_dir: Path, library_dir: Path) -> PlanSummary:
    """Resolve and plan `spec` as `run_experiment` would, and bound its model calls."""
    scenarios = resolve_scenarios(spec, spec_dir, library_dir)
    check_conditions(spec, scenarios)
    episodes = plan(spec, list(scenarios))
    protocol = get_protocol(spec.protocol)
    params = spec.protocol_params()
    cast = cast_of(spec)
    calls: dict[str, int] = {}
    models: dict[str, str] = {}
    for ep in episodes:
        bound = protocol.max_calls(params, len(scenarios[ep.scenario_id].parties))
        for seat in protocol.seats:
            if not seat.used(params):
                continue
            kind = ep.mediator if seat is protocol.mediator_seat else cast.seat_kind(seat)
            if seat.needs_model(kind) and cast.model(seat.role) != "rule":
                calls[seat.role] = calls.get(seat.role, 0) + bound.get(seat.role, 0)
                models[seat.role] = redact(cast.model(seat.role))  # borrowed ones too
                for call, m in cast.call_models(seat, kind).items():
                    models[sub_role(seat.role, call)] = redact(m)  # counted with the seat
    writer = spec.models.get("writer", "rule")
    if writer != "rule":
        calls["writer"] = len(scenarios) * len(spec.conditions)
        models["writer"] = redact(writer)
    return PlanSummary(
        len(scenarios),
        len(spec.conditions),
        list(spec.mediators),
        spec.replicates,
        len(episodes),
        protocol.plays_twin,
        calls,
        models,
    )
