"""`disputelab experiment`: run (or resume) an experiment grid from a YAML spec."""

from __future__ import annotations

import importlib.util
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.markup import escape

from disputelab import api
from disputelab.api import SpecError, embeddings_line
from disputelab.api.stores import run_id_problem
from disputelab.cli.common import (
    check_models,
    counted,
    err,
    fail,
    fail_problems,
    open_models,
    open_store,
    out,
    print_usage,
    run_with_models,
    state,
    store_option,
    warn,
)
from disputelab.cli.progress import ticker
from disputelab.errors import DisputelabError

if TYPE_CHECKING:
    from disputelab.api import Executor, ExperimentPlan, ModelHub, Summary


def experiment(
    spec_path: Annotated[Path, typer.Argument(metavar="SPEC.yaml", help="Experiment spec.")],
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue a stopped run; finished episodes are kept.")
    ] = False,
    concurrency: Annotated[
        int | None, typer.Option(min=1, max=1024, help="Episodes in flight (overrides spec).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Check the spec and print the plan; run nothing.")
    ] = False,
    replicates: Annotated[
        int | None, typer.Option(min=1, max=10_000, help="Replicates (overrides spec).")
    ] = None,
    limit_scenarios: Annotated[
        int | None, typer.Option(min=1, help="Use only the first N scenarios (quick trials).")
    ] = None,
    executor: Annotated[
        str, typer.Option(help="Where episodes play: local (this process), processes or ray.")
    ] = "local",
    workers: Annotated[
        int | None, typer.Option(min=1, max=256, help="Worker processes or Ray actors.")
    ] = None,
    address: Annotated[
        str | None, typer.Option(help="Ray cluster address (default: a local Ray instance).")
    ] = None,
    ablate: AblateOption = None,
    name: NameOption = None,
) -> None:
    """Run an experiment grid: scenarios x conditions x mediators x replicates."""
    _check_name(name)
    overrides = {"replicates": replicates, "limit_scenarios": limit_scenarios, "ablate": ablate}
    given: dict[str, Any] = {k: v for k, v in overrides.items() if v is not None}
    where = _executor(executor, workers, address)  # before anything is made or recorded
    plan = _plan(spec_path, given, name)
    given |= {"name": name} if name is not None else {}  # repeated by the resume command
    for warning in plan.warnings:  # repeats dropped from the grid, say
        warn(str(spec_path), warning)
    if dry_run:
        # As a run would, but a key may be set later: a plan is often sized first.
        check_models(plan.models, concurrency or plan.concurrency, keys=False)
        _print_plan(plan, concurrency)
        return
    hub = open_models(plan.models, concurrency or plan.concurrency)
    # The handlers stay in place until the interrupt has been reported: a second signal
    # while it is written must still quit with 130, not with Python's default handler.
    failed = 0
    with stop_on_signals() as stop:
        for grid in plan.grids():
            summary = _run(
                grid, hub, resume, concurrency, _again(spec_path.resolve(), given), stop, where
            )
            if summary.interrupted:
                _interrupted(summary, _again(spec_path, given), concurrency)
            _summary(summary)
            failed += summary.failed
    print_usage(hub)
    out.print(f"[dim]tables: disputelab report {plan.name}[/]")
    if failed:
        raise typer.Exit(1)  # finished, but not every episode: scripts must see it


def _check_name(name: str | None) -> None:
    if name is not None and (problem := run_id_problem(name)):
        fail(f"--name: {problem}")


def _plan(spec_path: Path, overrides: dict[str, Any], name: str | None) -> ExperimentPlan:
    """The experiment's plan, or every problem of the spec or missing prerequisite (an
    exemplar set, a corpus), and exit status 2."""
    try:
        return api.plan_experiment(spec_path, overrides, store=state.store_path, name=name)
    except SpecError as exc:
        fail_problems(exc.source, exc.problems)
    except DisputelabError as exc:
        fail(str(exc))


NameOption = Annotated[
    str | None,
    typer.Option(
        metavar="NAME",
        help="Store it under this experiment name instead of the spec's (a trial beside "
        "the full run); --resume with the same --name continues it.",
    ),
]
AblateOption = Annotated[
    list[str] | None,
    typer.Option(
        help="Also run the grid with a behaviour parameter, or every parameter a condition "
        "acts through (posture:competing), at neutral; `each` for every condition of the "
        "spec. Repeat for more (replaces the spec's ablate:)."
    ),
]


