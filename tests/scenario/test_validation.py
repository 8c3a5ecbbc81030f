"""Scenario files: every validation rule has one exact, actionable message line.

Each rule is checked twice, through `load_scenario` (ScenarioError.problems) and through
`disputelab scenarios validate FILE` (exit status 2, the line on stderr, no traceback).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.scenario.io import ScenarioError, dump_scenario, load_scenario, parse_scenario_text
from disputelab.scenario.library import builtin_scenarios

SCENARIO_DIR = Path(__file__).parents[2] / "disputelab" / "scenarios"
TENANCY_DATA: dict[str, Any] = yaml.safe_load((SCENARIO_DIR / "tenancy.yaml").read_text("utf-8"))
BUILTIN_IDS = ("tenancy", "workplace", "community-centre")

Edit = Callable[[dict[str, Any]], None]


def tenancy() -> dict[str, Any]:
    """A fresh, valid copy of the tenancy scenario as plain data."""
    return copy.deepcopy(TENANCY_DATA)


def write_yaml(tmp_path: Path, data: dict[str, Any], name: str = "scenario.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def write_text(tmp_path: Path, text: str, name: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def edited(tmp_path: Path, edit: Edit) -> Path:
    data = tenancy()
    edit(data)
    return write_yaml(tmp_path, data)


def problems_of(path: Path) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert info.value.source == str(path)
    return info.value.problems


def validate_cli(*paths: Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["scenarios", "validate", *map(str, paths)])
    return result.exit_code, result.stdout, result.stderr


def assert_cli_reports(path: Path, expected: list[str]) -> None:
    """validate exits 2 and prints exactly `error: FILE: PROBLEM` for each expected line."""
    code, stdout, stderr = validate_cli(path)
    assert code == 2, stdout + stderr
    assert "Traceback" not in stdout + stderr
    lines = stderr.splitlines()
    for problem in expected:
        assert f"error: {path}: {problem}" in lines, stderr


# ---- field-level rules (pydantic) -------------------------------------------------------


def _drop_objective(d: dict[str, Any]) -> None:
    del d["parties"][0]["objective"]


def _add_unknown_party_field(d: dict[str, Any]) -> None:
    d["parties"][0]["mood"] = "tense"


def _add_unknown_top_level_field(d: dict[str, Any]) -> None:
    d["colour"] = "blue"


# ---- cross-field rules (Scenario model validator) --------------------------------------


def _weights_sum_to_90(d: dict[str, Any]) -> None:
    d["parties"][1]["weights"]["repairs"] = 5  # 5 + 35 + 35 + 15


def _rank_unknown_option(d: dict[str, Any]) -> None:
    d["parties"][0]["preferences"]["repairs"]["ranking"].append("E")


def _one_party(d: dict[str, Any]) -> None:
    d["parties"] = d["parties"][:1]


def _empty_ranking(d: dict[str, Any]) -> None:
    d["parties"][0]["preferences"]["lease"] = {"ranking": [], "unacceptable": ["A", "B", "C"]}


def _option_neither_ranked_nor_unacceptable(d: dict[str, Any]) -> None:
    d["parties"][0]["preferences"]["lease"]["ranking"] = ["B", "C"]  # A left out


def _same_name_but_case_and_spacing(d: dict[str, Any]) -> None:
    d["parties"][1]["name"] = "  " + d["parties"][0]["name"].upper().replace(" ", "  ")


RULES: list[tuple[str, Edit, str]] = [
    (
        "a party without objective",
        _drop_objective,
        "parties[0].objective: missing; add this required field",
    ),
    (
        "an unknown party field",
        _add_unknown_party_field,
        "parties[0].mood: unknown field; remove it or check its spelling",
    ),
    (
        "an unknown top-level field",
        _add_unknown_top_level_field,
        "colour: unknown field; remove it or check its spelling",
    ),
    (
        "weights summing to 90",
        _weights_sum_to_90,
        "parties[1].weights: sum is 90, must be 100",
    ),
    (
        "a preference naming an unknown option",
        _rank_unknown_option,
        "parties[0].preferences.repairs: names unknown option 'E'; options are A, B, C, D",
    ),
    (
        "a single party",
        _one_party,
        "parties: has 1 party, a dispute needs at least 2",
    ),
    (
        "an empty ranking",
        _empty_ranking,
        "parties[0].preferences.lease.ranking: no acceptable option; "
        "rank at least one option as acceptable",
    ),
    (
        "an option neither ranked nor unacceptable",
        _option_neither_ranked_nor_unacceptable,
        "parties[0].preferences.lease: option A neither ranked nor unacceptable; "
        "list it in one of them",
    ),
    (
        "two parties of one name",
        _same_name_but_case_and_spacing,
        "parties: names must tell the parties apart, repeated: Mira Okafor,   MIRA  OKAFOR",
    ),
]


@pytest.mark.parametrize(("case", "edit", "expected"), RULES, ids=[r[0] for r in RULES])
def test_each_rule_reports_exactly_one_line_naming_the_field_path(
    tmp_path: Path, case: str, edit: Edit, expected: str
) -> None:
    path = edited(tmp_path, edit)
    assert problems_of(path) == [expected]


@pytest.mark.parametrize(("case", "edit", "expected"), RULES, ids=[r[0] for r in RULES])
def test_validate_command_prints_each_rule_on_stderr_and_exits_2(
    tmp_path: Path, case: str, edit: Edit, expected: str
) -> None:
    assert_cli_reports(edited(tmp_path, edit), [expected])


def test_a_party_missing_objective_is_reported_as_missing(tmp_path: Path) -> None:
    path = edited(tmp_path, _drop_objective)
    assert problems_of(path) == ["parties[0].objective: missing; add this required field"]


def test_weights_not_summing_to_100_report_the_actual_sum(tmp_path: Path) -> None:
    path = edited(tmp_path, _weights_sum_to_90)
    assert problems_of(path) == ["parties[1].weights: sum is 90, must be 100"]


def test_a_scenario_without_topics_says_topics_is_empty(tmp_path: Path) -> None:
    path = edited(tmp_path, lambda d: d.__setitem__("topics", []))
    expected = "topics: is empty; add at least one topic with its options, or a numeric term"
    problems = problems_of(path)
    assert problems[0] == expected
    assert_cli_reports(path, [expected])


def test_a_scenario_without_parties_needs_at_least_two(tmp_path: Path) -> None:
    path = edited(tmp_path, lambda d: d.__setitem__("parties", []))
    problems = problems_of(path)
    assert any(p.startswith("parties: has 0 part") for p in problems), problems


def test_an_unknown_option_listed_as_unacceptable_is_named(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["parties"][1]["preferences"]["rent"]["unacceptable"] = ["A", "Z"]

    path = edited(tmp_path, edit)
    expected = "parties[1].preferences.rent: names unknown option 'Z'; options are A, B, C, D"
    assert problems_of(path) == [expected]
    assert_cli_reports(path, [expected])


# ---- unreadable files -------------------------------------------------------------------

UNREADABLE: list[tuple[str, str, str, str]] = [
    (
        "yaml syntax error",
        "broken.yaml",
        "id: tenancy\ntitle: a: b\n",
        "not valid YAML: mapping values are not allowed here at line 2",
    ),
    (
        "yaml unclosed bracket",
        "unclosed.yaml",
        "id: tenancy\ntitle: [unclosed\n",
        "not valid YAML: expected ',' or ']', but got '<stream end>' at line 3",
    ),
    (
        "json syntax error",
        "broken.json",
        '{\n  "id": "tenancy",\n  "title": \n}\n',
        "not valid JSON: Expecting value at line 4",
    ),
    (
        "empty yaml file",
        "empty.yaml",
        "",
        "is empty; a scenario file must hold a mapping of fields",
    ),
    (
        "whitespace-only yaml file",
        "blank.yaml",
        "  \n\n",
        "is empty; a scenario file must hold a mapping of fields",
    ),
    (
        "a yaml list instead of a mapping",
        "list.yaml",
        "- tenancy\n- workplace\n",
        "is a list; a scenario file must hold a mapping of fields",
    ),
]


@pytest.mark.parametrize(
    ("case", "name", "text", "expected"), UNREADABLE, ids=[u[0] for u in UNREADABLE]
)
def test_an_unreadable_file_gets_one_line_saying_why_and_where(
    tmp_path: Path, case: str, name: str, text: str, expected: str
) -> None:
    path = write_text(tmp_path, text, name)
    assert problems_of(path) == [expected]
    assert_cli_reports(path, [expected])


def test_json_files_are_parsed_as_json_by_extension(tmp_path: Path) -> None:
    path = write_text(tmp_path, "id: tenancy\n", "yaml-inside.json")
    problems = problems_of(path)
    assert len(problems) == 1 and problems[0].startswith("not valid JSON: ")


def test_a_file_that_does_not_exist_is_named_with_no_such_file(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.yaml"
    assert problems_of(path) == ["no such file; check the path"]
    assert_cli_reports(path, ["no such file; check the path"])


def test_a_directory_is_not_a_scenario_file(tmp_path: Path) -> None:
    assert problems_of(tmp_path) == ["is a directory; give a .yaml or .json scenario file"]


# ---- several problems -------------------------------------------------------------------


def test_several_cross_field_problems_are_all_reported_in_one_pass(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        _weights_sum_to_90(d)
        _rank_unknown_option(d)
        _option_neither_ranked_nor_unacceptable(d)

    path = edited(tmp_path, edit)
    expected = [
        "parties[0].preferences.repairs: names unknown option 'E'; options are A, B, C, D",
        "parties[0].preferences.lease: option A neither ranked nor unacceptable; "
        "list it in one of them",
        "parties[1].weights: sum is 90, must be 100",
    ]
    assert sorted(problems_of(path)) == sorted(expected)
    assert_cli_reports(path, expected)


def test_several_field_problems_are_all_reported_in_one_pass(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        _drop_objective(d)
        _add_unknown_top_level_field(d)
        del d["parties"][1]["fallback"]

    path = edited(tmp_path, edit)
    expected = [
        "parties[0].objective: missing; add this required field",
        "parties[1].fallback: missing; add this required field",
        "colour: unknown field; remove it or check its spelling",
    ]
    assert sorted(problems_of(path)) == sorted(expected)
    assert_cli_reports(path, expected)


def test_a_bad_field_value_does_not_hide_a_bad_weight_sum(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["parties"][0]["persona"]["reactivity"] = 2.0
        _add_unknown_top_level_field(d)
        _weights_sum_to_90(d)

    path = edited(tmp_path, edit)
    expected = [
        "parties[0].persona.reactivity: Input should be less than or equal to 1 (got 2.0)",
        "colour: unknown field; remove it or check its spelling",
        "parties[1].weights: sum is 90, must be 100",
    ]
    assert sorted(problems_of(path)) == sorted(expected)
    assert_cli_reports(path, expected)


def test_a_bad_weight_is_reported_once_not_again_as_a_missing_weight(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["parties"][1]["weights"]["repairs"] = "many"

    problems = problems_of(edited(tmp_path, edit))
    assert len(problems) == 1 and problems[0].startswith("parties[1].weights.repairs: ")


def test_a_missing_field_does_not_hide_a_bad_weight_sum(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        _drop_objective(d)
        _weights_sum_to_90(d)

    path = edited(tmp_path, edit)
    assert sorted(problems_of(path)) == sorted(
        [
            "parties[0].objective: missing; add this required field",
            "parties[1].weights: sum is 90, must be 100",
        ]
    )


def test_validate_reports_every_bad_file_and_still_accepts_the_good_ones(tmp_path: Path) -> None:
    good = write_yaml(tmp_path, tenancy(), "good.yaml")
    bad = write_yaml(tmp_path, {**tenancy(), "colour": "blue"}, "bad.yaml")
    missing = tmp_path / "missing.yaml"
    code, stdout, stderr = validate_cli(good, bad, missing)
    assert code == 2
    assert stdout.startswith("ok ")
    assert "tenancy, 2 parties, 4 topics" in " ".join(stdout.split())
    lines = stderr.splitlines()
    assert f"error: {bad}: colour: unknown field; remove it or check its spelling" in lines
    assert f"error: {missing}: no such file; check the path" in lines
    assert len(lines) == 2


def test_validate_prints_problem_text_verbatim(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["parties"][0]["preferences"]["repairs"]["ranking"].append("[b]")

    path = edited(tmp_path, edit)
    expected = "parties[0].preferences.repairs: names unknown option '[b]'; options are A, B, C, D"
    assert problems_of(path) == [expected]
    assert_cli_reports(path, [expected])


def test_a_valid_file_passes_validate_with_exit_0(tmp_path: Path) -> None:
    path = write_yaml(tmp_path, tenancy())
    code, stdout, stderr = validate_cli(path)
    assert code == 0, stderr
    assert stderr == ""
    assert "ok" in stdout and "tenancy" in stdout


# ---- the built-in library ---------------------------------------------------------------


def test_the_library_still_holds_the_three_original_builtins() -> None:
    assert set(BUILTIN_IDS) <= set(builtin_scenarios())


@pytest.mark.parametrize(
    ("sid", "n_parties"), [("tenancy", 2), ("workplace", 3), ("community-centre", 4)]
)
def test_every_builtin_is_valid_with_3_to_5_topics_and_3_to_4_options(
    sid: str, n_parties: int
) -> None:
    path = SCENARIO_DIR / f"{sid}.yaml"
    s = load_scenario(path)  # raises if invalid
    assert s.id == sid
    assert len(s.parties) == n_parties
    assert 3 <= len(s.topics) <= 5
    for topic in s.topics:
        assert 3 <= len(topic.options) <= 4, topic.id


@pytest.mark.parametrize("sid", BUILTIN_IDS)
def test_every_builtin_file_passes_validate(sid: str) -> None:
    code, _, stderr = validate_cli(SCENARIO_DIR / f"{sid}.yaml")
    assert code == 0, stderr


@pytest.mark.parametrize("fmt", ["yaml", "json"])
@pytest.mark.parametrize("sid", BUILTIN_IDS)
def test_dump_then_load_gives_back_an_equal_scenario(tmp_path: Path, sid: str, fmt: str) -> None:
    original = builtin_scenarios()[sid]
    text = dump_scenario(original, fmt)
    assert parse_scenario_text(text, "dumped", fmt) == original
    path = write_text(tmp_path, text, f"{sid}.{fmt}")
    assert load_scenario(path) == original
    if fmt == "json":
        assert json.loads(text)["id"] == sid


def test_a_bad_field_inside_a_party_does_not_hide_two_parties_of_one_id(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["parties"][1]["id"] = d["parties"][0]["id"]
        d["parties"][0]["persona"]["reactivity"] = 2.0

    problems = problems_of(edited(tmp_path, edit))
    assert "parties[0].persona.reactivity: Input should be less than or equal to 1 (got 2.0)" in (
        problems
    )
    assert any(p.startswith("parties: ids must be unique, repeated: ") for p in problems), problems
    assert len(problems) == 2


def test_a_bad_terms_field_is_not_also_reported_as_nothing_to_negotiate(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["topics"] = []
        for party in d["parties"]:
            party["weights"], party["preferences"] = {}, {}
        d["terms"] = "price"

    problems = problems_of(edited(tmp_path, edit))
    assert len(problems) == 1 and problems[0].startswith("terms: "), problems


def test_a_bad_terms_field_does_not_hide_two_topics_of_one_id(tmp_path: Path) -> None:
    def edit(d: dict[str, Any]) -> None:
        d["topics"][1]["id"] = d["topics"][0]["id"]
        d["terms"] = "price"

    problems = problems_of(edited(tmp_path, edit))
    assert any(p.startswith("terms: ") for p in problems), problems
    assert any(p.startswith("topics: ids must be unique, repeated: ") for p in problems), problems
