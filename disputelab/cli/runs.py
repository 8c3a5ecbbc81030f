"""`disputelab runs`: the runs in the store."""

from __future__ import annotations

import datetime as dt

from rich.table import Table

from disputelab.cli.common import open_store, out


def list_runs() -> None:
    """List the runs in the store."""
    table = Table("run", "kind", "label", "episodes", "created")
    for r in open_store().runs():
        when = dt.datetime.fromtimestamp(r["created_at"]).strftime("%Y-%m-%d %H:%M:%S")
        table.add_row(r["run_id"], r["kind"], r["label"], str(r["episodes"]), when)
    out.print(table)
