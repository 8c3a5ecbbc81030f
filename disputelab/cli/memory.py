"""`disputelab memory`: show or reset the settlement counsel's reflection memory, which
persists in the store directory across episodes and experiments (protocol parameter
`memory: store`)."""

from __future__ import annotations

import sqlite3

import typer

from disputelab.cli.common import fail, out, state
from disputelab.protocols.settlement.agents.memory import MemoryFile

app = typer.Typer(
    help="Show or reset the planning counsel's reflection memory kept in the store.",
    no_args_is_help=True,
)
KINDS = {"R": "rules", "E": "experience", "C": "case cards"}


def _memory() -> MemoryFile:
    if state.store_path.exists() and not state.store_path.is_dir():
        fail(f"store {state.store_path} is a file; --store needs a directory")
    return MemoryFile(state.store_path)


@app.command(short_help="Count the memory entries by kind and side, and list the latest.")
def show(
    last: int = typer.Option(5, min=0, max=1000, help="How many of the latest entries to list."),
) -> None:
    """Count the entries per kind (R rules, E experience, C case cards) and side."""
    memory = _memory()
    try:
        counts = memory.counts()
        entries = memory.load()[-last:] if last else []
    except sqlite3.DatabaseError as exc:
        fail(f"cannot read the memory at {memory.path}: {exc}")
    if not counts:
        out.print(f"no reflection memory in {state.store_path}", highlight=False)
        return
    for key, n in sorted(counts.items()):
        kind, _, side = key.partition("/")
        out.print(f"{KINDS.get(kind, kind)} ({side}): {n}", highlight=False)
    for e in entries:
        out.print(
            f"  [{e.kind}] {e.side} from {e.scenario}: {e.text}", highlight=False, soft_wrap=True
        )


@app.command(short_help="Forget every memory entry in the store.")
def reset() -> None:
    """Delete every reflection-memory entry kept in the store."""
    memory = _memory()
    try:
        n = memory.reset()
    except sqlite3.DatabaseError as exc:
        fail(f"cannot reset the memory at {memory.path}: {exc}")
    out.print(
        f"reflection memory reset: {n} entries removed from {state.store_path}", highlight=False
    )
