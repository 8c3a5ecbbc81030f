"""Play a planned single run: condition the scenario (with the writer model where the
condition needs one), retrieve legal bases for the expertise condition, play the episode
and its twin, and read them with the plan's tracker, all on one event loop."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from disputelab.episode import Turn
from disputelab.errors import PlanError, Problem
from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.trackers import LLM_TRACKERS
from disputelab.experiments.episodes import RunResult, check_embeddings, run_single
from disputelab.experiments.judging import evaluate_run
from disputelab.llm.models import ModelHub
from disputelab.plan.run import RunPlan
from disputelab.protocols.base import retrieval_protocols
from disputelab.scenario.io import ScenarioError, load_scenario
from disputelab.scenario.schema import Scenario
from disputelab.store.sqlite import Store

Scores = dict[str, dict[str, MetricResult]]  # by episode id, as `evaluate_run` gives


async def conditioned(plan: RunPlan, hub: ModelHub) -> Scenario:
    """The plan's scenario under its condition; a condition a model writes (parties:+1,
    history:x5, cause:) is written by the run's model when it has one."""
    from disputelab.authoring.scenario_writer import apply_condition_with_model, needs_writer
    from disputelab.scenario.behaviour import Behaviour

    writer = None
    if plan.writer is not None and needs_writer(plan.condition):
        writer = hub.model(plan.writer, "writer")
    behaviour = Behaviour.of(plan.params.model_dump().get("behaviour"))
    return await apply_condition_with_model(plan.scenario, plan.condition, writer, behaviour)


def neighbours(plan: RunPlan, library: Path | None) -> list[Scenario]:
    """The other cases beside the plan's scenario: its file's folder, or the store's
    library for an imported id; the expertise condition retrieves from their bases."""
    path = Path(plan.ref)
    folder = path.parent if path.is_file() else library
    if folder is None or plan.corpus is not None:
        return []
    found: list[Scenario] = []
    for f in sorted(folder.glob("*.y*ml")) + sorted(folder.glob("*.json")):
        try:
            found.append(load_scenario(f))
        except ScenarioError:
            continue  # a stray file beside the cases does not block the run
    return found


def retrieved(plan: RunPlan, scenario: Scenario, library: Path | None) -> tuple[str, ...]:
    """Legal bases for the expertise condition, from the plan's corpus, else from the
    cases beside the scenario; stored-topK reads the case's own list."""
    from disputelab.legal.expertise import bases_for

    if not plan.protocol.uses_retrieval:
        return ()
    if scenario.legal is None or scenario.legal.retrieval_top_k == 0:
        return ()
    return bases_for(plan.corpus, neighbours(plan, library), scenario)


def check_expertise(plan: RunPlan, scenario: Scenario) -> None:
    """A condition written by a model may still hand the scenario an expertise level."""
    legal = scenario.legal
    if legal is not None and legal.retrieval_top_k and not plan.protocol.uses_retrieval:
        names = " or ".join(retrieval_protocols())
        raise PlanError(
            "",
            [
                Problem(
                    f"the expertise condition applies to the {names} protocol, whose "
                    f"mediator proposes legal bases, and this run plays the "
                    f"{plan.protocol.name} protocol"
                )
            ],
        )


async def track(store: Store, plan: RunPlan, result: RunResult, hub: ModelHub) -> Scores:
    """Score the run's episodes with the plan's tracker; stored as `evaluate` stores them."""
    if plan.tracker is None:
        return {}
    judges = [plan.cast.model("judge")] if plan.tracker in LLM_TRACKERS else []
    return await evaluate_run(store, result.run_id, plan.tracker, hub, judges, plan.tracker)


async def play_run(
    store: Store,
    plan: RunPlan,
    hub: ModelHub,
    on_turn: Callable[[Turn], None] | None = None,
) -> RunResult:
    """Play, store and score the planned run, and read it with the plan's tracker."""
    scenario = await conditioned(plan, hub)
    check_expertise(plan, scenario)
    await check_embeddings(hub, [plan.embeddings])  # before the run is recorded
    library = Path(store.root) / "library"
    result = await run_single(
        store,
        scenario,
        plan.cast,
        plan.seed,
        plan.protocol.name,
        plan.params.model_dump(exclude_unset=True),
        plan.condition,
        hub,
        retrieved(plan, scenario, library),
        on_turn,
        {name: plan.cast_for(name) for name in plan.backbones},
        plan.shared_twin,
    )
    result.scenario = scenario
    result.tracker = plan.tracker
    result.tracked = await track(store, plan, result, hub)
    for part in result.by_model.values():  # each backbone's read with the same tracker
        part.scenario, part.tracker, part.tracked = scenario, plan.tracker, result.tracked
    return result
