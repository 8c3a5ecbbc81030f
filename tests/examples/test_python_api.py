"""The README's Python example runs as shipped: examples/python_api.py, in a fresh folder,
stores what the command line would store and prints the run's metrics and the
experiment's tables."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from disputelab.store.sqlite import Store

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "python_api.py"


def _python(path: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "DISPUTELAB_STORE": str(cwd / "runs")}
    return subprocess.run(
        [sys.executable, str(path)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_the_example_has_at_most_ten_lines_of_code() -> None:
    code = [
        line
        for line in EXAMPLE.read_text(encoding="utf-8").split('"""', 2)[2].splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert len(code) <= 10, code


@pytest.mark.slow  # two fresh interpreters run an experiment each
def test_the_example_runs_and_prints_metrics_and_tables(tmp_path: Path) -> None:
    proc = _python(EXAMPLE, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "final_consensus" in proc.stdout and "unmediated" in proc.stdout
    assert "# Experiment `two-cases`" in proc.stdout
    store = Store(tmp_path / "runs")
    kinds = sorted(r["kind"] for r in store.runs())
    assert kinds == ["experiment", "run"]
    assert store.run_summary("two-cases")["status"] == "complete"
    again = _python(EXAMPLE, tmp_path)  # resume=True: the experiment is read, not rerun
    assert again.returncode == 0, again.stderr
    assert len(Store(tmp_path / "runs").runs()) == 3  # one more single run, same grid


def test_the_readme_shows_the_example(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    body = EXAMPLE.read_text(encoding="utf-8").split('"""', 2)[2].strip()
    assert body in readme
