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

Each command group of the command line has a module here, which returns plain data for
the command to print: `catalog` (scenarios, conditions, protocols, presets, datasets),
`cases` (checking scenario files, importing external cases), `stores` (runs, damage
checks, recovery, the report server), `bench`, `sensitivity`, `judge_validation`,
`curation`, `exemplars` (the bilateral remediator's) and `memory` (the settlement
counsel's). The most used of their functions are re-exported here.
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

# The command groups' modules import nothing from here at import time; what they need
# of the front door (store paths, the library) they import when called.
from disputelab.api import cases, catalog, play, stores
from disputelab.api._lazy import lazy_attribute
from disputelab.api.cases import import_cases, validate_scenario_file
from disputelab.api.catalog import (
    CatalogError,
    behaviour_parameters,
    condition_effects,
    conditions,
    datasets,
    describe_preset,
    describe_protocol,
    fetch_dataset,
    presets,
    protocols,
    scenarios,
    show_scenario,
)
from disputelab.api.stores import check_store, list_runs, recover_store
from disputelab.episode import Episode, Turn
from disputelab.errors import DisputelabError, PlanError, Problem, WriteFailed
from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.registry import get_evaluator, on_demand_evaluators
from disputelab.evaluation.trackers import LLM_TRACKERS, TRACKERS
from disputelab.llm.base import ModelError
from disputelab.llm.cache import CacheError
from disputelab.llm.models import ModelConfigError, ModelHub, Profile
from disputelab.llm.wrappers import RoleUsage
from disputelab.plan import experiment as experiment_plans
from disputelab.plan import run as run_plans
from disputelab.plan.cast import RULE, embeddings_line
from disputelab.plan.experiment import ExperimentPlan, SpecSource
from disputelab.plan.params import chosen_protocol
from disputelab.plan.run import RunPlan
from disputelab.plan.spec import ExperimentSpec, SpecError
from disputelab.protocols.base import (
    DEFAULT_PROTOCOL,
    PROTOCOLS,
    DisputeProtocol,
    ParamsError,
    mediator_kinds,
    party_kinds,
)
from disputelab.redact import redact
from disputelab.scenario.conditions import apply_condition
from disputelab.scenario.inputs import UserFileError, make_user_dir, path_kind
from disputelab.scenario.io import MAX_SEED, ScenarioError
from disputelab.scenario.library import resolve_scenario
from disputelab.scenario.schema import Scenario
from disputelab.store.health import StoreError
from disputelab.store.sqlite import Store

if TYPE_CHECKING:
    import pandas as pd

    from disputelab.compare.leaderboard import Leaderboard
    from disputelab.experiments.episodes import RunResult
    from disputelab.experiments.executors import Executor, ProcessExecutor
    from disputelab.experiments.on_ray import RayExecutor, address_problem
    from disputelab.experiments.runner import Progress, Summary

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
    "write_file",
    "write_plots",
    "write_report",
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


@dataclass(frozen=True)
class ModelCheck:
    """Model names found usable: the profiles they were read with, and warnings as
    (model name, redacted; what is wrong) that do not stop a run from starting."""

    profiles: dict[str, Profile]
    warnings: list[tuple[str, str]]


def check_models(
    models: Iterable[str],
    *,
    concurrency: int | None = None,
    timeout_s: float | None = None,
    keys: bool = True,
    on_warning: Callable[[str, str], None] | None = None,
) -> ModelCheck:
    """Check that every model name can be used: ModelConfigError for one that cannot.
    `concurrency` is the run's: an endpoint whose profile allows fewer calls in flight is
    warned of, since it holds the whole run back. Without `keys` (a plan, not a run) a
    missing API key or extra is a warning rather than an error. `on_warning` hears each
    warning as it is found (before an error about a later name)."""
    from disputelab.llm.models import (
        CONFIG_NAME,
        MissingExtraError,
        MissingKeyError,
        check_installed,
        load_profiles,
        parse_model,
    )
    from disputelab.redact import redact

    warnings: list[tuple[str, str]] = []

    def warn(spec: str, text: str) -> None:
        warnings.append((redact(spec), text))
        if on_warning is not None:
            on_warning(*warnings[-1])

    profiles = load_profiles()
    for spec in sorted(set(models) - {RULE}):
        try:
            check_installed(spec)
            endpoint = parse_model(spec, profiles, timeout_s, concurrency)
        except (MissingKeyError, MissingExtraError) as exc:
            if keys:
                raise
            warn(spec, f"{exc}; the run will need it")
            continue
        if spec in profiles and endpoint.caps(concurrency):
            warn(
                spec,
                f"its profile allows {endpoint.limit(concurrency)} calls in flight, fewer "
                f"than the run's concurrency of {concurrency}; raise `concurrency` in "
                f"{CONFIG_NAME} to use it all",
            )
    return ModelCheck(profiles, warnings)


def open_models(
    models: Iterable[str],
    *,
    store: StoreLike = None,
    concurrency: int | None = None,
    timeout_s: float | None = None,
    profiles: dict[str, Profile] | None = None,
) -> ModelHub:
    """A hub of the named models over the store's response cache, each name checked
    first (ModelConfigError for one that cannot be used; CacheError for a cache that
    cannot be opened). `profiles` from `check_models` skip the check."""
    from disputelab.llm.cache import CACHE_NAME

    names = sorted(set(models) - {RULE})
    if profiles is None:
        profiles = check_models(names, concurrency=concurrency, timeout_s=timeout_s).profiles
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
    every problem. Options: protocol, preset, mediator, parties, model (one model, or a
    list of several to compare), models (a model per role: parties, mediator, judge,
    mediator.when, writer), condition, seed, params (the protocol's), budget (its turn
    budget), corpus, tracker."""
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

    `model=["A", "B"]` plays the run once with each model in every seat one model would
    fill (a model axis, as `models: {parties: [A, B]}` makes in an experiment): the same
    scenario, condition and seed, each episode's id ending `@MODEL`; `.by_model` holds
    each model's result, `.metrics()` has a column per arm and model, and `compare(
    [result.run_id])` ranks them. The judge and the writer serve every model: name them
    in `models`.
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
    spec: SpecSource | ExperimentPlan,
    store: StoreLike,
    overrides: Mapping[str, Any],
    name: str | None = None,
) -> ExperimentPlan:
    if isinstance(spec, ExperimentPlan):
        if name is not None and name != spec.name:
            raise PlanError("name", ["a plan is named already; give name to plan_experiment"])
        return spec
    return plan_experiment(spec, overrides, store=store, name=name)


def plan_experiment(
    spec: SpecSource,
    overrides: Mapping[str, Any] | None = None,
    *,
    store: StoreLike = None,
    base: Path | None = None,
    name: str | None = None,
) -> ExperimentPlan:
    """Check an experiment and resolve it into its plan without running anything: the
    spec (a file, a mapping of its fields, or a validated spec) with `overrides`
    (replicates, limit_scenarios, ablate, ...) in place of its own. `name` stores it under
    another experiment name than the spec's, so that a trial does not take the full run's
    (PlanError when it cannot be a run id). SpecError lists every problem, and every
    missing prerequisite (a statute corpus, a saved exemplar set). `plan.summary()` is
    what `disputelab experiment --dry-run` prints."""
    from disputelab.plan.prerequisites import prerequisite_problems

    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    plan = experiment_plans.plan_experiment(spec, given, library(store), base=base, name=name)
    if problems := prerequisite_problems(plan, store_path(store)):
        source = str(spec) if isinstance(spec, str | os.PathLike) else plan.name
        raise SpecError(source, problems)
    return plan


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
    name: str | None = None,
    **overrides: Any,
) -> ExperimentResult:
    """`experiment`, for code already inside an event loop; without `ablations`, only
    the plan's own grid is played (its ablations are plans of their own)."""
    from disputelab.experiments.runner import run_experiment

    plan = _experiment_plan(spec, store, overrides, name)
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
    name: str | None = None,
    **overrides: Any,
) -> ExperimentResult:
    """Run (or, with `resume`, continue) an experiment from a spec file or a mapping of
    its fields, with `overrides` (replicates, limit_scenarios, ablate) in place of the
    spec's own: every grid is played, stored and scored as it goes, then any ablation's.
    `name` stores it under that experiment name instead of the spec's (a trial beside the
    full run); resume it with the same `name`.
    """
    plan = _experiment_plan(spec, store, overrides, name)
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


