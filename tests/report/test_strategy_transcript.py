"""A run's transcript shows each party's strategy point where the episode recorded one,
a table of the points by round, and whom a one-party strategy was drawn for."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from disputelab.cli import app


def _report(tmp_path: Path, condition: str, seed: int = 0) -> str:
    store = str(tmp_path / "runs")
    cli = CliRunner()
    args = ["--store", store, "run", "tenancy", "--protocol", "staged"]
    ran = cli.invoke(app, [*args, "--condition", condition, "--seed", str(seed)])
    assert ran.exit_code == 0, ran.output
    return cli.invoke(app, ["--store", store, "report", "last"]).output


def test_an_adaptive_run_shows_every_partys_point_per_round(tmp_path: Path) -> None:
    text = _report(tmp_path, "strategy:competing@all,strategy_update:adaptive")
    table = text.split("### Strategy points")[1].split("###")[0].splitlines()
    assert table[2].startswith("| party | statement | round 1 |")
    rows = [line for line in table if line.startswith("| ") and "a=" in line]
    assert len(rows) == 2  # tenancy's two parties
    assert all(r.split("|")[2].strip() == "a=10 c=0 (competing)" for r in rows)
    marked = [line for line in text.splitlines() if line.startswith("> _strategy: a=")]
    assert len(marked) == sum(r.count("a=") for r in rows)


def test_a_drawn_strategy_names_its_party_and_a_static_run_shows_no_points(
    tmp_path: Path,
) -> None:
    drawn = _report(tmp_path, "strategy:avoiding@one", seed=4)
    assert "- one-party strategy: avoiding, drawn for " in drawn
    static = _report(tmp_path, "strategy:avoiding@all")
    assert "### Strategy points" not in static and "> _strategy:" not in static
