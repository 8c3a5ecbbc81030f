"""Run an experiment grid on asyncio with bounded concurrency, committing every episode.

`resume` skips episodes already complete and re-runs failed or half-finished ones under
the same deterministic ids, so a killed run continues without duplicates.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from disputelab.agents.memos import AgentMemos
from disputelab.episode import Episode
from disputelab.evaluation.registry import EpisodeToScore, Evaluator, warm_up
from disputelab.experiments.collector import heap_set_aside
from disputelab.experiments.episodes import (
    EpisodePlan,
    ExtraScoring,
    check_embeddings,
    scenario_json,
    score_protocol,
)
from disputelab.experiments.executors import Executor, LocalExecutor
from disputelab.experiments.judging import evaluate_run, scoring_options
from disputelab.experiments.resume import check_resume, create_or_join
from disputelab.legal.expertise import retrieved_bases
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import ExperimentPlan
from disputelab.plan.spec import PlannedEpisode, SpecError
from disputelab.scenario.behaviour import Behaviour
from disputelab.scenario.conditions import apply_condition
from disputelab.scenario.schema import Scenario
from disputelab.store.leases import Claim, Leases
from disputelab.store.sqlite import Store

Progress = Callable[[str, PlannedEpisode, str | None], None]  # event, episode, error


@dataclass
class Summary:
    run_id: str
    planned: int
    skipped: int = 0
    done: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)
    # Failure reason (error type and first line) -> episodes that failed with it.
    reasons: dict[str, int] = field(default_factory=dict)
    interrupted: bool = False  # stopped on request; the rest waits for --resume
    abandoned: int = 0  # episodes in flight when stopped: left incomplete, re-run on resume
    elsewhere: int = 0  # finished meanwhile by another process on the same store
    waited: int = 0  # episodes this process waited for while another process held them
    # Stopped during the scoring pass after play: what it had not scored yet (the
    # protocol's own scores, or the spec's evaluators by name).
    unscored: list[str] = field(default_factory=list)


async def run_experiment(
    store: Store,
    plan: ExperimentPlan,
    hub: ModelHub,
    resume: bool = False,
    concurrency: int | None = None,
    progress: Progress | None = None,
    on_plan: Callable[[int], None] | None = None,
    stop: threading.Event | None = None,
    source: str = "",
    executor: Executor | None = None,
) -> Summary:
    """Run (or resume) every episode of the plan's grid, scoring each as soon as it can
    be. When `stop` is set, no episode starts and those in flight are abandoned (left
    incomplete, with their finished turns, for `--resume`). `executor` plays the
    episodes (default: in this event loop); it is closed when the run ends."""
    exists = check_resume(store, plan, resume)
    # Everything that can fail on the spec's account runs before the run is recorded, so a
    # failed start leaves nothing behind to block the corrected spec.
    conditioned = await condition_scenarios(plan, hub)
    retrieved = _retrieval(plan, conditioned)
    await check_embeddings(hub, plan.embeddings)
    if not exists:
        create_or_join(store, plan, resume)
    store.set_plan(plan.name, len(plan.episodes), source)
    summary = Summary(plan.name, len(plan.episodes))
    if on_plan is not None:
        on_plan(len(plan.episodes))
    # Scorers' slow set-up (rouge-score imports nltk, jieba builds its dictionary: some
    # seconds) runs in a thread. Where episodes call models, it runs while the first ones
    # wait on their calls, and scoring waits for it (a scorer imported on the loop would
    # stall every episode in flight). Rule episodes wait on nothing to overlap with, and
    # would pile up unscored in memory meanwhile: they start once it is done.
    extra = [ev.name for ev in plan.evaluators]
    names = [*plan.protocol.evaluators, *extra]
    warming = asyncio.ensure_future(asyncio.to_thread(warm_up, names))
    if not plan.models:
        await warming
    grid = _Grid(store, plan, hub, conditioned, retrieved, executor, extra_scoring(plan))
    grid.warming = warming
    try:
        await _play_grid(grid, summary, concurrency or plan.concurrency, progress, stop)
        if summary.interrupted:
            return summary
        await _score_after_play(grid, plan, hub, summary, stop or threading.Event())
    finally:
        await asyncio.wait([warming])  # a thread is not cancelled: it finishes first
        if not warming.cancelled():  # the run itself cancelled: nothing to read
            warming.exception()  # raised where a score needed it; unneeded, not a fault
    hub.flush()
    return summary


# What the scoring pass calls the protocol's own scores when a stop leaves them undone.
PROTOCOL_SCORES = "protocol"


async def _score_after_play(
    grid: _Grid, plan: ExperimentPlan, hub: ModelHub, summary: Summary, stop: threading.Event
) -> None:
    """Score what play left unscored, then the spec's evaluators that score in a pass of
    their own. A stop request ends the pass at once and names what is left unscored."""
    steps: list[tuple[str, Callable[[], Awaitable[Any]]]] = [(PROTOCOL_SCORES, grid.score_rest)]
    per_episode = grid.extras.evaluators if grid.extras is not None else ()
    for evaluator in [ev.name for ev in plan.evaluators]:
        if evaluator in per_episode:
            continue  # scored with the protocol's evaluators, as each episode finished
        # Judge calls go through the response cache, so a resumed run re-scores free.
        steps.append((evaluator, functools.partial(_evaluate, grid.store, plan, hub, evaluator)))
    for i, (_, step) in enumerate(steps):
        if not await _unless_stopped(step(), stop):
            summary.interrupted = True
            summary.unscored = [n for n, _ in steps[i:]]
            return


async def _evaluate(store: Store, plan: ExperimentPlan, hub: ModelHub, evaluator: str) -> None:
    judges = list(plan.judges)
    await evaluate_run(store, plan.name, evaluator, hub, judges, bert_model=plan.bert_model)


async def _unless_stopped(work: Awaitable[Any], stop: threading.Event) -> bool:
    """Await `work` unless `stop` is set first (a signal handler sets it from any thread):
    then cancel it and say False."""
    task = asyncio.ensure_future(work)
    while not task.done():
        if stop.is_set():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            return False
        await asyncio.wait({task}, timeout=0.1)
    task.result()
    return True


async def _play_grid(
    grid: _Grid,
    summary: Summary,
    concurrency: int,
    progress: Progress | None,
    stop: threading.Event | None,
) -> None:
    """Play every episode; then close the executor and write what the response cache
    holds, closed hub or not."""
    try:
        with heap_set_aside():
            await grid.run_all(summary, concurrency, progress, stop)
    except BaseException:
        await grid.executor.aclose()
        # The run's own error is what the caller must see; replies not written now stay
        # pending for the hub's closing or the process's exit.
        with contextlib.suppress(Exception):
            grid.hub.flush()
        raise
    await grid.executor.aclose()
    grid.hub.flush()


def extra_scoring(plan: ExperimentPlan) -> ExtraScoring:
    """The spec's extra evaluators that score each episode as it finishes, from memory:
    those that are quick and will not call a judge (judge calls are charged per
    episode, which calls from overlapping episodes would blur). The rest score in a pass
    after the run, which reloads every episode from the store."""
    options = scoring_options(bert_model=plan.bert_model)
    judges = plan.judges

    def inline(ev: Evaluator) -> bool:
        calls_judge = ev.requires_judge(options) or (ev.judge_optional and bool(judges))
        return not calls_judge and not ev.after_run

    quick = [ev.name for ev in plan.evaluators if inline(ev)]
    return ExtraScoring(tuple(quick), options, ",".join(judges))


def scheduling_window(concurrency: int) -> int:
    """How many episodes `longest_first` sorts together: enough that the last window
    fills the concurrency with mediated episodes first, at least 64."""
    return 2 * max(concurrency, 32)


def longest_first(episodes: Sequence[PlannedEpisode], window: int) -> list[PlannedEpisode]:
    """Mediated episodes before unmediated twins within each run of `window` episodes in
    plan order, which keeps every twin near its mediated episodes.

    A mediator's calls make its episodes the long ones; starting them first shortens the
    tail, where a few stragglers run while the rest of the concurrency sits idle. Only
    the last window decides the tail (the gate admits episodes in the order they queue,
    so earlier windows overlap), and a mediated episode is held in memory until its twin
    has played: sorting the whole grid would hold half of it, and make the cyclic garbage
    collector walk every held turn again and again."""
    if window < 1:
        raise ValueError("window must be at least 1")
    ordered: list[PlannedEpisode] = []
    for start in range(0, len(episodes), window):
        part = episodes[start : start + window]
        ordered += sorted(part, key=lambda ep: ep.baseline_id is None)
    return ordered


class _Grid:
    """An experiment's planned episodes while they run: what is finished, and the one
    scoring path (each episode with its protocol's evaluators, once it and any twin are
    complete, so a kill loses no scores of finished work)."""

    def __init__(
        self,
        store: Store,
        plan: ExperimentPlan,
        hub: ModelHub,
        conditioned: dict[tuple[str, str], Scenario],
        retrieved: dict[tuple[str, str], tuple[str, ...]],
        executor: Executor | None = None,
        extras: ExtraScoring | None = None,
    ) -> None:
        self.store, self.name, self.hub = store, plan.name, hub
        self.extras = extras
        # The scorers' set-up under way in a thread, which scoring waits for.
        self.warming: asyncio.Future[None] | None = None
        self.executor: Executor = executor or LocalExecutor()
        self.protocol = plan.protocol
        self.params = plan.params
        self.cast = plan.cast
        self.casts = {b: plan.cast_for(b) for b in plan.backbones}
        self.conditioned = conditioned
        self.scenario_json = {cell: scenario_json(s) for cell, s in conditioned.items()}
        # A parameter world changes the rule agents' behaviour table, and with it what an
        # offline condition (a cause) makes of a scenario: each world has its own of both.
        self.world_params = {w: plan.params_for(w) for w in plan.worlds}
        self.world_cells = {w: world_conditioned(plan, w, conditioned) for w in plan.worlds}
        self.world_json = {
            w: {cell: scenario_json(s) for cell, s in cells.items()}
            for w, cells in self.world_cells.items()
        }
        self.retrieved = retrieved
        self.episodes = list(plan.episodes)
        self.done_before = store.complete_episode_ids(plan.name)
        self.finished = set(self.done_before)
        self.scored: set[str] = set()
        self.twins: dict[str, list[PlannedEpisode]] = {}
        self.leases = Leases(store.db)
        self.waiting: list[PlannedEpisode] = []  # held by another process when we came
        self.held_elsewhere: set[str] = set()  # episodes found claimed by another process
        self.played: dict[str, Episode] = {}  # finished here and not yet fully scored
        self.poll_s = 0.5
        # The memos every episode played in this process shares: they live as long as
        # the grid runs (worker processes keep their own).
        self.memos = AgentMemos()
        for ep in self.episodes:
            if ep.baseline_id is not None:
                self.twins.setdefault(ep.baseline_id, []).append(ep)

    async def run_all(
        self,
        summary: Summary,
        concurrency: int,
        progress: Progress | None,
        stop: threading.Event | None,
    ) -> None:
        """Every planned episode, `concurrency` at a time, until done or `stop` is set;
        then those another process held, as it lets go of them.

        `stop` is a thread-safe flag, so a signal handler can set it at any moment: rule
        episodes never yield to the event loop, and a loop callback would wait until all
        of them had run."""
        gate = asyncio.Semaphore(concurrency)
        running: set[str] = set()
        stopped = stop or threading.Event()
        renewer = asyncio.ensure_future(self._renew_leases())
        pending = longest_first(self.episodes, scheduling_window(concurrency))
        try:
            while True:
                tasks = [
                    asyncio.ensure_future(
                        self.run_one(ep, gate, summary, progress, running, stopped)
                    )
                    for ep in pending
                ]
                await self._gather(tasks, summary, running, stop)
                pending, self.waiting = self.waiting, []
                if not pending or stopped.is_set() or summary.interrupted:
                    break
                await asyncio.sleep(self.poll_s)  # until the other process lets go
        finally:
            renewer.cancel()
            self.leases.release_all()  # abandoned episodes are free for the next process
            summary.waited = len(self.held_elsewhere)

    @staticmethod
    async def _gather(
        tasks: Sequence[asyncio.Future[None]],
        summary: Summary,
        running: set[str],
        stop: threading.Event | None,
    ) -> None:
        async def cancel_on_stop(event: threading.Event) -> None:
            while not event.is_set():
                await asyncio.sleep(0.1)
            summary.interrupted = True
            summary.abandoned = len(running)
            for task in tasks:
                task.cancel()

        watcher = asyncio.ensure_future(cancel_on_stop(stop)) if stop is not None else None
        results = await asyncio.gather(*tasks, return_exceptions=True)
        if watcher is not None:
            watcher.cancel()
        for r in results:  # a fault of our own (not an episode's) still surfaces
            if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError):
                raise r

    async def _renew_leases(self) -> None:
        while True:
            await asyncio.sleep(self.leases.ttl_s / 3)
            self.leases.renew()

    async def run_one(
        self,
        ep: PlannedEpisode,
        gate: asyncio.Semaphore,
        summary: Summary,
        progress: Progress | None,
        running: set[str],
        stop: threading.Event,
    ) -> None:
        if ep.episode_id in self.done_before:
            summary.skipped += 1
            if progress:
                progress("skipped", ep, None)
            return
        async with gate:
            # Checked here too: rule episodes never yield to the loop, so a stop request
            # reaches them only between episodes.
            if stop.is_set():
                summary.interrupted = True
                return
            if not self._claim(ep, summary, progress):
                return
            running.add(ep.episode_id)
            played: Episode | None = None
            try:
                played = await self.executor.play(
                    self.store, self.hub, self.name, self.episode_plan(ep), self.memos
                )
            except Exception as exc:  # recorded in the store; retried on resume
                _count_failure(summary, ep, exc, progress)
                return
            finally:
                running.discard(ep.episode_id)
                if played is None:  # failed or stopped: free for another process now
                    self.leases.release(ep.episode_id)
                else:
                    self.leases.release_finished(ep.episode_id)
        summary.done += 1
        self.finished.add(ep.episode_id)
        self.played[ep.episode_id] = played
        await self.score_finished(ep)
        if progress:
            progress("done", ep, None)

    def _claim(self, ep: PlannedEpisode, summary: Summary, progress: Progress | None) -> bool:
        """Claim `ep` for this process; False when another process finished it (counted
        as done elsewhere) or holds it (queued until it lets go)."""
        claim, _ = self.leases.claim(ep.episode_id)
        if claim is Claim.MINE:
            return True
        if claim is Claim.BUSY:
            self.held_elsewhere.add(ep.episode_id)
            self.waiting.append(ep)
            return False
        summary.elsewhere += 1
        self.finished.add(ep.episode_id)
        if progress:
            progress("skipped", ep, None)
        return False

    def episode_plan(self, ep: PlannedEpisode) -> EpisodePlan:
        seat = self.protocol.mediator_seat
        cast = self.casts[ep.backbone] if ep.backbone else self.cast
        cast = cast.with_kind(seat.role, ep.mediator) if seat else cast
        cell = (ep.scenario_id, ep.condition)
        mediated = ep.baseline_id is not None or not self.protocol.plays_twin
        return EpisodePlan(
            ep.episode_id,
            self.scenario_of(ep),
            self.protocol.name,
            self.world_params.get(ep.world, self.params),
            cast,
            ep.seed,
            ep.condition,
            "mediated" if mediated else "unmediated",
            ep.baseline_id,
            self.retrieved.get(cell, ()),
            self.world_json.get(ep.world, self.scenario_json)[cell],
        )

    def scenario_of(self, ep: PlannedEpisode) -> Scenario:
        """The conditioned scenario `ep` plays, in its parameter world."""
        return self.world_cells.get(ep.world, self.conditioned)[(ep.scenario_id, ep.condition)]

    def ready(self, ep: PlannedEpisode) -> list[PlannedEpisode]:
        """`ep` and the twins waiting on it that can be scored now."""
        if not self.protocol.plays_twin:
            return [ep]
        out = [ep] if ep.baseline_id is None or ep.baseline_id in self.finished else []
        return out + [m for m in self.twins.get(ep.episode_id, []) if m.episode_id in self.finished]

    async def score_finished(self, ep: PlannedEpisode) -> None:
        ready = self.ready(ep)
        await self.score(ready, self.finished)
        self.scored.update(m.episode_id for m in ready)
        for m in ready:
            self._forget_if_done(m.episode_id)
            if m.baseline_id is not None:
                self._forget_if_done(m.baseline_id)

    def _forget_if_done(self, episode_id: str) -> None:
        """Drop a played episode from memory once it and every episode scored against it
        are scored: a twin is kept until its last mediated episode is."""
        dependents = self.twins.get(episode_id, [])
        if episode_id in self.scored and all(m.episode_id in self.scored for m in dependents):
            self.played.pop(episode_id, None)

    async def score_rest(self) -> None:
        rest = [ep for ep in self.episodes if ep.episode_id not in self.scored]
        await self.score(rest, self.store.complete_episode_ids(self.name))

    async def score(self, episodes: list[PlannedEpisode], complete: set[str]) -> None:
        if self.warming is not None:
            await self.warming
        loaded: dict[str, Episode] = {}

        def get(eid: str) -> Episode:
            # Scored from memory when played here; reloaded only when another process,
            # or an earlier run, played it.
            if eid in self.played:
                return self.played[eid]
            if eid not in loaded:
                loaded[eid] = self.store.load_episode(eid).episode
            return loaded[eid]

        for ep in episodes:
            if ep.episode_id not in complete:
                continue
            twin = ep.baseline_id if ep.baseline_id in complete else None
            item = EpisodeToScore(
                get(ep.episode_id),
                self.scenario_of(ep),
                get(twin) if twin else None,
                ep.episode_id,
                twin,
            )
            await score_protocol(self.store, ep.episode_id, item, self.protocol, extras=self.extras)


def _count_failure(
    summary: Summary, ep: PlannedEpisode, exc: Exception, progress: Progress | None
) -> None:
    summary.failed += 1
    summary.errors.append(f"{ep.episode_id}: {type(exc).__name__}: {exc}")
    reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    summary.reasons[reason] = summary.reasons.get(reason, 0) + 1
    if progress:
        progress("failed", ep, str(exc))


def _retrieval(
    plan: ExperimentPlan, conditioned: dict[tuple[str, str], Scenario]
) -> dict[tuple[str, str], tuple[str, ...]]:
    """Legal bases per cell where the protocol hands retrieved bases to its mediator."""
    if not plan.protocol.uses_retrieval:
        return {}
    return retrieved_bases(plan.corpus, dict(plan.retrieval_pool), conditioned)


def world_conditioned(
    plan: ExperimentPlan, world: str, shipped: dict[tuple[str, str], Scenario]
) -> dict[tuple[str, str], Scenario]:
    """Every cell's scenario in `world`: the shipped ones where the world's behaviour is
    the plan's own; else the conditions applied offline under the world's behaviour (a
    writer model's scenarios are the shipped ones: it writes text, not the table)."""
    b = Behaviour.of(plan.world_behaviour(world))
    if world == "shipped" or b == Behaviour.of(plan.behaviour) or plan.writer is not None:
        return shipped
    return {cell: apply_condition(plan.scenarios[cell[0]], cell[1], b) for cell in shipped}


async def condition_scenarios(
    plan: ExperimentPlan, hub: ModelHub
) -> dict[tuple[str, str], Scenario]:
    """Every (scenario, condition) cell's scenario. With a `writer` model, the conditions
    an LLM can write (parties:+1, history:x5, cause:) are written by it, once per cell and
    through the response cache, so a resumed experiment sees the very same scenarios."""
    b = Behaviour.of(plan.behaviour)
    scenarios, conditions = plan.scenarios, plan.conditions
    if plan.writer is None:
        return {(s, c): apply_condition(scenarios[s], c, b) for s in scenarios for c in conditions}
    from disputelab.authoring.scenario_writer import apply_condition_with_model

    writer = hub.model(plan.writer, "writer")
    out = {}
    for sid, base in scenarios.items():
        for cond in conditions:
            out[(sid, cond)] = await apply_condition_with_model(base, cond, writer, b)
    return out


__all__ = ["Progress", "SpecError", "Summary", "run_experiment"]
