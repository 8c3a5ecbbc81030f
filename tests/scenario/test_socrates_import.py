"""SoCRATES's released scenarios, read from disk in the format our spec of the paper
describes (its Table 13 fields); the fixture was written for this test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.plan.spec import ExperimentSpec, resolve_scenarios
from disputelab.scenario.importers import read_cases
from disputelab.scenario.importers.socrates import ranking_from
from disputelab.scenario.io import load_scenario

DATA = Path(__file__).parent / "data" / "socrates"
FILE = DATA / "downtown-general.json"


def test_a_released_scenario_becomes_a_playable_scenario() -> None:
    found = read_cases("socrates", FILE)
    assert not found.problems
    (s,) = found.scenarios
    assert s.id == "socrates-downtown-general" and s.domain == "healthcare"
    assert [t.id for t in s.topics] == ["ACC", "WORK"]
    assert s.topic("ACC").option_ids() == ["A", "B", "C", "D"]  # "(A)" read as A
    shoa = s.party("shoa")
    assert shoa.role == "SHOA" and shoa.name == "State Health Oversight Agency"
    assert shoa.weights == {"ACC": 70, "WORK": 30}
    assert shoa.preferences["ACC"].ranking == ["A", "B", "C", "D"]
    assert shoa.preferences["WORK"].ranking == ["B", "A", "C"]
    assert any("rankings" in a for a in s.assumptions)


def test_rankings_past_the_stance_put_nearer_options_first() -> None:
    assert ranking_from("C", ["A", "B", "C", "D"]) == ["C", "B", "D", "A"]


def test_a_stance_outside_the_options_is_one_clear_problem(tmp_path: Path) -> None:
    data = json.loads(FILE.read_text())
    data["parties"][0]["stances"]["ACC"] = "E"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    found = read_cases("socrates", bad)
    assert found.failed and not found.scenarios
    assert "parties[0].stances.ACC: 'E' is not one of" in found.problems[0][1]


def test_scenarios_import_from_socrates(tmp_path: Path) -> None:
    out = tmp_path / "lib"
    args = ["--store", str(tmp_path / "runs"), "scenarios", "import", "--from", "socrates"]
    result = CliRunner().invoke(app, [*args, str(DATA), "--out", str(out)])
    assert result.exit_code == 0, result.output
    (written,) = out.glob("*.yaml")
    assert load_scenario(written).id == "socrates-downtown-general"


def test_importing_again_keeps_a_file_edited_since_unless_told_to_overwrite(
    tmp_path: Path,
) -> None:
    out = tmp_path / "lib"
    args = ["--store", str(tmp_path / "runs"), "scenarios", "import", "--from", "socrates"]
    again = [*args, str(DATA), "--out", str(out)]
    assert CliRunner().invoke(app, again).exit_code == 0
    (written,) = out.glob("*.yaml")
    pristine = written.read_text()
    assert CliRunner().invoke(app, again).exit_code == 0  # the same text: written again
    written.write_text(pristine + "# my notes\n")
    kept = CliRunner().invoke(app, again)
    assert kept.exit_code == 0 and "kept 1 scenario file(s)" in " ".join(kept.output.split())
    assert written.read_text().endswith("# my notes\n")
    assert CliRunner().invoke(app, [*again, "--overwrite"]).exit_code == 0
    assert written.read_text() == pristine


def test_importing_a_corrected_case_again_rewrites_the_file_the_import_wrote(
    tmp_path: Path,
) -> None:
    # What changed is the source, not the file: the import's own file is rewritten.
    source = tmp_path / "downtown-general.json"
    data = json.loads(FILE.read_text())
    source.write_text(json.dumps(data))
    out = tmp_path / "lib"
    args = ["--store", str(tmp_path / "runs"), "scenarios", "import", "--from", "socrates"]
    again = [*args, str(source), "--out", str(out)]
    assert CliRunner().invoke(app, again).exit_code == 0
    data["title"] = data["title"] + " (corrected)"
    source.write_text(json.dumps(data))
    result = CliRunner().invoke(app, again)
    assert result.exit_code == 0 and "kept" not in result.output
    (written,) = out.glob("*.yaml")
    assert "(corrected)" in written.read_text()


def test_a_spec_can_name_the_released_scenarios_as_a_source(tmp_path: Path) -> None:
    spec = ExperimentSpec(name="x", scenarios=[f"socrates:{DATA}"], preset="socrates")
    found = resolve_scenarios(spec, tmp_path, tmp_path)
    assert list(found) == ["socrates-downtown-general"] and spec.protocol == "roundtable"


@pytest.mark.parametrize("missing", ["title", "topics", "parties"])
def test_a_missing_field_is_named(tmp_path: Path, missing: str) -> None:
    data = json.loads(FILE.read_text())
    del data[missing]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    found = read_cases("socrates", bad)
    assert found.failed and repr(missing) in found.problems[0][1]
