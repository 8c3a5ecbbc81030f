"""The generic layout, for a protocol without its own: CIs clustered by scenario, "n/a"
where a cell has no interval, and undefined episodes counted with their reason."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from typer.testing import CliRunner

from disputelab.cli import app


def _report(tmp_path: Path, scenarios: str, replicates: int) -> str:
    spec = tmp_path / "toy.yaml"
    spec.write_text(
        f"name: toy-grid\nprotocol: show-of-hands\nscenarios: [{scenarios}]\n"
        f"mediators: [counter]\nreplicates: {replicates}\nrounds: 2\n",
        encoding="utf-8",
    )
    runner = CliRunner()
    assert runner.invoke(app, ["--store", str(tmp_path), "experiment", str(spec)]).exit_code == 0
    result = runner.invoke(app, ["--store", str(tmp_path), "report", "toy-grid"])
    assert result.exit_code == 0, result.output
    return result.output


def test_replicates_of_one_scenario_give_no_interval(
    toy: ModuleType,
    tmp_path: Path,
) -> None:
    report = _report(tmp_path, "tenancy", 3)
    row = next(line for line in report.splitlines() if line.startswith("| general |"))
    cells = [c.strip() for c in row.strip("|").split("|")[3:]]
    assert cells and all(c.endswith("± n/a (1 cluster)") or c.startswith("-") for c in cells), row
    assert "cluster-robust t interval over scenarios" in report


def test_two_scenarios_are_too_few_for_an_interval(
    toy: ModuleType,
    tmp_path: Path,
) -> None:
    report = _report(tmp_path, "tenancy, workplace", 2)
    row = next(line for line in report.splitlines() if line.startswith("| general |"))
    assert "| 4 |" in row and row.endswith("± n/a (2 clusters) |")


def test_five_scenarios_give_an_interval(
    toy: ModuleType,
    tmp_path: Path,
) -> None:
    report = _report(
        tmp_path, "tenancy, workplace, boundary-wall, community-centre, farm-inheritance", 1
    )
    row = next(line for line in report.splitlines() if line.startswith("| general |"))
    assert "| 5 |" in row and "n/a" not in row
