"""Run an experiment grid on asyncio with bounded concurrency, committing every episode.

`resume` skips episodes already complete and re-runs failed or half-finished ones under
the same deterministic ids, so a killed run continues without duplicates.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from disputelab.episode import Episode
from disputelab.evaluation import agentmediation, socrates
from disputelab.experiments.expertise import retrieved_bases
from disputelab.experiments.single import Agents, play_episode
from disputelab.experiments.spec import (
    ExperimentSpec,
    PlannedEpisode,
    SpecError,
    check_conditions,
    plan,
    resolve_scenarios,
)
from disputelab.llm.models import ModelHub
from disputelab.scenario.conditions import apply_condition
from disputelab.scenario.schema import Scenario
from disputelab.store.sqlite import Store, StoreError

Progress = Callable[[str, PlannedEpisode, str | None], None]  # event, episode, error


@dataclass
class Summary:
    run_id: str
    planned: int
    skipped: int = 0
    done: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)


def changed_fields(stored: dict[str, Any], spec: ExperimentSpec) -> list[str]:
    """Fields in which `spec` differs from the one an experiment started with; concurrency
    may change on resume. A config from an older version is read with today's defaults."""
    try:
        before = ExperimentSpec.model_validate(stored).model_dump()
    except ValidationError:
        return []  # written by a version whose fields we cannot compare; do not block it
    now = spec.model_dump()
    return [k for k in now if k != "concurrency" and before.get(k) != now[k]]


def _agents(spec: ExperimentSpec) -> Agents:
    m = spec.models
    return Agents(
        parties=spec.parties,
        parties_model=m.get("parties", "rule"),
        mediator_model=m.get("mediator", "rule"),
        judge_model=m.get("judge", "rule"),
    )


async def run_experiment(
    store: Store,
    spec: ExperimentSpec,
    spec_dir: Path,
    hub: ModelHub,
    resume: bool = False,
    concurrency: int | None = None,
    progress: Progress | None = None,
    on_plan: Callable[[int], None] | None = None,
) -> Summary:
    scenarios = resolve_scenarios(spec, spec_dir, Path(store.root) / "library")
    check_conditions(spec, scenarios)
    episodes = plan(spec, list(scenarios))
    existing = {r["run_id"] for r in store.runs()}
    if spec.name in existing and not resume:
        raise StoreError(
            f"experiment {spec.name!r} already exists in {store.root}; pass "
            "--resume to continue it, or give the spec a new name"
        )
    if spec.name in existing:
        changed = changed_fields(store.run_info(spec.name)[1], spec)
        if changed:
            raise SpecError(
                "spec",
                [
                    f"experiment {spec.name!r} was started with a different {', '.join(changed)}; "
                    "resume it with the spec it started with, or give the spec a new name"
                ],
            )
    # Everything that can fail on the spec's account runs before the run is recorded, so a
    # failed start leaves nothing behind to block the corrected spec.
    conditioned = await condition_scenarios(spec, scenarios, hub)
    agents = _agents(spec)
    retrieved = retrieved_bases(spec, spec_dir, scenarios, conditioned)
    if spec.name not in existing:
        store.create_run(
            "experiment", spec.name, json.loads(spec.model_dump_json()), run_id=spec.name
        )
    done_ids = store.complete_episode_ids(spec.name)
    summary = Summary(spec.name, len(episodes))
    if on_plan is not None:
        on_plan(len(episodes))
    gate = asyncio.Semaphore(concurrency or spec.concurrency)

    finished = set(done_ids)
    scored: set[str] = set()
    twins: dict[str, list[PlannedEpisode]] = {}
    for ep in episodes:
        if ep.baseline_id is not None:
            twins.setdefault(ep.baseline_id, []).append(ep)

    def score_finished(ep: PlannedEpisode) -> None:
        """Score an episode as soon as it and its twin are complete, so a kill loses no
        scores of finished work; the pass at the end catches anything deferred."""
        if spec.protocol == "staged":
            ready = [ep]
            score_staged_experiment(store, spec.name, ready, conditioned, finished)
        else:
            ready = [ep] if ep.baseline_id is None or ep.baseline_id in finished else []
            ready += [m for m in twins.get(ep.episode_id, []) if m.episode_id in finished]
            score_experiment(store, spec.name, ready, finished)
        scored.update(m.episode_id for m in ready)

    async def one(ep: PlannedEpisode) -> None:
        if ep.episode_id in done_ids:
            summary.skipped += 1
            if progress:
                progress("skipped", ep, None)
            return
        async with gate:
            try:
                await play_episode(
                    store,
                    hub,
                    spec.name,
                    ep.episode_id,
                    conditioned[(ep.scenario_id, ep.condition)],
                    agents,
                    ep.mediator,
                    ep.seed,
                    spec.budget,
                    ep.condition,
                    "mediated" if ep.baseline_id or spec.protocol == "staged" else "unmediated",
                    ep.baseline_id,
                    protocol=spec.protocol,
                    rounds=spec.rounds,
                    retrieved=retrieved.get((ep.scenario_id, ep.condition), ()),
                )
            except Exception as exc:  # recorded in the store; retried on resume
                summary.failed += 1
                summary.errors.append(f"{ep.episode_id}: {type(exc).__name__}: {exc}")
                if progress:
                    progress("failed", ep, str(exc))
                return
        summary.done += 1
        finished.add(ep.episode_id)
        score_finished(ep)
        if progress:
            progress("done", ep, None)

    await asyncio.gather(*(one(ep) for ep in episodes))
    rest = [ep for ep in episodes if ep.episode_id not in scored]
    if spec.protocol == "staged":
        score_staged_experiment(store, spec.name, rest, conditioned)
    else:
        score_experiment(store, spec.name, rest)
    if spec.evaluators:
        from disputelab.experiments.judging import evaluate_run

        judge = spec.models.get("judge", "rule")
        for evaluator in spec.evaluators:
            # Judge calls go through the response cache, so a resumed run re-scores free.
            await evaluate_run(store, spec.name, evaluator, hub, [] if judge == "rule" else [judge])
    return summary


