"""`disputelab runs`: the runs in the store, with how far each got."""

from __future__ import annotations

from disputelab.api.stores import list_runs as stored_runs
from disputelab.cli.common import FormatOption, ListFormat, open_store, print_rows

COLUMNS = ("run", "kind", "label", "done", "planned", "failed", "status", "created")


def list_runs(
    fmt: FormatOption = ListFormat.table,
) -> None:
    """List the runs in the store: episodes done of planned, failed, and status."""
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
        for r in stored_runs(open_store(writable=False, create=False))
    ]
    print_rows(rows, COLUMNS, fmt, prose=("label",))