def _executor(name: str, workers: int | None, address: str | None) -> Executor | None:
    """The executor `--executor` names; None plays episodes in this process."""
    from disputelab.api import ProcessExecutor, RayExecutor

    if name not in ("local", "processes", "ray"):
        fail(f"--executor takes local, processes or ray, not {name!r}")
    if address is not None and name != "ray":
        fail("--address names a Ray cluster; use it with --executor ray")
    if name == "local":
        if workers is not None:
            fail("--workers applies to --executor processes or ray")
        return None
    count = workers or os.cpu_count() or 2
    if name == "ray" and importlib.util.find_spec("ray") is None:
        # Said before anything is recorded, not as every episode's failure.
        fail("--executor ray needs Ray: pip install 'disputelab[ray]'")
    if name == "ray" and address is not None:
        from disputelab.api import address_problem

        if (problem := address_problem(address)) is not None:
            fail(problem)  # before anything is recorded, not after minutes of waiting
    return ProcessExecutor(count) if name == "processes" else RayExecutor(count, address)


def _summary(summary: Summary) -> None:
    """What the run did, and why episodes failed if any did."""
    elsewhere = f", {summary.elsewhere} by another process" if summary.elsewhere else ""
    out.print(
        f"experiment [magenta]{summary.run_id}[/]: {summary.planned} episodes planned, "
        f"{summary.done} run, {summary.skipped} already done{elsewhere}, "
        f"{summary.failed} failed"
    )
    if summary.waited:
        out.print(
            f"[dim]{summary.waited} episode(s) were held by another process on this store; "
            "this one waited for them[/]"
        )
    _failures(summary)


def _failures(summary: Summary) -> None:
    """Failed episodes grouped by reason, most frequent first, with one example each."""
    if not summary.failed:
        return
    err.print(f"{summary.failed} episode(s) failed, by reason:", highlight=False)
    for reason, n in sorted(summary.reasons.items(), key=lambda kv: -kv[1]):
        err.print(f"  {n} x {escape(reason)}", highlight=False, soft_wrap=True)
    err.print(
        "failed episodes are kept with their reason and retried by --resume; exit status 1",
        highlight=False,
    )


def _print_concurrency(plan: ExperimentPlan, asked: int | None) -> None:
    """The episodes and calls in flight the run will use, and what embeds the parties'
    memories; an endpoint that holds the run below a concurrency the user set is warned
    about (profiles are, by `check_models`)."""
    p = plan.summary(asked)
    how = "set" if p.concurrency_set else "the default; set `concurrency:` or --concurrency"
    out.print(f"  concurrency: {p.concurrency} episodes in flight ({how})", highlight=False)
    for name in plan.embeddings:
        out.print(f"  embeddings: {embeddings_line(name)}", highlight=False, soft_wrap=True)
    for limit in p.limits:
        out.print(f"  endpoint {limit.line}", highlight=False, soft_wrap=True)
        if p.concurrency_set and limit.model == "local" and limit.calls < p.concurrency:
            warn(
                "local",
                f"{limit.calls} call in flight at a time, fewer than the concurrency of "
                f"{p.concurrency}: episodes will wait on it",
            )


def _print_plan(plan: ExperimentPlan, asked: int | None = None) -> None:
    """The plan of a checked spec: the grid, its episodes, a bound on model calls, and
    the concurrency and endpoint limits that will apply."""
    p = plan.summary(asked)
    twins = " (+ an unmediated twin per cell)" if p.twins else ""
    worlds = f" x {counted(len(plan.worlds), 'world')} ({', '.join(plan.worlds)})"
    out.print(
        f"experiment {plan.name} ({plan.protocol.name}): {counted(p.scenarios, 'scenario')} x "
        f"{counted(p.conditions, 'condition')} x {counted(len(p.mediators), 'mediator')} "
        f"({', '.join(p.mediators)}){twins}{worlds if plan.worlds else ''} x "
        f"{counted(p.replicates, 'replicate')} = "
        f"{counted(p.episodes, 'episode')}",
        highlight=False,
        soft_wrap=True,
    )
    params = ", ".join(f"{k}={v}" for k, v in plan.spec.params.items()) or "none"
    out.print(f"  protocol parameters: {params}", highlight=False)
    if not p.calls:
        out.print("  model calls: none (every role is played by rule agents)", highlight=False)
    for role, n in p.calls.items():
        model = p.models.get(role) or plan.spec.models.get(role, "rule")
        out.print(
            f"  model calls, {role} ({model}): at most {n:,} first attempts (re-asks on top)",
            highlight=False,
        )
    if plan.ablations:
        targets = ", ".join(str(g.spec.ablated) for g in plan.ablations)
        out.print(
            f"  ablation: {len(plan.ablations)} more grid(s) of {p.episodes} episodes, with "
            f"the parameters of {targets} at neutral",
            highlight=False,
            soft_wrap=True,
        )
    _print_concurrency(plan, asked)
    out.print("  dry run: nothing was run or stored", highlight=False)


