"""Two processes resuming one killed experiment at once share it: both finish, each
episode is run by one of them, and the store ends as an uninterrupted run's.

What disputelab/store/leases.py promises: a process claims an episode before running it,
skips one a live process holds, and takes over one whose holder died (the killed first
run's, here). So neither refuses; between them they run what the kill left.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from disputelab.store.sqlite import DB_NAME
from tests.chaos.store_view import finish, launch, read_store, scores, wait_until

SPEC = """name: shared
scenarios: [tenancy, workplace, boundary-wall]
conditions: [general, posture:competing]
mediators: [rule]
replicates: 8
budget: 40
concurrency: 4
"""
PLANNED = 3 * 2 * 8 * 2
SUMMARY = re.compile(
    r"(\d+) episodes planned, (\d+) run, (\d+) already done(?:, \d+ by another process)?,"
    r" 0 failed"
)
COMPLETE_SQL = "SELECT COUNT(*) FROM episodes WHERE status IN ('resolved', 'impasse', 'budget')"


def _ran(log: Path) -> tuple[int, int]:
    """(run here, already done) from a process's closing line."""
    match = SUMMARY.search(" ".join(log.read_text().split()))
    assert match and int(match.group(1)) == PLANNED, log.read_text()[-2000:]
    return int(match.group(2)), int(match.group(3))


@pytest.mark.slow
def test_two_resumes_of_a_killed_experiment_run_each_episode_once(
    tmp_path: Path, chaos_summary: Callable[[str], None]
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    store, clean = tmp_path / "runs", tmp_path / "clean"
    first = launch(store, spec, tmp_path / "first.log", env={"DISPUTELAB_COMMIT_EVERY_S": "0"})
    try:
        assert wait_until(first, store, COMPLETE_SQL, PLANNED // 3)
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait()
    left = PLANNED - len(read_store(store, "shared").complete)
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    procs = [launch(store, spec, log, "--resume") for log in logs]
    codes = [finish(p, log) for p, log in zip(procs, logs, strict=True)]
    assert codes == [0, 0], [log.read_text()[-2000:] for log in logs]
    assert finish(launch(clean, spec, tmp_path / "clean.log"), tmp_path / "clean.log") == 0
    (a, _), (b, _) = _ran(logs[0]), _ran(logs[1])
    final, want = read_store(store, "shared"), read_store(clean, "shared")
    with closing(sqlite3.connect(store / DB_NAME)) as db:
        leases = db.execute("SELECT COUNT(*) FROM leases").fetchone()[0]
    chaos_summary(
        f"{left} of {PLANNED} episodes left by a kill; two resumes ran {a} + {b}; "
        f"{len(set(want.status) - final.complete)} missing, {len(final.stored_twice)} "
        f"stored twice, {final.duplicate_turns} duplicate turns, {leases} leases left"
    )
    assert a + b == left, "an episode was run by both processes, or by neither"
    assert final.status == want.status and final.complete == set(want.status)
    assert not final.stored_twice and final.duplicate_turns == 0 and not final.bad_turns
    assert final.turns == want.turns and leases == 0
    assert scores(store, "shared") == scores(clean, "shared")
