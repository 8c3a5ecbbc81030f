"""`disputelab runs`: the runs in the store, with how far each got."""

from __future__ import annotations

import datetime as dt

from disputelab.cli.common import FormatOption, ListFormat, open_store, print_rows

COLUMNS = ("run", "kind", "label", "done", "planned", "failed", "status", "created")


def list_runs(
    fmt: FormatOption = ListFormat.table,
) -> None:
    """List the runs in the store: episodes done of planned, failed, and status."""
    rows = []
    for r in open_store(writable=False, create=False).runs():
        when = dt.datetime.fromtimestamp(r["created_at"]).strftime("%Y-%m-%d %H:%M")
        rows.append(
            {
                "run": r["run_id"],
                "kind": r["kind"],
                "label": r["label"],
                "done": r["complete"],
                "planned": r["planned"],
                "failed": r["failed"],
                "status": r["status"],
                "created": when,
            }
        )
    print_rows(rows, COLUMNS, fmt, prose=("label",))
