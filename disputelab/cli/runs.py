"""`disputelab runs`: the runs in the store, with how far each got; `runs delete` and
`runs rename` manage them."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from disputelab.api import stores
from disputelab.cli.common import (
    FormatOption,
    ListFormat,
    err,
    fail,
    open_store,
    out,
    print_rows,
)

COLUMNS = ("run", "kind", "label", "done", "planned", "failed", "status", "created")

app = typer.Typer(
    help="List the runs in the store; delete or rename them, or forget a participant.",
    invoke_without_command=True,
)


@app.callback()
def list_runs(
    ctx: typer.Context,
    fmt: FormatOption = ListFormat.table,
    name: Annotated[
        str | None,
        typer.Option("--name", metavar="PREFIX", help="Runs whose id or label starts so."),
    ] = None,
    kind: Annotated[
        str | None,
        typer.Option(metavar="KIND", help="Runs of one kind: run, experiment, validation."),
    ] = None,
    status: Annotated[
        str | None,
        typer.Option(
            metavar="STATUS", help="Runs in one status: complete, partial, failed, running."
        ),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(metavar="DATE", help="Runs created since an ISO date or date and time."),
    ] = None,
    show_all: Annotated[
        bool,
        typer.Option(
            "--all", help="Also list runs other runs made (ablations, sensitivity points)."
        ),
    ] = False,
) -> None:
    """List the runs in the store: episodes done of planned, failed, and status. Runs
    that other runs made (an ablation's grids, a sensitivity analysis's points) are left
    out unless --all."""
    if ctx.invoked_subcommand is not None:
        return
    store = open_store(writable=False, create=False)
    try:
        found = stores.list_runs(store, name=name, kind=kind, status=status, since=since)
    except stores.RunFilterError as exc:
        fail(f"--{exc}")  # the message starts with the filter's name
    shown = [r for r in found if show_all or not r.derived]
    rows = [
        {
            "run": r.run_id,
            "kind": r.kind,
            "label": r.label,
            "done": r.complete,
            "planned": r.planned,
            "failed": r.failed,
            "status": r.status,
            "created": r.created.strftime("%Y-%m-%d %H:%M"),
        }
        for r in shown
    ]
    print_rows(rows, COLUMNS, fmt, prose=("label",))
    if hidden := len(found) - len(shown):
        err.print(
            f"{hidden} run(s) made by other runs (ablations, sensitivity points) not listed; "
            "--all lists them",
            highlight=False,
            soft_wrap=True,
        )


@app.command(short_help="Delete runs with their episodes, turns and scores.")
def delete(
    runs: Annotated[
        list[str], typer.Argument(metavar="RUN...", help="Run ids (or unique prefixes, labels).")
    ],
    yes: Annotated[bool, typer.Option("--yes", help="Delete without asking.")] = False,
) -> None:
    """Delete runs, with every episode, turn, score and usage row of theirs and the runs
    made for them (an experiment's ablation grids, a spec's sensitivity points), in one
    transaction. Refused while another process is writing one of them."""
    store = open_store(create=False)  # a mistyped --store fails, leaving nothing behind
    doomed = stores.runs_to_delete(runs, store)
    if not yes:
        _confirm(doomed)
    deleted = stores.delete_runs(runs, store=store)
    out.print(
        f"deleted {len(deleted)} run(s): {', '.join(deleted)}", highlight=False, soft_wrap=True
    )


def _confirm(doomed: list[stores.RunInfo]) -> None:
    """Ask before deleting; where nobody can answer (stdin is not a terminal), refuse."""
    if not sys.stdin.isatty():
        fail("runs delete asks before deleting, and stdin is not a terminal: pass --yes")
    for r in doomed:
        made = f", made for {r.parent}" if r.derived else ""
        err.print(
            f"  {r.run_id} ({r.kind}, {r.complete} of {r.planned} episodes{made})",
            highlight=False,
            soft_wrap=True,
        )
    if not typer.confirm(f"delete these {len(doomed)} run(s) and all their episodes?", err=True):
        err.print("nothing deleted", highlight=False)
        raise typer.Exit(1)


@app.command(short_help="Give a run a new id; its episodes and derived runs follow.")
def rename(
    run: Annotated[str, typer.Argument(metavar="RUN", help="Run id (or unique prefix, label).")],
    new: Annotated[str, typer.Argument(metavar="NEW", help="The run's new id.")],
) -> None:
    """Give a run a new id. Its episodes' ids, its stored config's name, and the runs made
    for it (an experiment's ablation grids, NAME.ablate.X) follow, in one transaction; an
    experiment renamed is resumed with `experiment SPEC --name NEW --resume`. Refused
    while another process is writing it."""
    if problem := stores.run_id_problem(new):
        fail(f"NEW: {problem}")
    renamed = stores.rename_run(run, new, store=open_store(create=False))
    for old, now in renamed.items():
        if old != now:
            out.print(f"renamed {old} to {now}", highlight=False, soft_wrap=True)


@app.command(short_help="Delete one participant's episodes, answers and labels.")
def forget(
    participant: Annotated[
        str, typer.Argument(metavar="PARTICIPANT", help="The participant id (p-...).")
    ],
    yes: Annotated[bool, typer.Option("--yes", help="Delete without asking.")] = False,
) -> None:
    """Delete everything stored of one person, by the pseudonymous id a report shows:
    every episode they sat in (whole: the other seats answered them), a play run left
    empty, their questionnaire answers and annotation labels. The freed pages are zeroed.
    Refused while another process is writing one of their runs."""
    store = open_store(create=False)
    if not yes:
        if not sys.stdin.isatty():
            fail("runs forget asks before deleting, and stdin is not a terminal: pass --yes")
        if not typer.confirm(f"delete every episode, answer and label of {participant}?", err=True):
            err.print("nothing deleted", highlight=False)
            raise typer.Exit(1)
    gone = stores.forget_participant(participant, store=store)
    out.print(
        f"deleted {participant}: {len(gone.episodes)} episode(s), {len(gone.runs)} run(s), "
        f"{gone.answers} questionnaire answer(s), {gone.labels} label(s)",
        highlight=False,
        soft_wrap=True,
    )
