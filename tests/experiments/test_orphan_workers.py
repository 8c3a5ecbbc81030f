"""Worker processes die with their driver: an OOM kill of the driver alone (SIGKILL, no
chance to clean up) must not leave workers playing episodes nobody will store."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import WAIT_S

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from disputelab.cli import main; main()"]
SPEC = """\
name: orphans
scenarios: ["builtin:*"]
conditions: [general, posture:competing]
mediators: [rule]
replicates: 20
budget: 60
"""

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")


def _parents() -> dict[int, int]:
    """Every live process's parent, from /proc (a zombie counts as gone)."""
    found: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rpartition(")")[2].split()[:2]
        if state != "Z":
            found[int(entry)] = int(ppid)
    return found


def _descendants(pid: int) -> set[int]:
    parents = _parents()
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {p for p, pp in parents.items() if pp in frontier} - found
        found |= frontier
    return found


def _done(store: Path) -> int:
    try:
        db = sqlite3.connect(store / "disputelab.sqlite", timeout=60)
        try:
            return int(db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def test_killing_the_driver_alone_ends_its_workers(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    store = tmp_path / "store"
    args = ["--store", str(store), "experiment", str(spec), "--executor", "processes"]
    driver = subprocess.Popen(
        [*CLI, *args, "--workers", "2"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + WAIT_S
    while _done(store) < 5:  # episodes are being played by the workers
        assert driver.poll() is None, "the experiment ended before it could be killed"
        assert time.monotonic() < deadline, "no episode started"
        time.sleep(0.05)
    workers = _descendants(driver.pid)
    assert len(workers) >= 2
    driver.send_signal(signal.SIGKILL)
    driver.wait(timeout=WAIT_S)
    deadline = time.monotonic() + WAIT_S
    while left := workers & set(_parents()):
        assert time.monotonic() < deadline, f"workers {sorted(left)} outlived their driver"
        time.sleep(0.2)
