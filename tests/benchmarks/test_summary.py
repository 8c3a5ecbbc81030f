"""benchmarks/summary.py runs each chosen row's benchmark under a heading with the load
average, and skips a peer row whose clone was not given, saying so."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SUMMARY = Path(__file__).resolve().parents[2] / "benchmarks" / "summary.py"


def summary(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SUMMARY), *args], capture_output=True, text=True, timeout=600
    )


def test_a_chosen_row_runs_its_script_under_a_heading_with_the_load() -> None:
    done = summary("--quick", "--only", "Holm")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "## a report table with Holm\n$ bench_adjust.py --repeats 3\n" in out
    assert "# load average before: " in out and "; exit 0" in out
    assert "holm    disputelab" in out and "statsmodels" in out
    assert "## start-up" not in out  # rows not chosen do not run


def test_a_peer_row_without_its_clone_is_skipped_with_a_line() -> None:
    done = summary("--quick", "--only", "AgentMediation")
    assert done.returncode == 0, done.stderr
    assert "# skipped: give --agentmediation PATH, a clone of the peer" in done.stdout


def test_a_choice_that_matches_no_row_is_refused() -> None:
    done = summary("--only", "no such row")
    assert done.returncode == 2
    assert "--only matches no row" in done.stderr
