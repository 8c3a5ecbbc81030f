"""`disputelab experiment`: run (or resume) an experiment grid from a YAML spec."""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from disputelab.cli.common import (
    err,
    fail,
    fail_problems,
    open_models,
    open_store,
    out,
    print_usage,
    state,
    store_option,
)
from disputelab.experiments.runner import Summary
from disputelab.store.sqlite import StoreError

if TYPE_CHECKING:
    from disputelab.experiments.spec import ExperimentSpec
    from disputelab.llm.models import ModelHub


def experiment(
    spec_path: Annotated[Path, typer.Argument(metavar="SPEC.yaml", help="Experiment spec.")],
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue a stopped run; finished episodes are kept.")
    ] = False,
    concurrency: Annotated[
        int | None, typer.Option(min=1, max=1024, help="Episodes in flight (overrides spec).")
    ] = None,
) -> None:
    """Run an experiment grid: scenarios x conditions x mediators x replicates."""
    from disputelab.experiments.spec import SpecError, load_spec

    try:
        spec = load_spec(spec_path)
    except SpecError as exc:
        fail_problems(exc.source, exc.problems)
    hub = open_models(spec.models.values())
    summary = _run(spec, spec_path, hub, resume, concurrency)
    if summary.interrupted:
        _interrupted(summary, spec_path, concurrency)
    out.print(
        f"experiment [magenta]{summary.run_id}[/]: {summary.planned} episodes planned, "
        f"{summary.done} run, {summary.skipped} already done, {summary.failed} failed"
    )
    for e in summary.errors[:5]:
        out.print(f"  [dim]{escape(e)}[/]")
    if summary.failed:
        out.print("  failed episodes are kept with their reason and retried by --resume")
    print_usage(hub)
    out.print(f"[dim]tables: disputelab report {summary.run_id}[/]")


def _run(
    spec: ExperimentSpec, spec_path: Path, hub: ModelHub, resume: bool, concurrency: int | None
) -> Summary:
    """Run the grid under a progress bar of episodes, failures and model spend."""
    from disputelab.experiments.runner import run_experiment
    from disputelab.experiments.spec import SpecError
    from disputelab.llm.base import ModelError

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("failed {task.fields[failed]}"),
        TextColumn("{task.fields[spend]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=not err.is_terminal,
    ) as progress:
        task = progress.add_task(f"experiment {spec.name}", total=None, failed=0, spend="")
        failed = 0

        def tick(event: str, ep: object, error: str | None) -> None:
            nonlocal failed
            failed += event == "failed"
            progress.update(task, advance=1, failed=failed, spend=_spend(hub))

        async def until_done_or_stopped() -> Summary:
            stop = _stop_on_signals()
            return await run_experiment(
                open_store(),
                spec,
                spec_path.parent,
                hub,
                resume,
                concurrency,
                tick,
                on_plan=lambda n: progress.update(task, total=n),
                stop=stop,
                source=str(spec_path.resolve()),
            )

        try:
            return asyncio.run(until_done_or_stopped())
        except SpecError as exc:
            fail_problems(str(spec_path), exc.problems)
        except StoreError as exc:
            fail(str(exc))
        except (ModelError, ValueError) as exc:  # a condition writer or the corpus failed
            fail(str(exc).splitlines()[0])


def _interrupted(summary: Summary, spec_path: Path, concurrency: int | None) -> NoReturn:
    """Say what was kept and the exact command that goes on from there; exit 130."""
    state.interrupt_reported = True
    kept = summary.skipped + summary.done
    abandoned = f", {summary.abandoned} in flight left for resume" if summary.abandoned else ""
    err.print(
        f"interrupted: {kept} of {summary.planned} episodes done ({summary.done} in this "
        f"run{abandoned}); finished turns and episodes are in the store",
        highlight=False,
        soft_wrap=True,
    )
    again = f" --concurrency {concurrency}" if concurrency else ""
    err.print(
        f"resume with: disputelab {store_option()}experiment {spec_path} --resume{again}",
        highlight=False,
        soft_wrap=True,
    )
    raise typer.Exit(130)


def _stop_on_signals() -> threading.Event:
    """A flag set by the first SIGINT or SIGTERM; a second one quits at once."""
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

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, on_signal)
    return stop


def _spend(hub: ModelHub) -> str:
    roles = hub.ledger.roles.values()
    if not roles:
        return ""
    tokens = sum(u.input_tokens + u.output_tokens for u in roles)
    costs = [u.cost_usd for u in roles]
    cost = "unknown" if None in costs else f"${sum(c or 0.0 for c in costs):.4f}"
    return f"{hub.ledger.calls} calls, {tokens} tokens, {cost}"