def _run(
    grid: ExperimentPlan,
    hub: ModelHub,
    resume: bool,
    concurrency: int | None,
    source: str,
    stop: threading.Event,
    executor: Executor | None = None,
) -> Summary:
    """Run one grid under a progress bar of episodes, failures and model spend. Once the
    run is checked and recorded, a grid that calls a model says the concurrency and the
    endpoints' limits it runs under (a rule-only grid has nothing to wait on)."""
    with ticker(f"experiment {grid.name}", hub) as progress:

        def tick(event: str, ep: object, error: str | None) -> None:
            progress.advance(failed=event == "failed")

        def started(planned: int) -> None:
            if grid.models:
                _print_concurrency(grid, concurrency)
            progress.plan(planned)

        work = api.experiment_async(
            grid,
            resume=resume,
            concurrency=concurrency,
            store=open_store(),
            hub=hub,
            executor=executor,
            progress=tick,
            on_plan=started,
            stop=stop,
            source=source,
            ablations=False,
        )
        try:
            return run_with_models(hub, work).summaries[0]
        except SpecError as exc:
            fail_problems(str(exc.source), exc.problems)
        except DisputelabError as exc:  # the store, a condition writer, the corpus
            fail(str(exc).splitlines()[0])
        except ValueError as exc:
            fail(str(exc).splitlines()[0])


def _again(spec_path: Path, overrides: dict[str, Any]) -> str:
    """What to type after `experiment` to go on with this very run: the spec and the
    overrides it was started with."""
    flags = []
    for k, v in overrides.items():
        for value in v if isinstance(v, list) else [v]:
            flags.append(f"--{k.replace('_', '-')} {value}")
    return " ".join([str(spec_path), *flags])


def _interrupted(summary: Summary, again: str, concurrency: int | None) -> NoReturn:
    """Say what was kept and the exact command that goes on from there; exit 130."""
    state.interrupt_reported = True
    if summary.unscored:
        _unscored(summary, again, concurrency)
    kept = summary.skipped + summary.done
    abandoned = f", {summary.abandoned} in flight left for resume" if summary.abandoned else ""
    err.print(
        f"interrupted: {kept} of {summary.planned} episodes done ({summary.done} in this "
        f"run{abandoned}); finished turns and episodes are in the store",
        highlight=False,
        soft_wrap=True,
    )
    err.print(
        f"resume with: {_resume_command(again, concurrency)}",
        highlight=False,
        soft_wrap=True,
    )
    raise typer.Exit(130)


def _resume_command(again: str, concurrency: int | None) -> str:
    """The command that carries an interrupted experiment on, at the concurrency it had."""
    more = f" --concurrency {concurrency}" if concurrency else ""
    return f"disputelab {store_option()}experiment {again} --resume{more}"


def _unscored(summary: Summary, again: str, concurrency: int | None) -> NoReturn:
    """Interrupted after every episode was played, while scoring: say what is unscored
    and the commands that score it; exit 130."""
    named = [n for n in summary.unscored if n != "protocol"]
    what = (["the protocol's own scores"] if "protocol" in summary.unscored else []) + [
        f"evaluator {n}" for n in named
    ]
    err.print(
        f"interrupted while scoring: all {summary.planned} episodes are played and stored, "
        f"but not scored yet: {', '.join(what)}",
        highlight=False,
        soft_wrap=True,
    )
    err.print(
        f"score them with: {_resume_command(again, concurrency)}",
        highlight=False,
        soft_wrap=True,
    )
    for n in named:
        err.print(
            f"or one evaluator with: disputelab {store_option()}evaluate {summary.run_id} "
            f"--evaluator {n} (with --judge-model for each judge the spec names)",
            highlight=False,
            soft_wrap=True,
        )
    raise typer.Exit(130)


@contextmanager
def stop_on_signals() -> Iterator[threading.Event]:
    """A flag set by the first SIGINT or SIGTERM while the block runs; a second one quits
    at once. The handlers in place before are put back after, unless a signal came."""
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        if stop.is_set():
            os.write(2, b"interrupted again: quitting at once\n")
            os._exit(130)
        stop.set()
        os.write(
            2,
            b"stopping: no new episodes start; those in flight are left for --resume "
            b"(interrupt again to quit at once)\n",
        )

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        # After a signal the command is on its way out with 130: a second signal while
        # it unwinds must still quit with 130, not meet Python's default handler (-2).
        if not stop.is_set():
            for sig, handler in previous.items():
                signal.signal(sig, handler)
