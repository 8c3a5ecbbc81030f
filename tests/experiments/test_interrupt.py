"""Ctrl-C and SIGTERM stop an experiment cleanly: no new episode starts, what finished is
kept, the exit status is 130, and the message gives the exact command that resumes it.
Each test runs the real command line in a subprocess and sends it a real signal."""

from __future__ import annotations

import json
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.scenario import builtin_scenarios
from tests.helpers import WAIT_S

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from disputelab.cli import main; main()"]
# Big enough that a fast machine is still busy when the signal comes: every multi-issue
# built-in x 3 conditions x 10 replicates x (mediated + twin).
SPEC = """\
name: interrupted
scenarios: ["builtin:*"]
conditions: [general, posture:competing, posture:avoiding]
mediators: [rule]
replicates: 10
budget: 60
"""
MULTI_ISSUE = sum(1 for s in builtin_scenarios().values() if s.topics)
PLANNED = MULTI_ISSUE * 3 * 10 * 2


def _cli(store: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["--store", str(store), *args])
    assert result.exit_code == 0, result.output
    return result.output


def _complete(store: Path) -> int:
    try:
        db = sqlite3.connect(store / "disputelab.sqlite", timeout=60)
        try:
            row = db.execute(
                "SELECT COUNT(*) FROM episodes WHERE status NOT IN ('incomplete', 'failed')"
            ).fetchone()
        finally:
            db.close()
    except sqlite3.Error:
        return 0  # not created yet
    return int(row[0])


def _start(tmp_path: Path) -> tuple[subprocess.Popen[str], Path, Path]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    store = tmp_path / "store"
    args = [*CLI, "--store", str(store), "experiment", str(spec)]
    proc = subprocess.Popen(
        args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    # Only a hung child gets near this bound, even on a loaded 2-core machine.
    deadline = time.monotonic() + WAIT_S
    while _complete(store) < 10:
        assert proc.poll() is None, "the experiment ended before it could be interrupted"
        assert time.monotonic() < deadline, f"no episode finished within {WAIT_S:g} s"
        time.sleep(0.05)
    return proc, store, spec


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_run_and_says_how_to_resume(tmp_path: Path, sig: int) -> None:
    proc, store, spec = _start(tmp_path)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 130, err
    assert "Traceback" not in out + err
    lines = [line for line in err.splitlines() if line.strip()]
    done = next(line for line in lines if line.startswith("interrupted: "))
    assert f"of {PLANNED} episodes done" in done
    kept = _complete(store)
    assert 10 <= kept < PLANNED
    # A report on the partial run says so, and a table of runs shows it as partial.
    partial = _cli(store, "report", "interrupted")
    assert f"Incomplete: {kept} of {PLANNED} episodes done." in partial
    assert f"experiment {spec} --resume" in partial
    runs = _cli(store, "runs", "--format", "json")
    (row,) = json.loads(runs)
    assert (row["status"], row["done"], row["planned"]) == ("partial", kept, PLANNED)
    resume = next(line for line in lines if line.startswith("resume with: "))
    command = shlex.split(resume.removeprefix("resume with: "))
    assert command == ["disputelab", "--store", str(store), "experiment", str(spec), "--resume"]
    # The command it gives goes on from there and finishes every episode exactly once.
    again = subprocess.run(
        [*CLI, *command[1:]], cwd=ROOT, capture_output=True, text=True, timeout=WAIT_S
    )
    assert again.returncode == 0, again.stderr
    assert f"{kept} already done" in " ".join(again.stdout.split())
    db = sqlite3.connect(store / "disputelab.sqlite")
    ids = [r[0] for r in db.execute("SELECT episode_id FROM episodes")]
    statuses = {r[0] for r in db.execute("SELECT status FROM episodes")}
    db.close()
    assert len(ids) == len(set(ids)) == PLANNED
    assert statuses <= {"resolved", "impasse", "budget"}
    assert "Incomplete" not in _cli(store, "report", "interrupted")
    (row,) = json.loads(_cli(store, "runs", "--format", "json"))
    assert row["status"] == "complete"


def test_a_second_interrupt_quits_at_once(tmp_path: Path) -> None:
    proc, _, _ = _start(tmp_path)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=WAIT_S)
    assert "Traceback" not in out + err
    # Either the second signal cut the stop short, or the stop was already complete.
    assert "quitting at once" in err or "resume with: " in err
    if proc.returncode == -signal.SIGINT:
        # The second signal landed while the interpreter was shutting down, after
        # everything was said: CPython has put the default action back by then, so the
        # process ends by the signal (a shell shows that as 130 too).
        assert "resume with: " in err
    else:
        assert proc.returncode == 130, err


def test_an_experiment_puts_the_signal_handlers_back_when_it_ends(tmp_path: Path) -> None:
    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    spec = tmp_path / "small.yaml"
    spec.write_text("name: small\nscenarios: [tenancy]\nreplicates: 1\nbudget: 10\n")
    _cli(tmp_path / "store", "experiment", str(spec))
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
