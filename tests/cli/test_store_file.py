"""After a command, the store's database file holds every run on its own: SQLite's
write-ahead log is folded back in when the command closes the store, so copying
`disputelab.sqlite` alone (as a user sharing results would) loses nothing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.store.sqlite import DB_NAME, Store


def test_a_command_leaves_no_write_ahead_log_and_the_file_alone_holds_the_run(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    # A process of its own, as a user runs it: a connection left open there is never
    # closed, so the log outlives the command.
    args = ["--store", str(runs), "run", "tenancy", "--mediator", "rule", "--budget", "6"]
    r = subprocess.run([sys.executable, "-m", "disputelab", *args], capture_output=True)
    assert r.returncode == 0, r.stderr
    assert not (runs / f"{DB_NAME}-wal").exists()
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(runs / DB_NAME, copy / DB_NAME)
    store = Store(copy, writable=False)
    (run,) = store.runs()
    assert run["complete"] == run["planned"] == 2
    assert len(store.episode_ids(run["run_id"])) == 2  # mediated, and its twin


def test_a_failing_command_closes_the_store_as_well(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    CliRunner().invoke(app, ["--store", str(runs), "run", "tenancy", "--budget", "6"])
    r = CliRunner().invoke(app, ["--store", str(runs), "report", "no-such-run"])
    assert r.exit_code == 2
    assert not (runs / f"{DB_NAME}-wal").exists()
