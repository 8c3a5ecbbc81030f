"""`disputelab.api.cases`: checking scenario files and importing external cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from disputelab import api
from disputelab.api import cases, catalog

SOCRATES = Path(__file__).parents[1] / "scenario" / "data" / "socrates" / "downtown-general.json"


def _scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "case.yaml"
    path.write_text(catalog.show_scenario("tenancy"), encoding="utf-8")
    return path


def test_validate_scenario_file_gives_the_scenario_and_why_it_cannot_settle(
    tmp_path: Path,
) -> None:
    checked = cases.validate_scenario_file(_scenario_file(tmp_path))
    assert checked.scenario.id == "tenancy" and checked.warnings == []


def test_validate_scenario_file_lists_the_problems_of_a_bad_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\ntitle: no parties\n", encoding="utf-8")
    with pytest.raises(api.ScenarioError) as caught:
        cases.validate_scenario_file(bad)
    assert caught.value.problems


def test_validate_scenario_file_tells_an_experiment_spec_from_a_scenario(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump({"name": "x", "scenarios": ["tenancy"]}), encoding="utf-8")
    with pytest.raises(cases.NotAScenarioError) as caught:
        cases.validate_scenario_file(spec)
    assert caught.value.path == spec


def test_case_files_refuses_an_unknown_format_a_missing_path_and_an_empty_folder(
    tmp_path: Path,
) -> None:
    with pytest.raises(cases.CaseImportError, match="unknown format 'x'; available"):
        cases.case_files("x", tmp_path)
    with pytest.raises(cases.CaseImportError, match="no such file or folder"):
        cases.case_files("socrates", tmp_path / "nowhere")
    with pytest.raises(cases.CaseImportError, match="no socrates case files in this folder"):
        cases.case_files("socrates", tmp_path)
    assert cases.case_files("socrates", SOCRATES) == [SOCRATES]


def test_only_promediate_briefs_are_read_with_a_model() -> None:
    assert cases.reads_with_model("promediate")
    assert not cases.reads_with_model("agentmediation")
    assert set(cases.IMPORT_FORMATS) == {"promediate", "agentmediation", "socrates", "sadas"}


def test_import_cases_writes_a_scenario_file_per_case_and_says_what_it_did(
    tmp_path: Path,
) -> None:
    target = tmp_path / "library"
    target.mkdir()
    (done,) = cases.import_cases("socrates", [SOCRATES], target)
    assert done.path == SOCRATES and done.one_case_per_file and not done.failed
    assert len(done.saved) == 1 and done.saved[0].parent == target and done.faults == 0
    assert cases.validate_scenario_file(done.saved[0]).scenario.id == done.saved[0].stem


def test_import_cases_keeps_a_file_edited_since_unless_told_to_overwrite(tmp_path: Path) -> None:
    (first,) = cases.import_cases("socrates", [SOCRATES], tmp_path)
    written = first.saved[0]
    written.write_text(written.read_text("utf-8") + "# mine\n", encoding="utf-8")
    (again,) = cases.import_cases("socrates", [SOCRATES], tmp_path)
    assert again.kept == [written] and again.saved == []
    assert written.read_text("utf-8").endswith("# mine\n")
    (forced,) = cases.import_cases("socrates", [SOCRATES], tmp_path, overwrite=True)
    assert forced.saved == [written] and not written.read_text("utf-8").endswith("# mine\n")


def test_import_cases_names_an_id_already_imported_from_another_file(tmp_path: Path) -> None:
    twin = tmp_path / "elsewhere" / SOCRATES.name  # a SoCRATES case's id is its file's name
    twin.parent.mkdir()
    twin.write_text(json.dumps(json.loads(SOCRATES.read_text("utf-8"))), encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    first, second = cases.import_cases("socrates", [SOCRATES, twin], out)
    assert first.saved and second.clashes == [(first.saved[0].stem, SOCRATES)]
    assert second.faults == 1


def test_a_file_that_does_not_read_is_one_fault(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    (done,) = cases.import_cases("socrates", [broken], tmp_path)
    assert done.failed and done.problems and done.faults == 1 and done.saved == []


def test_unread_opinions_are_empty_where_the_rules_read_everything(tmp_path: Path) -> None:
    assert cases.unread_opinions([]) == []
