"""A bad scenario file gets one line per problem, naming the field and the fix."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.scenario import builtin_scenarios, dump_scenario, load_scenario
from disputelab.scenario.io import ScenarioError, scenario_to_data
from disputelab.scenario.library import resolve_scenario
from disputelab.scenario.schema import Scenario

TENANCY = Path(__file__).parents[2] / "disputelab" / "scenarios" / "tenancy.yaml"


def _data() -> dict[str, Any]:
    return copy.deepcopy(yaml.safe_load(TENANCY.read_text()))


def _write(tmp_path: Path, data: dict[str, Any] | str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return path


def _problems(path: Path) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    return info.value.problems


def _cli(path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["scenarios", "validate", str(path)])
    return result.exit_code, result.output


def _assert_rejected(path: Path, expected: str) -> None:
    assert expected in _problems(path)
    code, output = _cli(path)
    assert code == 2
    assert expected in " ".join(output.split())  # rich may wrap long lines
    assert "Traceback" not in output


def test_a_missing_field_is_named(tmp_path: Path) -> None:
    d = _data()
    del d["parties"][0]["objective"]
    _assert_rejected(_write(tmp_path, d), "parties[0].objective: missing; add this required field")


def test_an_unknown_field_is_named(tmp_path: Path) -> None:
    d = _data()
    d["parties"][1]["mood"] = "grumpy"
    _assert_rejected(
        _write(tmp_path, d), "parties[1].mood: unknown field; remove it or check its spelling"
    )


def test_weights_must_sum_to_100(tmp_path: Path) -> None:
    d = _data()
    d["parties"][1]["weights"]["rent"] = 25
    _assert_rejected(_write(tmp_path, d), "parties[1].weights: sum is 90, must be 100")


def test_weights_must_cover_every_topic(tmp_path: Path) -> None:
    d = _data()
    d["parties"][0]["weights"] = {"repairs": 60, "arrears": 40}
    problems = _problems(_write(tmp_path, d))
    assert any(
        p.startswith("parties[0].weights: no weight for topic rent, lease") for p in problems
    )


def test_a_preference_naming_an_unknown_option_is_rejected(tmp_path: Path) -> None:
    d = _data()
    d["parties"][0]["preferences"]["rent"] = {
        "ranking": ["A", "B", "E"],
        "unacceptable": ["C", "D"],
    }
    _assert_rejected(
        _write(tmp_path, d),
        "parties[0].preferences.rent: names unknown option 'E'; options are A, B, C, D",
    )


def test_every_option_must_be_ranked_or_unacceptable(tmp_path: Path) -> None:
    d = _data()
    d["parties"][0]["preferences"]["rent"] = {"ranking": ["A", "B"], "unacceptable": ["D"]}
    _assert_rejected(
        _write(tmp_path, d),
        "parties[0].preferences.rent: option C neither ranked nor unacceptable; "
        "list it in one of them",
    )


def test_a_dispute_needs_at_least_two_parties(tmp_path: Path) -> None:
    d = _data()
    d["parties"] = d["parties"][:1]
    _assert_rejected(_write(tmp_path, d), "parties: has 1 party, a dispute needs at least 2")


def test_a_scenario_needs_topics_or_numeric_terms(tmp_path: Path) -> None:
    d = _data()
    d["topics"] = []
    for p in d["parties"]:
        p["weights"] = {}
        p["preferences"] = {}
    problems = _problems(_write(tmp_path, d))
    assert (
        "topics: is empty; add at least one topic with its options, or a numeric term" in problems
    )


def test_a_price_only_scenario_needs_no_topics_and_no_weights(tmp_path: Path) -> None:
    d = _data()
    d["topics"] = []
    ids = [p["id"] for p in d["parties"]]
    for p in d["parties"]:
        p["weights"] = {}
        p["preferences"] = {}
    d["terms"] = [
        {
            "id": "rent",
            "name": "monthly rent",
            "unit": "EUR",
            "targets": {ids[0]: 900, ids[1]: 1200},
            "reservations": {ids[0]: 1100, ids[1]: 1000},
            "reference": 1050,
        }
    ]
    s = load_scenario(_write(tmp_path, d))
    assert s.topics == [] and s.terms[0].reference == 1050


def test_weights_on_a_price_only_scenario_still_name_topics(tmp_path: Path) -> None:
    d = _data()
    d["topics"] = []
    ids = [p["id"] for p in d["parties"]]
    for p in d["parties"]:
        p["preferences"] = {}
    d["terms"] = [{"id": "rent", "name": "rent", "targets": {ids[0]: 900}}]
    problems = _problems(_write(tmp_path, d))
    assert any("unknown topic" in p for p in problems)


def test_a_party_needs_an_acceptable_option_on_every_topic(tmp_path: Path) -> None:
    d = _data()
    d["parties"][1]["preferences"]["lease"] = {"ranking": [], "unacceptable": ["A", "B", "C"]}
    _assert_rejected(
        _write(tmp_path, d),
        "parties[1].preferences.lease.ranking: no acceptable option; rank at least one option "
        "as acceptable",
    )


def test_unreadable_yaml_says_where(tmp_path: Path) -> None:
    path = _write(tmp_path, "id: x\ntitle: [unclosed\nparties: {\n")
    (problem,) = _problems(path)
    assert problem.startswith("not valid YAML:") and "line" in problem
    assert _cli(path)[0] == 2


def test_unreadable_json_says_where(tmp_path: Path) -> None:
    path = _write(tmp_path, '{"id": "x", "title": }', name="s.json")
    assert _problems(path) == ["not valid JSON: Expecting value at line 1"]
    assert _cli(path)[0] == 2


def test_a_file_that_does_not_exist(tmp_path: Path) -> None:
    _assert_rejected(tmp_path / "nope.yaml", "no such file; check the path")


def test_an_empty_file(tmp_path: Path) -> None:
    _assert_rejected(
        _write(tmp_path, ""), "is empty; a scenario file must hold a mapping of fields"
    )


def test_a_wrong_type_names_the_field_and_the_value(tmp_path: Path) -> None:
    d = _data()
    d["parties"][0]["persona"]["reactivity"] = 3
    problems = _problems(_write(tmp_path, d))
    assert any(p.startswith("parties[0].persona.reactivity:") and "3" in p for p in problems)


@pytest.mark.parametrize(
    ("field", "value"), [("im_threshold", 6.0), ("interrupt_threshold", 0.0), ("system1_prob", -1)]
)
def test_turn_taking_thresholds_out_of_range_are_named(
    tmp_path: Path, field: str, value: float
) -> None:
    d = _data()
    d["parties"][0]["persona"][field] = value
    problems = _problems(_write(tmp_path, d))
    assert any(p.startswith(f"parties[0].persona.{field}:") for p in problems), problems
    d = _data()
    d["mediator"] = {field: value}
    assert any(p.startswith(f"mediator.{field}:") for p in _problems(_write(tmp_path, d)))


def test_an_unknown_strategy_lists_the_valid_ones(tmp_path: Path) -> None:
    d = _data()
    d["parties"][0]["persona"]["strategy"] = "bullying"
    (problem,) = _problems(_write(tmp_path, d))
    assert problem.startswith("parties[0].persona.strategy: is 'bullying'")
    assert "'competing'" in problem and "'accommodating'" in problem


def test_several_problems_are_all_reported_at_once(tmp_path: Path) -> None:
    d = _data()
    d["parties"][1]["weights"]["rent"] = 25
    d["parties"][0]["preferences"]["rent"]["ranking"] = ["A", "B", "E"]
    d["parties"][0]["preferences"]["rent"]["unacceptable"] = ["C", "D"]
    problems = _problems(_write(tmp_path, d))
    assert len(problems) == 2
    code, output = _cli(_write(tmp_path, d))
    assert code == 2 and output.count("error:") == 2


def test_a_valid_file_passes(tmp_path: Path) -> None:
    code, output = _cli(TENANCY)
    assert code == 0 and "ok" in output and "tenancy" in output


@pytest.mark.parametrize("sid", sorted(builtin_scenarios()))
@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_builtin_scenarios_round_trip_through_yaml_and_json(
    tmp_path: Path, sid: str, fmt: str
) -> None:
    original = builtin_scenarios()[sid]
    path = tmp_path / f"{sid}.{fmt}"
    path.write_text(dump_scenario(original, fmt))
    assert load_scenario(path) == original
    if fmt == "json":
        json.loads(path.read_text())


@pytest.mark.parametrize(
    ("sid", "parties"), [("tenancy", 2), ("workplace", 3), ("community-centre", 4)]
)
def test_the_builtin_library_covers_two_three_and_four_parties(sid: str, parties: int) -> None:
    s = builtin_scenarios()[sid]
    assert len(s.parties) == parties
    assert 3 <= len(s.topics) <= 5
    assert all(3 <= len(t.options) <= 4 for t in s.topics)
    assert s.language == "en" and len(s.background.split()) > 60


@pytest.mark.parametrize("sid", sorted(builtin_scenarios()))
def test_builtin_rankings_conflict_but_leave_room_for_agreement(sid: str) -> None:
    s = builtin_scenarios()[sid]
    for t in s.topics:
        common = set(t.option_ids())
        for p in s.parties:
            common &= set(p.preferences[t.id].ranking)
        assert common, f"{t.id}: no option every party accepts"
    conflicted = [
        t for t in s.topics if len({p.preferences[t.id].ranking[0] for p in s.parties}) > 1
    ]
    assert len(conflicted) >= len(s.topics) - 1


def test_resolve_accepts_an_id_or_a_path_and_rejects_anything_else(tmp_path: Path) -> None:
    assert resolve_scenario("tenancy").id == "tenancy"
    assert resolve_scenario(str(TENANCY)).id == "tenancy"
    with pytest.raises(ScenarioError, match="not a built-in scenario"):
        resolve_scenario("no-such-scenario")


def test_a_culture_may_be_named_by_its_country_code() -> None:
    from disputelab.scenario.cultures import hofstede

    data = scenario_to_data(builtin_scenarios()["tenancy"])
    data["parties"][0]["persona"]["culture"] = "kr"
    s = Scenario.model_validate(data)
    assert s.parties[0].persona.culture == hofstede()["KR"]
    data["parties"][0]["persona"]["culture"] = "FR"
    with pytest.raises(ValidationError, match="unknown culture 'FR'; use a country code"):
        Scenario.model_validate(data)
