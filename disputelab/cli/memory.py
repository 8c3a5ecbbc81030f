"""`disputelab memory`: show or reset the settlement counsel's reflection memory, which
persists in the store directory across episodes and experiments (protocol parameter
`memory: store`)."""

from __future__ import annotations

import typer

from disputelab.api.memory import MEMORY_KINDS, reflection_memory, reset_memory
from disputelab.cli.common import fail, out, state
from disputelab.errors import DisputelabError

app = typer.Typer(
    help="Show or reset the planning counsel's reflection memory kept in the store.",
    no_args_is_help=True,
)


def _check_store() -> None:
    if state.store_path.exists() and not state.store_path.is_dir():
        fail(f"store {state.store_path} is a file; --store needs a directory")


@app.command(short_help="Count the memory entries by kind and side, and list the latest.")
def show(
    last: int = typer.Option(5, min=0, max=1000, help="How many of the latest entries to list."),
) -> None:
    """Count the entries per kind (R rules, E experience, C case cards) and side."""
    _check_store()
    try:
        memory = reflection_memory(state.store_path, last)
    except DisputelabError as exc:
        fail(str(exc))
    if not memory.counts:
        out.print(f"no reflection memory in {state.store_path}", highlight=False)
        return
    for key, n in sorted(memory.counts.items()):
        kind, _, side = key.partition("/")
        out.print(f"{MEMORY_KINDS.get(kind, kind)} ({side}): {n}", highlight=False)
    for e in memory.latest:
        out.print(
            f"  [{e.kind}] {e.side} from {e.scenario}: {e.text}", highlight=False, soft_wrap=True
        )


@app.command(short_help="Forget every memory entry in the store.")
def reset() -> None:
    """Delete every reflection-memory entry kept in the store."""
    _check_store()
    try:
        n = reset_memory(state.store_path)
    except DisputelabError as exc:
        fail(str(exc))
    out.print(
        f"reflection memory reset: {n} entries removed from {state.store_path}", highlight=False
    )