def write_report(
    run: str,
    path: str | os.PathLike[str],
    *,
    format: str = "md",
    store: StoreLike = None,
) -> Path:
    """`report`'s text written to `path` whole or not at all (WriteFailed, one line, when
    it cannot be): an `html` page is written while the run is read, never held whole in
    memory, so a 2,000-episode experiment's page takes tens of MB, not hundreds."""
    from disputelab import atomic
    from disputelab.report.dispatch import write

    opened = open_store(store, writable=False)
    run_id = opened.resolve_run(run)
    try:
        with atomic.replacing(path, "w") as out:
            write(opened, run_id, out, format, _store_option(opened))
    except OSError as exc:
        raise WriteFailed(str(path), atomic.why_not_written(exc)) from None
    return Path(path)


def _store_option(store: Store) -> str:
    """What a suggested command repeats to reach `store`: nothing for the default one."""
    root = Path(store.root)
    return "" if root == DEFAULT_STORE else f"--store {root} "


def write_file(path: str | os.PathLike[str], data: str | bytes) -> Path:
    """Write `data` (text in UTF-8, or bytes) to `path` whole or not at all: a kill or a
    full disk leaves the file that was there. WriteFailed (one line) when it cannot."""
    from disputelab import atomic

    try:
        if isinstance(data, str):
            atomic.write_text(path, data)
        else:
            atomic.write_bytes(path, data)
    except OSError as exc:
        raise WriteFailed(str(path), atomic.why_not_written(exc)) from None
    return Path(path)


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


