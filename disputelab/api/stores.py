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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from disputelab.llm.cache import CACHE_NAME
from disputelab.store.health import StoreError, is_sqlite_file, is_sqlite_message, store_failure
from disputelab.store.integrity import Diagnosis, RunSalvage, Salvage
from disputelab.store.schema import DB_NAME, holds_store
from disputelab.store.sqlite import Store

if TYPE_CHECKING:
    from disputelab.report.serve import ReportServer

__all__ = [
    "KINDS",
    "STATUSES",
    "Diagnosis",
    "Forgotten",
    "RunFilterError",
    "RunInfo",
    "RunSalvage",
    "Salvage",
    "check_store",
    "delete_runs",
    "forget_participant",
    "is_loopback",
    "is_sqlite_message",
    "list_runs",
    "listen_problem",
    "overwrites_data",
    "recover_store",
    "rename_run",
    "report_server",
    "run_id_problem",
    "runs_to_delete",
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
    parent: str = ""  # the run it was made for (an ablation's, a sensitivity point's)

    @property
    def derived(self) -> bool:
        """Whether another run made this one (an ablation's grid, a sensitivity point)."""
        return bool(self.parent)


KINDS = ("run", "play", "experiment", "validation")  # what `run`, `play`, `experiment`, ... store
STATUSES = ("complete", "partial", "failed", "running")


class RunFilterError(StoreError, ValueError):
    """A filter of `list_runs` that cannot select anything (an unknown status, a date
    that does not parse); the message is one line."""


def parse_since(since: str | dt.date | None) -> dt.datetime | None:
    """A moment in local time from an ISO date (2026-12-01, from its midnight) or date
    and time (2026-12-01T09:30, with or without a UTC offset)."""
    if since is None or isinstance(since, dt.datetime):
        moment = since
    elif isinstance(since, dt.date):
        moment = dt.datetime.combine(since, dt.time())
    else:
        try:
            moment = dt.datetime.fromisoformat(since.strip())
        except ValueError:
            raise RunFilterError(
                f"since: {since!r} is not an ISO date or date and time "
                "(2026-12-01 or 2026-12-01T09:30)"
            ) from None
    if moment is not None and moment.tzinfo is not None:
        try:  # runs are listed in local time
            moment = moment.astimezone().replace(tzinfo=None)
        except OverflowError:  # 0001-01-01T00:00+01:00 is before the first local moment
            raise RunFilterError(
                f"since: {since!r} lies outside the dates that can be told apart "
                "(years 1 to 9999, in local time)"
            ) from None
    return moment


def list_runs(
    store: StoreLike = None,
    *,
    name: str | None = None,
    kind: str | None = None,
    status: str | None = None,
    since: str | dt.date | None = None,
    derived: bool = True,
) -> list[RunInfo]:
    """The store's runs, oldest first: episodes done of planned, failed, and status.
    Only those whose id or label starts with `name`, of `kind` (run, experiment,
    validation), with `status` (complete, partial, failed, running), created at or after
    `since` (an ISO date or datetime), and, unless `derived`, made by no other run.
    RunFilterError for a kind, status or date that means nothing."""
    from disputelab.api import open_store

    if kind is not None and kind not in KINDS:
        raise RunFilterError(f"kind: no run kind {kind!r}; use {', '.join(KINDS)}")
    if status is not None and status not in STATUSES:
        raise RunFilterError(f"status: no run status {status!r}; use {', '.join(STATUSES)}")
    after = parse_since(since)
    found = [_info(r) for r in open_store(store, writable=False).runs()]
    return [
        r
        for r in found
        if (name is None or r.run_id.startswith(name) or r.label.startswith(name))
        and (kind is None or r.kind == kind)
        and (status is None or r.status == status)
        and (after is None or r.created >= after)
        and (derived or not r.derived)
    ]


def _info(r: dict[str, Any]) -> RunInfo:
    return RunInfo(
        r["run_id"],
        r["kind"],
        r["label"],
        r["complete"],
        r["planned"],
        r["failed"],
        r["status"],
        dt.datetime.fromtimestamp(r["created_at"]),
        r["parent"],
    )


def run_id_problem(name: str) -> str | None:
    """Why `name` cannot be a run id (or an experiment's name), or None when it can."""
    from disputelab.store.manage import id_problem

    return id_problem(name)


def runs_to_delete(runs: Sequence[str], store: StoreLike = None) -> list[RunInfo]:
    """The runs `delete_runs` would delete: each named one (an id, a unique prefix, a
    label or `last`) and every run derived from it. StoreError for an unknown run."""
    from disputelab.api import open_store
    from disputelab.store.manage import family

    opened = open_store(store, writable=False)
    ids = [opened.resolve_run(r) for r in runs]
    doomed = {f for run_id in ids for f in family(opened.db, run_id)}
    return [_info(r) for r in opened.runs() if r["run_id"] in doomed]


def delete_runs(runs: Sequence[str], *, store: StoreLike = None) -> list[str]:
    """Delete the runs (ids, unique prefixes, labels or `last`), every run derived from
    them, and all their episodes, turns, scores and usage, in one transaction; the ids
    deleted. StoreError, with nothing deleted, for an unknown run or one that another
    live process is writing."""
    from disputelab.api import open_store

    opened = open_store(store)
    return opened.delete_runs([opened.resolve_run(r) for r in runs])


@dataclass(frozen=True)
class Forgotten:
    """What `forget_participant` deleted of one person's data."""

    participant: str
    episodes: tuple[str, ...]
    runs: tuple[str, ...]
    answers: int  # questionnaire answers
    labels: int  # annotation labels


def forget_participant(participant: str, *, store: StoreLike = None) -> Forgotten:
    """Delete everything stored of one participant, by their pseudonymous id: every
    episode they sat in (whole, since the other seats' turns answer theirs), the play
    runs left empty, their questionnaire answers and their annotation labels, with the
    freed pages zeroed. StoreError, with nothing deleted, while a live process writes
    one of their runs. The response cache and the settlement memory are not keyed by
    person: a model-backed episode with a person in it may have left replies there."""
    from disputelab.api import open_store
    from disputelab.web.people import forget_answers
    from disputelab.web.study import forget_assignments

    if not participant.strip():
        raise StoreError("participant: give the id to delete (p-... as the report shows)")
    opened = open_store(store)
    episodes, runs = opened.forget_participant(participant)
    root = Path(opened.root)
    answers = forget_answers(root, participant)
    forget_assignments(root, participant)  # their place in a hosted study
    return Forgotten(
        participant, tuple(episodes), tuple(runs), answers, _forget_labels(root, participant)
    )


def _forget_labels(root: Path, participant: str) -> int:
    from disputelab.annotation.store import delete_participant

    return delete_participant(root, participant)


def rename_run(run: str, new: str, *, store: StoreLike = None) -> dict[str, str]:
    """Give a run (an id, a unique prefix, a label or `last`) the id `new`, rewriting
    every row that names it (its episodes' ids, its config's name, the runs derived from
    it, which take the new name as their prefix) in one transaction; each old id with its
    new one. An experiment renamed is reported, compared, evaluated and resumed (with
    `name=new`) under its new id. StoreError for an unknown run, a `new` that is invalid
    or taken, or a run another live process is writing."""
    from disputelab.api import open_store

    opened = open_store(store)
    return opened.rename_run(opened.resolve_run(run), new)


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
