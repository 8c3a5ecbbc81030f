"""The front door: what a notebook calls, and the only thing the command line calls to do
its work.

    import disputelab as dl

    result = dl.run("tenancy", mediator="rule")
    print(result.metrics())                    # a pandas frame: metric x arm
    exp = dl.experiment({"name": "demo", "scenarios": ["tenancy", "workplace"]})
    print(exp.tables())                        # the protocol's tables, in markdown

Every function validates what it is given before anything is played or recorded, and
raises a `DisputelabError` (a `PlanError` listing every problem) when it cannot. The
synchronous functions run their own event loop (in a thread of their own where one is
already running, as in a Jupyter cell); async code can await the `_async` twins.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from disputelab.errors import DisputelabError, PlanError
from disputelab.plan import experiment as experiment_plans
from disputelab.plan import run as run_plans
from disputelab.plan.cast import RULE
from disputelab.plan.experiment import ExperimentPlan, SpecSource
from disputelab.plan.run import RunPlan
from disputelab.scenario.conditions import apply_condition
from disputelab.scenario.library import resolve_scenario
from disputelab.scenario.schema import Scenario
from disputelab.store.sqlite import Store

if TYPE_CHECKING:
    import pandas as pd

    from disputelab.episode import Turn
    from disputelab.evaluation.metrics import MetricResult
    from disputelab.experiments.episodes import RunResult
    from disputelab.experiments.executors import Executor
    from disputelab.experiments.runner import Progress, Summary
    from disputelab.llm.models import ModelHub

T = TypeVar("T")
StoreLike = str | os.PathLike[str] | Store | None
Scores = dict[str, dict[str, "MetricResult"]]

DEFAULT_STORE = Path("disputelab-runs")
STORE_ENV = "DISPUTELAB_STORE"

__all__ = [
    "DEFAULT_STORE",
    "ExperimentResult",
    "evaluate",
    "evaluate_async",
    "experiment",
    "experiment_async",
    "load_scenario",
    "open_models",
    "open_store",
    "plan_experiment",
    "plan_run",
    "report",
    "run",
    "run_async",
    "runs_frame",
    "write_plots",
]


def store_path(store: StoreLike = None) -> Path:
    """Where a store lives: the path given, else $DISPUTELAB_STORE, else ./disputelab-runs."""
    if isinstance(store, Store):
        return Path(store.root)
    if store is not None:
        return Path(store)
    return Path(os.environ.get(STORE_ENV) or DEFAULT_STORE)


def open_store(path: StoreLike = None, *, writable: bool = True) -> Store:
    """The run store at `path` (see `store_path`), made when it does not exist yet; a
    `Store` given is handed back as it is."""
    if isinstance(path, Store):
        return path
    return Store(store_path(path), writable)


def library(store: StoreLike = None) -> Path:
    """Where `scenarios import` keeps a store's imported cases."""
    return store_path(store) / "library"


def load_scenario(
    ref: str | os.PathLike[str], *, condition: str | None = None, store: StoreLike = None
) -> Scenario:
    """A scenario by built-in id, id imported into the store's library, or file path;
    under `condition` (offline: a condition a model writes is approximated by rules)."""
    scenario = resolve_scenario(str(ref), library(store))
    return apply_condition(scenario, condition) if condition else scenario


def open_models(
    models: Iterable[str],
    *,
    store: StoreLike = None,
    concurrency: int | None = None,
    timeout_s: float | None = None,
) -> ModelHub:
    """A hub of the named models over the store's response cache, each name checked
    first (ModelConfigError for one that cannot be used)."""
    from disputelab.llm.cache import CACHE_NAME
    from disputelab.llm.models import ModelHub, check_installed, load_profiles, parse_model

    names = sorted(set(models) - {RULE})
    profiles = load_profiles()
    for name in names:
        check_installed(name)
        parse_model(name, profiles, timeout_s, concurrency)
    hub = ModelHub(
        store_path(store) / CACHE_NAME, profiles, timeout_s=timeout_s, concurrency=concurrency
    )
    if names:
        hub.open_cache()
    return hub


def run_loop(work: Callable[[], Coroutine[Any, Any, T]], hub: ModelHub | None = None) -> T:
    """Run `work` on a new event loop, closing the hub's connections on that same loop (a
    connection pool belongs to the loop it ran on). Where a loop is already running in
    this thread (a Jupyter cell), the new loop runs in a thread of its own, so that the
    synchronous functions work in a notebook as they do in a script."""

    async def then_close() -> T:
        try:
            return await work()
        finally:
            if hub is not None:
                await hub.aclose()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(then_close())
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="disputelab") as pool:
        return pool.submit(asyncio.run, then_close()).result()


# ---- one run ----------------------------------------------------------------------------


