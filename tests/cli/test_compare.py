"""`disputelab compare`: a leaderboard of stored runs, and one-line errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app

runner = CliRunner()


def _invoke(store: Path, *args: str) -> Any:
    return runner.invoke(app, ["--store", str(store), *args])


@pytest.fixture
def store(tmp_path: Path) -> Path:
    spec = tmp_path / "two.yaml"
    spec.write_text(
        "name: two\nscenarios: [tenancy, workplace]\nmediators: [rule]\nreplicates: 2\nbudget: 6\n",
        encoding="utf-8",
    )
    r = _invoke(tmp_path / "runs", "experiment", str(spec))
    assert r.exit_code == 0, r.output
    return tmp_path / "runs"


def test_compare_ranks_the_mediators_of_an_experiment(store: Path) -> None:
    r = _invoke(store, "compare", "--experiment", "two", "--by", "mediator", "--format", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["by"] == "mediator" and data["metric"] == "socrates-oracle.final_consensus"
    assert sorted(row["arm"] for row in data["leaderboard"]) == ["none", "rule"]
    assert data["differences"][0]["pairs"] == 4


def test_compare_writes_the_file_asked_for(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "board.csv"
    r = _invoke(store, "compare", "two", "--by", "mediator", "--format", "csv", "--out", str(out))
    assert r.exit_code == 0, r.output
    assert out.read_text(encoding="utf-8").startswith("rank,arm,strength")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "error: give one or more runs, or --experiment NAME"),
        (("two",), "error: by model: these runs have 1 model (rule); a comparison needs two"),
        (("two", "--by", "mediator", "--metric", "nope"), "error: no metric 'nope' in these"),
        (("nosuch",), "error: no run 'nosuch' in store"),
    ],
)
def test_bad_input_is_one_line_and_exit_status_2(
    store: Path, args: tuple[str, ...], message: str
) -> None:
    r = _invoke(store, "compare", *args)
    assert r.exit_code == 2
    assert r.output.strip().startswith(message), r.output
    assert len(r.output.strip().splitlines()) == 1
