"""What the chaos tests read from a store, with SQL alone and read-only: a test reads a
store that another process may be writing, or one it has just killed."""

from __future__ import annotations

import math
import os
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import disputelab as dl
from disputelab.store.sqlite import DB_NAME
from tests.helpers import WAIT_S, stored_turns

CLI = [sys.executable, "-m", "disputelab"]
COMPLETE = ("resolved", "impasse", "budget")


@dataclass(frozen=True)
class StoreView:
    """One run's episodes in a store, and what is wrong with how they are stored."""

    status: dict[str, str]  # episode id -> status
    errors: dict[str, str]  # episode id -> the reason it failed ("" unless failed)
    turns: dict[str, int]  # episode id -> turns stored
    stored_twice: list[str]  # episode ids with more than one row
    bad_turns: list[str]  # episodes whose turn indexes are not 0..n-1, each once
    duplicate_turns: int  # turn indexes stored more than once, over all episodes

    @property
    def complete(self) -> set[str]:
        return {e for e, s in self.status.items() if s in COMPLETE}


def read_store(store: Path, run_id: str) -> StoreView:
    with closing(sqlite3.connect(f"file:{store / DB_NAME}?mode=ro", uri=True)) as db:
        rows = db.execute(
            "SELECT episode_id, status, error FROM episodes WHERE run_id = ?", (run_id,)
        ).fetchall()
        indexes: dict[str, list[int]] = {}
        for eid, idx in stored_turns(db):
            indexes.setdefault(eid, []).append(idx)
    seen = Counter(str(r[0]) for r in rows)
    bad = sorted(e for e, got in indexes.items() if sorted(got) != list(range(len(got))))
    doubled = sum(n - 1 for got in indexes.values() for n in Counter(got).values())
    return StoreView(
        status={str(e): str(s) for e, s, _ in rows},
        errors={str(e): str(err or "") for e, _, err in rows},
        turns={e: len(got) for e, got in indexes.items()},
        stored_twice=sorted(e for e, n in seen.items() if n > 1),
        bad_turns=bad,
        duplicate_turns=doubled,
    )


def count(store: Path, sql: str) -> int | None:
    """One number from a live store, or None while it is not readable yet."""
    db = store / DB_NAME
    if not db.exists():
        return None
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=60)) as conn:
            return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:
        return None


def scores(store: Path, run_id: str) -> dict[str, dict[str, float | None]]:
    """Every episode's metrics, read through the public API; NaN (not scored) as None."""
    frame = dl.episode_frame(dl.open_store(store, writable=False), run_id)
    skip = {"episode_id", "run_id", "arm", "scenario_id", "condition", "protocol"}
    skip |= {"mediator", "parties", "seed", "status", "stop_reason", "matched_episode_id"}
    out: dict[str, dict[str, float | None]] = {}
    for row in frame.to_dict("records"):
        out[str(row["episode_id"])] = {
            str(k): None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)
            for k, v in row.items()
            if k not in skip
        }
    return out


def launch(
    store: Path, spec: Path, log: Path, *extra: str, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """`disputelab --store STORE experiment SPEC EXTRA...` in a child process, its output
    appended to `log`."""
    args = [*CLI, "--store", str(store), "experiment", str(spec), *extra]
    with log.open("ab") as sink:
        return subprocess.Popen(
            args,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, "COLUMNS": "200", **(env or {})},
        )


def finish(proc: subprocess.Popen[bytes], log: Path) -> int:
    """The child's exit status; a child still running after WAIT_S is hung: killed, and
    the test fails saying so."""
    try:
        return proc.wait(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"hung: no exit in {WAIT_S:g} s\n{log.read_text()[-2000:]}") from None


def wait_until(proc: subprocess.Popen[bytes], store: Path, sql: str, target: int) -> bool:
    """Poll the store read-only until `sql` reaches `target`; False if the child exits
    first (or hangs past WAIT_S)."""
    deadline = time.monotonic() + WAIT_S
    while proc.poll() is None and time.monotonic() < deadline:
        n = count(store, sql)
        if n is not None and n >= target:
            return True
        time.sleep(0.02)
    return False