# ---- comparisons ------------------------------------------------------------------------


def compare(
    runs: Sequence[str] = (),
    *,
    experiment: str | None = None,
    metric: str | None = None,
    by: str = "model",
    higher_is_better: bool = True,
    resamples: int = 1000,
    store: StoreLike = None,
) -> Leaderboard:
    """Rank the models (or mediators, or whole runs) of stored runs, or of the experiment
    named `experiment`, on `metric`: Bradley-Terry strengths from paired episodes, each
    metric side by side, paired differences with Holm-adjusted tests (see
    `disputelab.compare`). `.to_markdown()`, `.to_json()`, `.to_csv()` render it."""
    from disputelab.compare import compare as compare_runs

    named = [*runs, *([experiment] if experiment else [])]
    return compare_runs(
        open_store(store, writable=False), named, metric, by, higher_is_better, resamples
    )


# ---- the names the command groups' results are made of ---------------------------------

# Imported on first use: the experiment runner and its executors bring the statistics.
_LAZY = {
    "RunResult": "disputelab.experiments.episodes",
    "Executor": "disputelab.experiments.executors",
    "ProcessExecutor": "disputelab.experiments.executors",
    "RayExecutor": "disputelab.experiments.on_ray",
    "address_problem": "disputelab.experiments.on_ray",
    "Summary": "disputelab.experiments.runner",
}


def __getattr__(name: str) -> Any:
    return lazy_attribute(globals(), _LAZY, name)


# The command groups' functions; the types their results are made of and the errors they
# raise; and the vocabulary (protocols, kinds, trackers) that options and help name.
__all__ += [
    "DEFAULT_PROTOCOL",
    "LLM_TRACKERS",
    "MAX_SEED",
    "PROTOCOLS",
    "RULE",
    "TRACKERS",
    "CacheError",
    "CatalogError",
    "DisputeProtocol",
    "DisputelabError",
    "Episode",
    "Executor",
    "ExperimentPlan",
    "ExperimentSpec",
    "MetricResult",
    "ModelCheck",
    "ModelConfigError",
    "ModelError",
    "ModelHub",
    "ParamsError",
    "PlanError",
    "Problem",
    "ProcessExecutor",
    "Profile",
    "RayExecutor",
    "RoleUsage",
    "RunPlan",
    "RunResult",
    "Scenario",
    "ScenarioError",
    "SpecError",
    "Store",
    "StoreError",
    "Summary",
    "Turn",
    "UserFileError",
    "WriteFailed",
    "address_problem",
    "behaviour_parameters",
    "cases",
    "catalog",
    "check_evaluation",
    "check_models",
    "check_store",
    "chosen_protocol",
    "compare",
    "condition_effects",
    "conditions",
    "datasets",
    "describe_preset",
    "describe_protocol",
    "embeddings_line",
    "episode_frame",
    "fetch_dataset",
    "get_evaluator",
    "import_cases",
    "library",
    "list_runs",
    "make_user_dir",
    "mediator_kinds",
    "on_demand_evaluators",
    "party_kinds",
    "path_kind",
    "play",
    "presets",
    "protocols",
    "recover_store",
    "redact",
    "run_loop",
    "scenarios",
    "show_scenario",
    "store_path",
    "stores",
    "validate_scenario_file",
]