async def condition_scenarios(
    spec: ExperimentSpec, scenarios: dict[str, Scenario], hub: ModelHub
) -> dict[tuple[str, str], Scenario]:
    """Every (scenario, condition) cell's scenario. With a `writer` model, the conditions
    an LLM can write (parties:+1, history:x5, cause:) are written by it, once per cell and
    through the response cache, so a resumed experiment sees the very same scenarios."""
    writer_spec = spec.models.get("writer")
    if writer_spec is None or writer_spec == "rule":
        return {
            (s, c): apply_condition(scenarios[s], c) for s in scenarios for c in spec.conditions
        }
    from disputelab.agents.scenario_writer import apply_condition_with_model

    writer = hub.model(writer_spec, "writer")
    out = {}
    for sid, base in scenarios.items():
        for cond in spec.conditions:
            out[(sid, cond)] = await apply_condition_with_model(base, cond, writer)
    return out


def score_staged_experiment(
    store: Store,
    run_id: str,
    episodes: list[PlannedEpisode],
    conditioned: dict[tuple[str, str], Scenario],
    complete: set[str] | None = None,
) -> None:
    """AgentMediation outcome and solution scores for every complete staged episode."""
    complete = store.complete_episode_ids(run_id) if complete is None else complete
    for ep in episodes:
        if ep.episode_id in complete:
            episode = store.load_episode(ep.episode_id).episode
            scores = agentmediation.score_staged(
                episode, conditioned[(ep.scenario_id, ep.condition)]
            )
            store.add_scores(
                ep.episode_id, agentmediation.EVALUATOR, agentmediation.VERSION, scores
            )


def score_experiment(
    store: Store,
    run_id: str,
    episodes: list[PlannedEpisode],
    complete: set[str] | None = None,
) -> None:
    """SoCRATES scores for every complete episode, mediated ones against their twin."""
    complete = store.complete_episode_ids(run_id) if complete is None else complete
    loaded: dict[str, Episode] = {}

    def get(eid: str) -> Episode:
        if eid not in loaded:
            loaded[eid] = store.load_episode(eid).episode
        return loaded[eid]

    for ep in episodes:
        if ep.episode_id not in complete:
            continue
        base = get(ep.baseline_id) if ep.baseline_id in complete else None
        scores = socrates.score_episode(get(ep.episode_id), base)
        store.add_scores(ep.episode_id, socrates.EVALUATOR, socrates.VERSION, scores)


__all__ = ["SpecError", "Summary", "run_experiment"]
