"""Every user file is read through one guarded door (`disputelab.scenario.inputs`): only
regular files, of bounded size, parsed within bounded nesting, integer digits and YAML
values; ids, titles and names are bounded by the schema (issue 18, item 9)."""

from __future__ import annotations

import glob
import json
import os
from pathlib import Path

import pytest
import yaml

from disputelab.scenario import inputs
from disputelab.scenario.importers import read_cases
from disputelab.scenario.inputs import (
    MAX_DATASET_BYTES,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    InputLimitError,
    UserFileError,
    glob_paths,
    load_json,
    load_yaml,
    path_kind,
    read_user_file,
)
from disputelab.scenario.io import ScenarioError, dump_scenario, parse_scenario_text
from disputelab.scenario.library import builtin_scenarios, resolve_scenario
from tests.data_location import agentmediation_records
from tests.helpers import AGENTMEDIATION_CASES, PROMEDIATE


def _problem(
    path: str | Path, max_bytes: int = MAX_FILE_BYTES, what: str = "a scenario file"
) -> str:
    with pytest.raises(UserFileError) as info:
        read_user_file(path, max_bytes, what)
    assert "\n" not in str(info.value)
    return str(info.value)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/dev/urandom"])
def test_a_device_is_refused_by_its_type_before_it_is_opened(device: str) -> None:
    assert _problem(device).startswith("is a device, not a regular file; give a")


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    assert _problem(tmp_path / "pipe.yaml").startswith("is a FIFO (named pipe)")


def test_a_folder_a_missing_file_and_a_name_too_long_each_get_their_line(
    tmp_path: Path,
) -> None:
    assert _problem(tmp_path) == "is a directory; give a scenario file"
    assert _problem(tmp_path / "nope.yaml") == "no such file; check the path"
    assert _problem(tmp_path / ("x" * 300)) == "cannot be read: File name too long"
    assert path_kind(tmp_path / ("x" * 300)) == "unreadable"


def test_a_file_over_the_limit_is_refused_and_one_at_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("x" * 1000)
    assert read_user_file(path, max_bytes=1000) == "x" * 1000
    problem = _problem(path, max_bytes=999, what="a scenario file")
    assert problem.startswith("is 1,000 bytes or more, over the 999 bytes limit for a scenario")


def test_text_that_is_not_utf8_names_the_byte_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "latin.yaml"
    path.write_bytes(b"id: caf\xe9\n")
    assert _problem(path) == "not UTF-8 text (byte 0xe9 at offset 7); save it as UTF-8"


@pytest.mark.data("agentmediation", "promediate")
def test_the_real_datasets_fit_well_within_the_limits() -> None:
    files = [*AGENTMEDIATION_CASES.parent.glob("*.json*"), *PROMEDIATE.glob("*.json")]
    sizes = {p: p.stat().st_size for p in files}
    assert sizes and max(sizes.values()) * 10 < MAX_DATASET_BYTES
    assert max(s for p, s in sizes.items() if "promediate" in p.parts) * 10 < MAX_FILE_BYTES


@pytest.mark.data("agentmediation")
def test_every_real_agentmediation_case_still_imports_through_the_guarded_reader() -> None:
    found = read_cases("agentmediation", AGENTMEDIATION_CASES)
    records = agentmediation_records(AGENTMEDIATION_CASES)
    assert len(found.scenarios) == len(records) and not found.problems


def test_nesting_deeper_than_the_limit_is_refused_in_json_and_yaml() -> None:
    ok = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert load_json(ok) is not None and load_yaml(ok) is not None
    deep = "[" * 100_000 + "]" * 100_000
    for load in (load_json, load_yaml):
        with pytest.raises(InputLimitError, match=f"more than {MAX_DEPTH} levels deep"):
            load(deep)
    block = "".join(f"{'  ' * i}k{i}:\n" for i in range(MAX_DEPTH + 5))
    with pytest.raises(InputLimitError, match="at line"):
        load_yaml(block)


def test_brackets_inside_json_strings_are_not_nesting() -> None:
    assert load_json(json.dumps({"text": "[" * 1000})) == {"text": "[" * 1000}


@pytest.mark.parametrize(
    "text", ["9" * 5000, "-" + "9" * 65, "0x" + "f" * 70, ":".join(["1"] * 40_000)]
)
def test_an_integer_of_too_many_digits_is_refused_in_yaml(text: str) -> None:
    with pytest.raises(InputLimitError, match="numbers have at most 64"):
        load_yaml(f"seed: {text}\n")