def plan_run(
    scenario: str | os.PathLike[str] | Scenario, *, store: StoreLike = None, **options: Any
) -> RunPlan:
    """Check a run and resolve it into its plan without playing anything; PlanError lists
    every problem. Options: protocol, preset, mediator, parties, model, models (a model per
    role: parties, mediator, judge, mediator.when), condition, seed, params (the
    protocol's), budget (its turn budget), corpus, tracker."""
    ref = scenario if isinstance(scenario, Scenario) else str(scenario)
    return run_plans.plan_run(ref, library=library(store), **options)


def _run_plan(
    scenario: str | os.PathLike[str] | Scenario, store: StoreLike, **options: Any
) -> RunPlan:
    return plan_run(scenario, store=store, **options)


async def run_async(
    scenario: str | os.PathLike[str] | Scenario | RunPlan,
    *,
    store: StoreLike = None,
    hub: ModelHub | None = None,
    on_turn: Callable[[Turn], None] | None = None,
    **options: Any,
) -> RunResult:
    """`run`, for code already inside an event loop."""
    from disputelab.experiments.single import play_run

    plan = scenario if isinstance(scenario, RunPlan) else _run_plan(scenario, store, **options)
    opened = open_store(store)
    hub = hub or open_models(plan.models, store=opened)
    return await play_run(opened, plan, hub, on_turn)


def run(
    scenario: str | os.PathLike[str] | Scenario | RunPlan,
    *,
    store: StoreLike = None,
    hub: ModelHub | None = None,
    on_turn: Callable[[Turn], None] | None = None,
    **options: Any,
) -> RunResult:
    """Play one episode of `scenario` (and, where the protocol plays twins and a mediator
    sits, its matched unmediated episode first), store and score it.

    Options are those of `plan_run`: protocol, preset, mediator, parties, model, models
    (per role), condition, seed, params (the protocol's), corpus, tracker. The result
    holds both episodes, their scores (`.metrics()` as a pandas frame) and the run id.
    """
    plan = scenario if isinstance(scenario, RunPlan) else _run_plan(scenario, store, **options)
    opened = open_store(store)
    hub = hub or open_models(plan.models, store=opened)
    return run_loop(lambda: run_async(plan, store=opened, hub=hub, on_turn=on_turn), hub)


# ---- experiments ------------------------------------------------------------------------


@dataclass
class ExperimentResult:
    """An experiment's grids as they ended, and the store that holds them."""

    plan: ExperimentPlan
    summaries: list[Summary]
    store: Store = field(repr=False)

    @property
    def name(self) -> str:
        return self.plan.name

    @property
    def failed(self) -> int:
        return sum(s.failed for s in self.summaries)

    @property
    def interrupted(self) -> bool:
        return any(s.interrupted for s in self.summaries)

    def tables(self) -> str:
        """The experiment's tables in its protocol's layout (markdown)."""
        return report(self.name, store=self.store)

    def scores(self) -> pd.DataFrame:
        """One row per episode: its cell and every metric scored."""
        return episode_frame(self.store, self.name)


def episode_frame(store: Store, run_id: str) -> pd.DataFrame:
    """A run's episodes as a pandas frame, one row each, a column per metric."""
    import pandas as pd

    from disputelab.report.render import run_rows

    return pd.DataFrame(run_rows(store, [run_id]))


def _experiment_plan(
    spec: SpecSource | ExperimentPlan, store: StoreLike, overrides: Mapping[str, Any]
) -> ExperimentPlan:
    if isinstance(spec, ExperimentPlan):
        return spec
    return plan_experiment(spec, overrides, store=store)


def plan_experiment(
    spec: SpecSource,
    overrides: Mapping[str, Any] | None = None,
    *,
    store: StoreLike = None,
    base: Path | None = None,
) -> ExperimentPlan:
    """Check an experiment and resolve it into its plan without running anything: the
    spec (a file, a mapping of its fields, or a validated spec) with `overrides`
    (replicates, limit_scenarios, ablate, ...) in place of its own. SpecError lists every
    problem. `plan.summary()` is what `disputelab experiment --dry-run` prints."""
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    return experiment_plans.plan_experiment(spec, given, library(store), base=base)


async def experiment_async(
    spec: SpecSource | ExperimentPlan,
    *,
    resume: bool = False,
    concurrency: int | None = None,
    store: StoreLike = None,
    hub: ModelHub | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    on_plan: Callable[[int], None] | None = None,
    stop: threading.Event | None = None,
    source: str = "",
    ablations: bool = True,
    **overrides: Any,
) -> ExperimentResult:
    """`experiment`, for code already inside an event loop; without `ablations`, only
    the plan's own grid is played (its ablations are plans of their own)."""
    from disputelab.experiments.runner import run_experiment

    plan = _experiment_plan(spec, store, overrides)
    opened = open_store(store)
    hub = hub or open_models(plan.models, store=opened, concurrency=concurrency or plan.concurrency)
    summaries = []
    for grid in plan.grids() if ablations else (plan,):
        summary = await run_experiment(
            opened, grid, hub, resume, concurrency, progress, on_plan, stop, source, executor
        )
        summaries.append(summary)
        if summary.interrupted:
            break
    return ExperimentResult(plan, summaries, opened)


