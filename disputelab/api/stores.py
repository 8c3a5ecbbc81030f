"""The run store as a whole: its runs, a check for damage, the recovery of what reads,
and the read-only server of its reports.

    from disputelab.api import stores

    found = stores.check_store("disputelab-runs")
    if not found.healthy:
        stores.recover_store("rescued", store="disputelab-runs")

A store is named as everywhere in the API: a path, an open `Store`, or None for
$DISPUTELAB_STORE, else ./disputelab-runs.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from disputelab.llm.cache import CACHE_NAME
from disputelab.store.health import is_sqlite_file, store_failure
from disputelab.store.integrity import Diagnosis, RunSalvage, Salvage
from disputelab.store.schema import DB_NAME, holds_store
from disputelab.store.sqlite import Store

if TYPE_CHECKING:
    from disputelab.report.serve import ReportServer

__all__ = [
    "Diagnosis",
    "RunInfo",
    "RunSalvage",
    "Salvage",
    "check_store",
    "is_loopback",
    "list_runs",
    "listen_problem",
    "overwrites_data",
    "recover_store",
    "report_server",
    "store_failure",
    "store_missing",
]

StoreLike = str | os.PathLike[str] | Store | None


def _path(store: StoreLike) -> Path:
    from disputelab.api import store_path  # the front door imports this module

    return store_path(store)


def store_missing(store: StoreLike = None) -> bool:
    """Whether nothing has been stored at the store's path yet: no folder, or a folder
    without a store's database. A file there is not missing: opening it as a store is
    refused with its own message."""
    root = _path(store)
    return (root.is_dir() or not root.exists()) and not holds_store(root)


@dataclass(frozen=True)
class RunInfo:
    """A run in the store and how far it got."""

    run_id: str
    kind: str
    label: str
    complete: int  # episodes done
    planned: int
    failed: int
    status: str
    created: dt.datetime  # local time


def list_runs(store: StoreLike = None) -> list[RunInfo]:
    """The store's runs, oldest first: episodes done of planned, failed, and status."""
    from disputelab.api import open_store

    return [
        RunInfo(
            r["run_id"],
            r["kind"],
            r["label"],
            r["complete"],
            r["planned"],
            r["failed"],
            r["status"],
            dt.datetime.fromtimestamp(r["created_at"]),
        )
        for r in open_store(store, writable=False).runs()
    ]


def check_store(store: StoreLike = None) -> Diagnosis:
    """Check the store for damage: SQLite's integrity check, then a read of every row as
    `recover_store` would read it. StoreError when there is no store there at all."""
    from disputelab.store.integrity import check

    return check(_path(store))


def recover_store(out: str | os.PathLike[str], *, store: StoreLike = None) -> Salvage:
    """Copy every run of the store that can be read into a new store at `out`: an
    episode only whole, with the scores and usage that read. The Salvage returned says,
    per run, what was copied and why each other episode was lost. StoreError when
    nothing reads, or `out` already holds a store."""
    from disputelab.store.integrity import recover

    return recover(_path(store), Path(out))


def overwrites_data(
    path: str | os.PathLike[str], store: StoreLike = None
) -> Literal["store", "database"] | None:
    """What writing a file at `path` would destroy: one of the store's own files
    ("store"), some SQLite database ("database"), or nothing (None)."""
    path, root = Path(path), _path(store)
    own = path.resolve().parent == root.resolve() and path.name.startswith((DB_NAME, CACHE_NAME))
    if own:
        return "store"
    return "database" if is_sqlite_file(path) else None


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (what a report server may bind quietly)."""
    from disputelab.report.serve import is_loopback as loopback

    return loopback(host)


def listen_problem(host: str, port: int, exc: BaseException) -> str:
    """Why the report server could not listen on `host`:`port`, naming the option at fault
    (`--host`, `--port`) as one line."""
    from disputelab.report.serve import listen_problem as problem

    return problem(host, port, exc)


def report_server(store: StoreLike, host: str, port: int) -> ReportServer:
    """A read-only HTTP server of the store's runs and their HTML reports, bound to
    `host`:`port` (0 picks a free port); call `serve_forever()` on it. OSError when the
    address cannot be bound, ValueError or OverflowError when it is not one."""
    from disputelab.report import serve

    return serve.ReportServer(_path(store), host, port)