def test_an_integer_of_too_many_digits_is_refused_in_json() -> None:
    with pytest.raises(InputLimitError, match="integer of 5,000 digits"):
        load_json('{"seed": ' + "9" * 5000 + "}")
    assert load_json('{"seed": ' + "9" * 64 + "}") == {"seed": int("9" * 64)}


def test_a_yaml_alias_bomb_and_a_self_containing_alias_are_refused() -> None:
    bomb = "\n".join(
        ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
        + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 7)]
    )
    with pytest.raises(InputLimitError, match="aliases counted in full"):
        load_yaml(bomb)
    assert load_yaml("a: &a [1, 2]\nb: *a\n") == {"a": [1, 2], "b": [1, 2]}
    with pytest.raises(InputLimitError, match="used inside its own anchor"):
        load_yaml("a: &a\n  - *a\n")


def test_the_values_limit_is_a_parameter_for_bigger_documents() -> None:
    text = "[" + ", ".join(["1"] * 50) + "]"
    assert len(load_yaml(text, max_values=51)) == 50
    with pytest.raises(InputLimitError, match="more than 10 values"):
        load_yaml(text, max_values=10)


def test_a_list_as_a_mapping_key_is_a_yaml_error_not_a_type_error() -> None:
    with pytest.raises(yaml.YAMLError) as info:
        load_yaml("? [a]\n: 1\n")
    assert "keys must be text or numbers" in str(info.value)


def test_a_scenario_json_refuses_a_key_given_twice_as_yaml_does() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario_text('{"id": "a", "id": "b"}', "dup.json", "json")
    assert info.value.problems == ["duplicate key 'id'; give each key once"]


def test_globs_match_as_glob_does_within_their_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a.yaml", "b.yaml", ".hidden.yaml", "sub/c.yaml", "sub/d.json"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x")
    for pattern in ("*.yaml", "*/*", "s[u]b/?.yaml", ".*", "*/", "none/*", "a.yaml"):
        full = str(tmp_path / pattern)
        assert glob_paths(full) == (sorted(glob.glob(full)) if glob.has_magic(full) else [full])
    monkeypatch.setattr(inputs, "MAX_GLOB_MATCHES", 2)
    with pytest.raises(InputLimitError, match="matches more than 2 paths"):
        glob_paths(str(tmp_path / "*"))
    monkeypatch.setattr(inputs, "MAX_GLOB_VISITS", 3)
    with pytest.raises(InputLimitError, match="more than 3 directory entries"):
        glob_paths(str(tmp_path / "*" / "*"))


@pytest.mark.parametrize(
    ("field", "limit"),
    [("id", 128), ("title", 200)],
)
def test_ids_and_titles_are_bounded_with_a_message_that_says_by_how_much(
    field: str, limit: int
) -> None:
    text = dump_scenario(builtin_scenarios()["tenancy"], "json")
    data = json.loads(text)
    data[field] = "x" * 1_000_000
    with pytest.raises(ScenarioError) as info:
        parse_scenario_text(json.dumps(data), "long.json", "json")
    assert info.value.problems == [
        f"{field}: is 1,000,000 characters long, more than the {limit} allowed; shorten it"
    ]


def test_party_and_topic_names_are_bounded() -> None:
    data = json.loads(dump_scenario(builtin_scenarios()["tenancy"], "json"))
    data["parties"][1]["name"] = "n" * 121
    data["topics"][0]["name"] = "t" * 121
    with pytest.raises(ScenarioError) as info:
        parse_scenario_text(json.dumps(data), "long.json", "json")
    assert sorted(p.split(":")[0] for p in info.value.problems) == [
        "parties[1].name",
        "topics[0].name",
    ]


def test_thousands_of_repeated_ids_are_listed_in_a_short_line() -> None:
    data = json.loads(dump_scenario(builtin_scenarios()["tenancy"], "json"))
    data["topics"][0]["options"] += [dict(data["topics"][0]["options"][0])] * 5000
    with pytest.raises(ScenarioError) as info:
        parse_scenario_text(json.dumps(data), "many.json", "json")
    assert all(len(p) < 400 for p in info.value.problems)


def test_a_ref_too_long_for_a_file_name_is_a_scenario_error() -> None:
    with pytest.raises(ScenarioError) as info:
        resolve_scenario("y" * 300 + ".yaml")
    assert info.value.problems == ["cannot be read: File name too long"]


def test_a_promediate_case_with_names_of_the_wrong_type_is_one_line(tmp_path: Path) -> None:
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"options": "1. Term:\n(a) One\n(b) Two", "names": 1}))
    found = read_cases("promediate", case)
    assert found.failed
    assert found.problems == [
        (str(case), "'names' must map each party's name to its profile text, not a number")
    ]
