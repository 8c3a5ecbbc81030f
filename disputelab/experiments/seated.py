"""One episode with a person at one or more of its seats, stored as a run of kind `play`.

The plan is a run's (`plan_run` with `seats` naming the human seats), the episode is
played, committed turn by turn and scored as any run's, and no unmediated twin is
played: a person plays one episode. What they answered is logged beside the store, one
move log per seat (`seats/EPISODE/SEAT.json`), so that an interrupted episode can be
resumed: it is played again from its start with the same seed, the person's logged
moves answering for them while each still fits its prompt, and the person goes on from
the turn they had reached. Seeded agents make the same moves again; an LLM agent's
replies come from the response cache. Where the table goes otherwise (a reply not in
the cache), the rest of the log is dropped and the person plays on from there.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from disputelab.agents.memos import AgentMemos
from disputelab.episode import Turn
from disputelab.experiments.episodes import (
    EpisodePlan,
    RunResult,
    check_embeddings,
    played_and_scored,
    record_run,
    scenario_json,
)
from disputelab.experiments.single import check_expertise, conditioned, retrieved, track
from disputelab.humans.source import LoggedMoves, MoveSource, read_log
from disputelab.llm.models import ModelHub
from disputelab.plan.profiles import profile_temperatures
from disputelab.plan.run import RunPlan, episode_names
from disputelab.protocols.base import NONE
from disputelab.scenario.conditions import draw_strategy_party
from disputelab.store.health import StoreError
from disputelab.store.sqlite import Store

PLAY = "play"  # the kind of a run with a person at a seat
SEATS_DIR = "seats"  # under the store's folder: the move logs of people's seats


def move_log(store_root: str | Path, episode_id: str, seat: str) -> Path:
    """Where the moves of `seat` in `episode_id` are logged."""
    return Path(store_root) / SEATS_DIR / episode_id / f"{seat.replace(':', '--')}.json"


@dataclass
class PlayResult(RunResult):
    """A played run with people at its seats: the run's result, and, for a resumed
    episode, how many logged moves were replayed and whether the table went otherwise
    before the log ran out (`diverged`)."""

    seats: tuple[str, ...] = ()
    replayed: int = 0
    diverged: bool = False
    resumed: bool = False
    logs: dict[str, Path] = field(default_factory=dict, repr=False)


def _episode_id(plan: RunPlan, run_id: str) -> tuple[str, str]:
    """The episode's id and arm: the run's mediated one, with no twin."""
    seat = plan.protocol.mediator_seat
    mediator = plan.cast.kind(seat.role, seat.default) if seat else NONE
    name = episode_names(mediator, False, [])[0][0]
    return f"{run_id}-{name}", "unmediated" if name == "unmediated" else "mediated"


def _resumable(store: Store, run_id: str, eid: str, scenario_text: str) -> None:
    """Refuse to resume a run that is not a play, an episode that finished, or one
    whose case has changed since it started."""
    kind, _ = store.run_info(run_id)
    if kind != PLAY:
        raise StoreError(f"run {run_id} is not a played run (its kind is {kind or 'unknown'})")
    if eid not in store.episode_ids(run_id):
        return  # stopped before its first turn was stored: played afresh
    rec = store.load_episode(eid)
    if rec.complete:
        raise StoreError(f"episode {eid} is finished ({rec.status.value}); nothing to resume")
    if json.dumps(rec.scenario, sort_keys=True) != json.dumps(
        json.loads(scenario_text), sort_keys=True
    ):
        raise StoreError(f"the case of episode {eid} has changed since it started")


async def play_seated(
    store: Store,
    plan: RunPlan,
    hub: ModelHub,
    sources: Mapping[str, MoveSource],
    request: Mapping[str, Any],
    on_turn: Callable[[Turn], None] | None = None,
    resume: str | None = None,
    on_run: Callable[[str], None] | None = None,
) -> PlayResult:
    """Play the planned run once with `sources` hosting the seats a person fills (by
    resolved seat key), store it as a `play` run with `request` (the options it was
    planned from, which a resume plans from again), and score it. `resume` names a
    play run whose episode stopped: it is played again under its own ids. `on_run`
    hears the run's id before the first move is asked."""
    # The one party of a one-party strategy is drawn here, so a resume compares like with like.
    scenario = draw_strategy_party(await conditioned(plan, hub), plan.seed)
    check_expertise(plan, scenario)
    await check_embeddings(hub, [plan.embeddings])
    bases = retrieved(plan, scenario, Path(store.root) / "library")
    proto, cast = plan.protocol, plan.cast.for_protocol(plan.protocol)
    params = profile_temperatures(plan.params, cast, hub.profiles)
    text = scenario_json(scenario)
    extra = {"seats": sorted(sources), "request": dict(request)}
    if resume is None:
        run_id = record_run(
            store, scenario, proto, params, cast, plan.seed, plan.condition, bases, {}, PLAY, extra
        )
        store.set_plan(run_id, 1)
    else:
        run_id = resume
    eid, arm = _episode_id(plan, run_id)
    if resume is not None:
        _resumable(store, run_id, eid, text)
    if on_run is not None:
        on_run(run_id)
    logs = {key: move_log(store.root, eid, key) for key in sources}
    hosts = {
        key: LoggedMoves(src, logs[key], read_log(logs[key]) if resume else [])
        for key, src in sources.items()
    }
    ep_plan = EpisodePlan(
        eid, scenario, proto.name, params, cast, plan.seed, plan.condition, arm, None, bases, text
    )
    episode, scores = await played_and_scored(
        store, hub, run_id, ep_plan, proto, on_turn, AgentMemos(), None, hosts
    )
    result = PlayResult(run_id, episode, eid, None, None, scores, hub=hub, scenario=scenario)
    result.label = "mediated" if arm == "mediated" else "episode"
    result.seats, result.logs, result.resumed = tuple(sorted(sources)), logs, resume is not None
    result.replayed = sum(h.replayed for h in hosts.values())
    result.diverged = any(h.diverged for h in hosts.values())
    result.tracker = plan.tracker
    result.tracked = await track(store, plan, result, hub)
    return result
