"""`disputelab runs`: filters, runs made by other runs hidden and counted, `runs delete`
and `runs rename`, and `experiment --name` beside the spec's own name."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app

runner = CliRunner()
SPEC = "name: two\nscenarios: [tenancy, workplace]\nconditions: [general, posture:competing]\n"
SPEC += "mediators: [rule]\nreplicates: 1\nbudget: 6\n"


def _invoke(store: Path, *args: str) -> Any:
    return runner.invoke(app, ["--store", str(store), *args])


def _ids(result: Any) -> list[str]:
    assert result.exit_code == 0, result.output
    return [r["run"] for r in json.loads(result.stdout)]


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "two.yaml"
    path.write_text(SPEC, encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path: Path, spec: Path) -> Path:
    """A trial of the spec under another name, with an ablation grid; the full grid; and
    a single run."""
    root = tmp_path / "runs"
    trial = ["experiment", str(spec), "--limit-scenarios", "1", "--name", "trial"]
    r = _invoke(root, *trial, "--ablate", "posture:competing")
    assert r.exit_code == 0, r.output
    r = _invoke(root, "experiment", str(spec))
    assert r.exit_code == 0, r.output
    assert _invoke(root, "run", "tenancy", "--budget", "6").exit_code == 0
    return root


def test_a_trial_under_another_name_and_the_full_run_both_complete(store: Path) -> None:
    r = _invoke(store, "runs", "--kind", "experiment", "--format", "json")
    rows = {row["run"]: row for row in json.loads(r.stdout)}
    assert set(rows) == {"trial", "two"}
    assert rows["trial"]["status"] == rows["two"]["status"] == "complete"
    assert (rows["trial"]["planned"], rows["two"]["planned"]) == (
        4,
        8,
    )  # a twin and a mediated episode per cell


def test_runs_hides_derived_runs_and_says_how_many(store: Path) -> None:
    r = _invoke(store, "runs", "--format", "json")
    assert "trial.ablate.posture-competing" not in _ids(r)
    assert "1 run(s) made by other runs" in r.stderr and "--all" in r.stderr
    shown = _invoke(store, "runs", "--all", "--format", "json")
    assert "trial.ablate.posture-competing" in _ids(shown)
    assert "made by other runs" not in shown.stderr


def test_runs_filters_by_name_kind_status_and_date(store: Path) -> None:
    assert _ids(_invoke(store, "runs", "--name", "tri", "--all", "--format", "json")) == [
        "trial",
        "trial.ablate.posture-competing",
    ]
    singles = _ids(_invoke(store, "runs", "--kind", "run", "--format", "json"))
    assert len(singles) == 1 and singles[0][:2] == "20"
    assert _ids(_invoke(store, "runs", "--status", "failed", "--format", "json")) == []
    assert len(_ids(_invoke(store, "runs", "--since", "2000-01-01", "--format", "json"))) == 3
    assert _ids(_invoke(store, "runs", "--since", "2999-01-01T00:00", "--format", "json")) == []


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--since", "yesterday"], "--since: 'yesterday' is not an ISO date"),
        (["--kind", "grid"], "--kind: no run kind 'grid'"),
        (["--status", "done"], "--status: no run status 'done'"),
    ],
)
def test_a_bad_filter_is_one_line_and_exit_status_2(
    store: Path, args: list[str], fragment: str
) -> None:
    r = _invoke(store, "runs", *args)
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {fragment}")


def test_delete_asks_and_without_a_terminal_wants_yes(store: Path) -> None:
    r = _invoke(store, "runs", "delete", "two")
    assert r.exit_code == 2 and "pass --yes" in r.stderr
    assert "two" in _ids(_invoke(store, "runs", "--format", "json"))
    r = _invoke(store, "runs", "delete", "trial", "--yes")
    assert r.exit_code == 0, r.output
    assert "trial.ablate.posture-competing" in r.stdout  # its ablation went with it
    left = _ids(_invoke(store, "runs", "--all", "--format", "json"))
    assert "two" in left and not [x for x in left if x.startswith("trial")]
    assert _invoke(store, "store", "check").exit_code == 0


def test_delete_and_rename_refuse_an_unknown_run(store: Path) -> None:
    for args in (["delete", "nope", "--yes"], ["rename", "nope", "other"]):
        r = _invoke(store, "runs", *args)
        assert r.exit_code == 2 and "no run 'nope'" in r.stderr


def test_rename_refuses_a_taken_or_invalid_name(store: Path) -> None:
    r = _invoke(store, "runs", "rename", "trial", "two")
    assert r.exit_code == 2 and "exists already" in r.stderr
    r = _invoke(store, "runs", "rename", "trial", "a/b")
    assert r.exit_code == 2 and "not a valid run id" in r.stderr


def test_a_renamed_experiment_reports_compares_evaluates_and_resumes(
    store: Path, spec: Path
) -> None:
    r = _invoke(store, "runs", "rename", "trial", "pilot")
    assert r.exit_code == 0, r.output
    assert "renamed trial.ablate.posture-competing to pilot.ablate" in r.stdout
    report = _invoke(store, "report", "pilot")
    assert report.exit_code == 0 and "pilot" in report.stdout
    assert "posture:competing" in report.stdout  # the ablation table found its grid
    compared = _invoke(store, "compare", "--experiment", "pilot", "--by", "mediator")
    assert compared.exit_code == 0, compared.output
    evaluated = _invoke(store, "evaluate", "pilot", "--evaluator", "oracle")
    assert evaluated.exit_code == 0, evaluated.output
    again = ["experiment", str(spec), "--limit-scenarios", "1", "--name", "pilot"]
    resumed = _invoke(store, *again, "--ablate", "posture:competing", "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert "4 episodes planned, 0 run, 4 already done" in resumed.stdout
    assert "trial" not in _ids(_invoke(store, "runs", "--all", "--format", "json"))


def test_an_invalid_experiment_name_is_one_line_and_exit_status_2(
    tmp_path: Path, spec: Path
) -> None:
    r = _invoke(tmp_path / "runs", "experiment", str(spec), "--name", "no spaces")
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines() == [
        "error: --name: 'no spaces' is not a valid run id: use letters, digits, '.', '_' and "
        "'-', starting with a letter or digit"
    ]
