"""People at the table: `play` seats a person at one or more seats of an episode, with
agents in every other seat, and stores it as a run of kind `play`.

    import disputelab as dl
    from disputelab.api.play import play, TerminalMoves

    result = play("tenancy", seat="parties:tenant", source=TerminalMoves(), mediator="rule")

A seat is named as `ROLE` (`mediator`, `counsel`) or `ROLE:ID` for one party's seat
(`parties:tenant`; `party:tenant` and `tenant` name it too). `source` is what the person
plays through: one `MoveSource` for every seat named, or one per seat key. The other
options are `disputelab.run`'s (protocol, preset, mediator, parties, model, models,
condition, seed, params, budget, tracker), planned by the same `plan_run`. No twin is
played. `resume` names a play run that stopped: its episode is played again under its
own ids, the person's logged moves answering for them up to where it stopped.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from disputelab.episode import Turn
from disputelab.errors import DisputelabError
from disputelab.humans import HUMAN, MoveSource
from disputelab.humans.terminal import TerminalMoves
from disputelab.llm.models import ModelHub
from disputelab.plan.run import RunPlan
from disputelab.scenario.io import scenario_to_data
from disputelab.scenario.schema import Scenario
from disputelab.store.sqlite import Store

if TYPE_CHECKING:
    from disputelab.experiments.seated import PlayResult

__all__ = [
    "PlayError",
    "PlayResult",
    "TerminalMoves",
    "new_participant",
    "plan_play",
    "play",
    "play_async",
]

Sources = MoveSource | Mapping[str, MoveSource]
# The plan options a play run keeps to be planned again on resume.
REQUEST_OPTIONS = (
    "protocol",
    "preset",
    "mediator",
    "parties",
    "model",
    "models",
    "condition",
    "seed",
    "params",
    "budget",
    "tracker",
)


def __getattr__(name: str) -> Any:
    if name == "PlayResult":  # the runner's, imported when asked for
        from disputelab.experiments.seated import PlayResult

        return PlayResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class PlayError(DisputelabError, ValueError):
    """A play that cannot start: no seat named, a source missing, a run not to resume."""


def new_participant() -> str:
    """A pseudonymous participant id: random, and nothing about the person."""
    return f"p-{secrets.token_hex(4)}"


def plan_play(
    scenario: str | os.PathLike[str] | Scenario,
    *,
    seat: str | Sequence[str],
    participants: Mapping[str, str] | None = None,
    store: Any = None,
    **options: Any,
) -> RunPlan:
    """The plan of a play: `plan_run` with a person (kind `human`) at each seat of
    `seat`; PlanError lists every problem. Every seat gets a participant id, generated
    where `participants` names none."""
    from disputelab.api import plan_run

    keys = [seat] if isinstance(seat, str) else list(seat)
    if not keys:
        raise PlayError("seat: name the seat a person takes (mediator, parties:ID, ...)")
    if isinstance(options.get("model"), list | tuple) and len(options["model"]) > 1:
        raise PlayError("model: a play is one episode; name one model")
    who = {k: (participants or {}).get(k) or new_participant() for k in keys}
    return plan_run(
        scenario, store=store, seats=dict.fromkeys(keys, HUMAN), participants=who, **options
    )


def _sources(plan: RunPlan, source: Sources) -> dict[str, MoveSource]:
    """The move source of each seat a person fills, by resolved seat key."""
    out: dict[str, MoveSource] = {}
    for given, key in plan.seat_keys.items():
        found = source.get(given, source.get(key)) if isinstance(source, Mapping) else source
        if not isinstance(found, MoveSource):
            raise PlayError(f"source: nothing plays seat {key}; give a move source for it")
        out[key] = found
    return out


def _request(
    scenario: str | os.PathLike[str] | Scenario, plan: RunPlan, options: Mapping[str, Any]
) -> dict[str, Any]:
    """What a resume plans from again: the scenario as named (its data when it was given
    as a `Scenario`), the options as given, the seats and their participants."""
    ref: Any = scenario_to_data(scenario) if isinstance(scenario, Scenario) else str(scenario)
    named = {k: v for k, v in options.items() if k in REQUEST_OPTIONS and v is not None}
    seats = {key: plan.cast.participants.get(key, "") for key in plan.seat_keys.values()}
    return {"scenario": ref, **named, "seats": seats}


@dataclass(frozen=True)
class _Prepared:
    plan: RunPlan
    request: dict[str, Any]
    resume: str | None


def _prepare(
    store: Store,
    scenario: str | os.PathLike[str] | Scenario | None,
    seat: str | Sequence[str],
    participants: Mapping[str, str] | None,
    resume: str | None,
    options: dict[str, Any],
) -> _Prepared:
    """The play's plan and what its run keeps to plan it again; a resumed run's own."""
    if resume is not None:
        resume, scenario, seat, participants, options = _resumed(store, resume)
    if scenario is None:
        raise PlayError("scenario: name the case to play")
    plan = plan_play(scenario, seat=seat, participants=participants, store=store, **options)
    return _Prepared(plan, _request(scenario, plan, options), resume)


def _resumed(
    store: Store, ref: str
) -> tuple[str, str | Scenario, list[str], dict[str, str], dict[str, Any]]:
    """The run id, scenario, seats, participants and options a play run was planned
    from, read back from its configuration."""
    run_id = store.resolve_run(ref)
    kind, config = store.run_info(run_id)
    request = config.get("request")
    if kind != "play" or not isinstance(request, dict):
        raise PlayError(f"run {run_id} is not a played run; only those are resumed here")
    request = dict(request)
    scenario = request.pop("scenario")
    if isinstance(scenario, dict):
        scenario = Scenario.model_validate(scenario)
    seats = dict(request.pop("seats", {}))
    return run_id, scenario, list(seats), {k: v for k, v in seats.items() if v}, request


async def _play(
    store: Store,
    prepared: _Prepared,
    source: Sources,
    hub: ModelHub,
    on_turn: Callable[[Turn], None] | None,
    on_run: Callable[[str], None] | None,
) -> PlayResult:
    from disputelab.experiments.seated import play_seated

    sources = _sources(prepared.plan, source)
    plan, request = prepared.plan, prepared.request
    return await play_seated(store, plan, hub, sources, request, on_turn, prepared.resume, on_run)


async def play_async(
    scenario: str | os.PathLike[str] | Scenario | None = None,
    *,
    seat: str | Sequence[str] = (),
    source: Sources,
    resume: str | None = None,
    store: Any = None,
    hub: ModelHub | None = None,
    on_turn: Callable[[Turn], None] | None = None,
    participants: Mapping[str, str] | None = None,
    on_run: Callable[[str], None] | None = None,
    **options: Any,
) -> PlayResult:
    """`play`, for code already inside an event loop."""
    from disputelab.api import open_models, open_store

    opened = open_store(store)
    prepared = _prepare(opened, scenario, seat, participants, resume, options)
    hub = hub or open_models(prepared.plan.models, store=opened)
    return await _play(opened, prepared, source, hub, on_turn, on_run)


def play(
    scenario: str | os.PathLike[str] | Scenario | None = None,
    *,
    seat: str | Sequence[str] = (),
    source: Sources,
    resume: str | None = None,
    store: Any = None,
    hub: ModelHub | None = None,
    on_turn: Callable[[Turn], None] | None = None,
    participants: Mapping[str, str] | None = None,
    on_run: Callable[[str], None] | None = None,
    **options: Any,
) -> PlayResult:
    """Play one episode of `scenario` with a person at each seat of `seat` (through
    `source`) and agents elsewhere; store and score it as a run of kind `play`. With
    `resume` (a play run's id), continue the episode that stopped: `scenario`, `seat`
    and the options are the run's own. The result is `run`'s, with `replayed` (moves
    answered from the log), `diverged` and `resumed`. `on_run` hears the run's id
    before the first move is asked (to say how to resume it if it stops)."""
    from disputelab.api import open_models, open_store, run_loop

    opened = open_store(store)
    prepared = _prepare(opened, scenario, seat, participants, resume, options)
    hub = hub or open_models(prepared.plan.models, store=opened)
    return run_loop(lambda: _play(opened, prepared, source, hub, on_turn, on_run), hub)