def experiment(
    spec: SpecSource | ExperimentPlan,
    *,
    resume: bool = False,
    concurrency: int | None = None,
    store: StoreLike = None,
    hub: ModelHub | None = None,
    executor: Executor | None = None,
    progress: Progress | None = None,
    **overrides: Any,
) -> ExperimentResult:
    """Run (or, with `resume`, continue) an experiment from a spec file or a mapping of
    its fields, with `overrides` (replicates, limit_scenarios, ablate) in place of the
    spec's own: every grid is played, stored and scored as it goes, then any ablation's.
    """
    plan = _experiment_plan(spec, store, overrides)
    opened = open_store(store)
    hub = hub or open_models(plan.models, store=opened, concurrency=concurrency or plan.concurrency)
    return run_loop(
        lambda: experiment_async(
            plan,
            resume=resume,
            concurrency=concurrency,
            store=opened,
            hub=hub,
            executor=executor,
            progress=progress,
        ),
        hub,
    )


# ---- stored runs ------------------------------------------------------------------------


def check_evaluation(
    evaluator: str,
    judges: Sequence[str] = (),
    tracker: str = "self-report",
    rouge: str = "char",
    bert_model: str = "",
) -> None:
    """PlanError when a pass of `evaluator` cannot start: an unknown name, a judge it
    needs, or something it needs that is not here (a BERTScore model, its library)."""
    from disputelab.experiments.judging import evaluation_problems

    problems = evaluation_problems(evaluator, _judged(judges), tracker, rouge, bert_model)
    if problems:
        raise PlanError("", problems)


def _judged(judges: Sequence[str]) -> list[str]:
    return [j for j in judges if j != RULE]


async def evaluate_async(
    run: str = "last",
    evaluator: str = "self-report",
    *,
    judges: Sequence[str] = (),
    tracker: str = "self-report",
    rouge: str = "char",
    bert_model: str = "",
    store: StoreLike = None,
    hub: ModelHub | None = None,
    on_scored: Callable[[int, int], None] | None = None,
) -> Scores:
    """`evaluate`, for code already inside an event loop."""
    from disputelab.experiments.judging import evaluate_run

    check_evaluation(evaluator, judges, tracker, rouge, bert_model)
    opened = open_store(store)
    run_id = opened.resolve_run(run)
    hub = hub or open_models(judges, store=opened)
    return await evaluate_run(
        opened, run_id, evaluator, hub, _judged(judges), tracker, on_scored, rouge, bert_model
    )


def evaluate(
    run: str = "last",
    evaluator: str = "self-report",
    *,
    judges: Sequence[str] = (),
    tracker: str = "self-report",
    rouge: str = "char",
    bert_model: str = "",
    store: StoreLike = None,
    hub: ModelHub | None = None,
    on_scored: Callable[[int, int], None] | None = None,
) -> Scores:
    """Re-score a stored run's complete episodes with `evaluator` (judged ones ask
    `judges`), without simulating again; the scores are stored beside the old ones and
    returned by episode id."""
    check_evaluation(evaluator, judges, tracker, rouge, bert_model)
    opened = open_store(store)
    hub = hub or open_models(judges, store=opened)

    def work() -> Coroutine[Any, Any, Scores]:
        return evaluate_async(
            run,
            evaluator,
            judges=judges,
            tracker=tracker,
            rouge=rouge,
            bert_model=bert_model,
            store=opened,
            hub=hub,
            on_scored=on_scored,
        )

    return run_loop(work, hub)


def report(run: str = "last", *, format: str = "md", store: StoreLike = None) -> str:
    """A stored run as text: `md` (a run's transcript and metrics, or an experiment's
    tables in its protocol's layout), `json` (every turn with its typed action), `csv`
    (one row per episode) or `html` (one self-contained page)."""
    from disputelab.report.dispatch import render

    opened = open_store(store, writable=False)
    return render(opened, opened.resolve_run(run), format, _store_option(opened))


def _store_option(store: Store) -> str:
    """What a suggested command repeats to reach `store`: nothing for the default one."""
    root = Path(store.root)
    return "" if root == DEFAULT_STORE else f"--store {root} "


def write_plots(run: str, folder: str | os.PathLike[str], *, store: StoreLike = None) -> list[Path]:
    """An experiment's plots (PNG) in `folder`; ReportError with the reason when there is
    nothing to draw."""
    from disputelab.report.dispatch import write_plots as write

    opened = open_store(store, writable=False)
    return write(opened, opened.resolve_run(run), Path(folder))


def runs_frame(store: StoreLike = None) -> pd.DataFrame:
    """The store's runs as a pandas frame: id, kind, label, episodes done of planned."""
    import pandas as pd

    return pd.DataFrame(open_store(store, writable=False).runs())


__all__ += ["DisputelabError", "ExperimentPlan", "PlanError", "RunPlan"]
