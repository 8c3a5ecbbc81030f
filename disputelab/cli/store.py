"""`disputelab store`: check the run store for damage, and copy what reads into a new one."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from disputelab.api import StoreError
from disputelab.api.stores import Salvage, check_store, recover_store
from disputelab.cli.common import fail, out, state, store_option

app = typer.Typer(
    help="Check the run store for damage, and recover its readable runs.", no_args_is_help=True
)

_SHOWN = 5  # lines of a list shown before "... and N more"


@app.command(short_help="Check the store for damage and print what is wrong.")
def check() -> None:
    """Check the store for damage and print what is wrong: SQLite's integrity_check, then
    a read of every row as `store recover` would read it. Exit status 0: healthy; 1:
    damaged, empty or not a disputelab store; 2: no store at --store."""
    try:
        found = check_store(state.store_path)
    except StoreError as exc:
        fail(str(exc))
    if found.healthy and found.salvage is not None:
        _say(f"store {state.store_path} is healthy: {_counts(found.salvage)}")
        return
    _say(f"store {state.store_path} is not healthy:")
    for line in _first(_lines(found.problems)):
        _say(f"  {line}")
    if found.salvage is not None:
        _print_salvage(found.salvage, "readable")
        _say(
            "copy the readable runs into a new store with "
            f"`disputelab {store_option()}store recover OUT_DIR`"
        )
    raise typer.Exit(1)


@app.command(short_help="Copy every run that can be read into a new store at OUT_DIR.")
def recover(
    out_dir: Annotated[
        Path, typer.Argument(metavar="OUT_DIR", help="Directory for the new store (no store yet).")
    ],
) -> None:
    """Copy every run that can be read into a new store at OUT_DIR. An episode is copied
    only whole: its record and every turn, with the scores and usage that can be read. Per
    run, says how many episodes were copied and why each other one was lost. Exit status
    0: everything copied; 1: copied, but something was lost; 2: nothing could be read, or
    OUT_DIR already holds a store."""
    try:
        found = recover_store(out_dir, store=state.store_path)
    except StoreError as exc:
        fail(str(exc))
    _say(f"recovered into {out_dir}: {_counts(found)}")
    _print_salvage(found, "copied")
    if not found.whole:
        raise typer.Exit(1)


def _print_salvage(found: Salvage, verb: str) -> None:
    """Per run, the episodes that read whole and why each other one does not; then the
    tables with rows or pages that do not read."""
    for run in found.runs:
        total = run.episodes + len(run.lost)
        note = "; its run record was lost" if run.record_lost else ""
        _say(f"  run {run.run_id} ({run.kind}): {run.episodes} of {total} episodes {verb}{note}")
        for line in _first([f"lost {e}" for e in run.lost]):
            _say(f"    {line}")
    lost = [f"{t} {n}" for t, n in found.lost_rows.items() if n]
    if lost:
        _say(f"  rows that do not read: {', '.join(lost)}")
    if found.damaged:
        _say(f"  pages that do not read in: {', '.join(found.damaged)} (their rows are unknown)")


def _counts(found: Salvage) -> str:
    counts = (
        (len(found.rows["runs"]), "runs"),
        (len(found.rows["episodes"]), "episodes"),
        (found.turns, "turns"),
        (len(found.rows["scores"]), "scores"),
    )
    return ", ".join(f"{n} {t if n != 1 else t.removesuffix('s')}" for n, t in counts)


def _lines(messages: tuple[str, ...]) -> list[str]:
    return [line for m in messages for line in m.splitlines() if line.strip()]


def _first(lines: list[str]) -> list[str]:
    if len(lines) <= _SHOWN:
        return lines
    return [*lines[:_SHOWN], f"... and {len(lines) - _SHOWN} more"]


def _say(text: str) -> None:
    out.print(escape(text), highlight=False, soft_wrap=True)
