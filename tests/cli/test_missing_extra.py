"""A command that names the embedded model where its extra is not installed stops in
one line, before it stores anything: no run is left behind that could only fail or
score NaN, and curation does not log the missing package as a rejected seed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

# Python as it would be without the `local` extra: llama_cpp cannot be imported (an
# entry of None in sys.modules makes find_spec say it is absent, and import fail).
WITHOUT_EXTRA = (
    "import sys; sys.modules['llama_cpp'] = None; "
    "sys.argv = ['disputelab', *sys.argv[1:]]; "
    "from disputelab.cli import main; main()"
)


def _disputelab(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_EXTRA, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["run", "tenancy", "--model", "local"],
        ["run", "tenancy", "--mediator-model", "local", "--mediator", "generic"],
        ["validate-judge", "--judge-model", "local"],
        ["curate", "seed.txt", "--model", "local", "--out", "curated"],
    ],
    ids=["run", "mediator-model", "validate-judge", "curate"],
)
def test_a_missing_extra_stops_the_command_in_one_line_storing_nothing(
    tmp_path: Path, args: list[str]
) -> None:
    (tmp_path / "seed.txt").write_text("Two neighbours argue over a fallen fence.\n")
    r = _disputelab(tmp_path, "--store", "runs", *args)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert "model 'local': llama-cpp-python is not installed" in r.stderr
    assert "pip install 'disputelab[local]'" in r.stderr
    assert not (tmp_path / "runs").exists() and not (tmp_path / "curated").exists()


def test_a_plan_only_warns_since_the_extra_may_be_installed_before_the_run(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: x\nscenarios: [tenancy]\nparties: llm\nmodels: {parties: local}\n")
    r = _disputelab(tmp_path, "--store", "runs", "experiment", str(spec), "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "llama-cpp-python is not installed" in r.stderr and "the run will need it" in r.stderr
    ran = _disputelab(tmp_path, "--store", "runs", "experiment", str(spec))
    assert ran.returncode == 2 and "llama-cpp-python is not installed" in ran.stderr
    assert not (tmp_path / "runs").exists()
