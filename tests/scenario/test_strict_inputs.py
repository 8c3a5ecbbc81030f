"""Nonsense is refused, not played in silence (issue 46, item 2): unknown languages and
domains (with the list of what is allowed), control characters in names and text (the
field named), counts given as text, YAML tags beyond the standard scalars, and importer
records outside what their format allows. Each case exits 2 with one error line."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.base import ChatRequest, Message
from disputelab.scenario.inputs import load_yaml
from tests.test_fuzz_inputs import AGENTMEDIATION_CASES, PROMEDIATE_CASE


def _cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), *args])
    return r.exit_code, " ".join(r.output.split())


def _tenancy() -> dict[str, object]:
    text = resources.files("disputelab.scenarios").joinpath("tenancy.yaml").read_text("utf-8")
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


def _validate(tmp_path: Path, data: object, raw: str | None = None) -> tuple[int, str]:
    path = tmp_path / "case.yaml"
    path.write_text(raw if raw is not None else json.dumps(data))  # escapes kept as escapes
    return _cli(tmp_path, "scenarios", "validate", str(path))


def _refused(result: tuple[int, str], *needles: str) -> None:
    code, text = result
    assert code == 2, text
    assert "Traceback" not in text and "error:" in text
    for needle in needles:
        assert needle in text, text


@pytest.mark.parametrize(
    ("field", "value", "allowed"),
    [("language", "xx", "en, zh"), ("domain", "astrology", "legal, transactional")],
)
def test_an_unknown_enumeration_is_refused_with_what_is_allowed(
    tmp_path: Path, field: str, value: str, allowed: str
) -> None:
    data = {**_tenancy(), field: value}
    code, text = _validate(tmp_path, data)
    _refused((code, text), field, value)
    for name in allowed.split(", "):
        assert name in text, text


def test_regional_forms_of_a_known_language_are_accepted(tmp_path: Path) -> None:
    code, text = _validate(tmp_path, {**_tenancy(), "language": "en-GB"})
    assert code == 0, text


def test_a_control_character_in_a_party_name_is_refused_naming_the_field(tmp_path: Path) -> None:
    data = _tenancy()
    data["parties"][0]["name"] = "Ann\x00Lee"  # type: ignore[index]
    _refused(_validate(tmp_path, data), "parties[0].name", "U+0000")


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\x7f", "\x85"])
def test_control_characters_in_text_are_refused_but_newlines_and_tabs_are_fine(
    tmp_path: Path, char: str
) -> None:
    ok = {**_tenancy(), "background": "Line one.\n\tLine two."}
    assert _validate(tmp_path, ok)[0] == 0
    bad = {**_tenancy(), "background": f"Damp{char} flat."}
    _refused(_validate(tmp_path, bad), "background", f"U+{ord(char):04X}")


def test_a_control_character_in_a_model_reply_is_stripped_at_the_boundary() -> None:
    import asyncio

    from disputelab.llm.openai_backend import OpenAICompatible
    from disputelab.llm.testing import Scripted, fake_openai

    ask = ChatRequest((Message("user", "Your move?"),))
    with fake_openai() as server:
        server.script(Scripted(content="Let us\x00 split\x1b[31m it.\nDone\t."))
        r = asyncio.run(OpenAICompatible("m", server.url, api_key_env=None).complete(ask))
    assert r.text == "Let us split[31m it.\nDone\t."


@pytest.mark.parametrize(
    "line", ['replicates: "3"', 'base_seed: "5"', 'concurrency: "4"', 'limit_scenarios: "1"']
)
def test_a_count_given_as_text_is_refused(tmp_path: Path, line: str) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"name: s\nscenarios: [tenancy]\n{line}\n")
    field = line.partition(":")[0]
    _refused(_cli(tmp_path, "experiment", str(spec), "--dry-run"), field, "not text")


@pytest.mark.parametrize(
    "tagged", ["!!binary SGVsbG8=", "!!timestamp 2001-12-14", "!!python/object:os.system x"]
)
def test_yaml_tags_beyond_the_standard_scalars_are_refused(tmp_path: Path, tagged: str) -> None:
    raw = yaml.safe_dump(_tenancy(), allow_unicode=True, sort_keys=False)
    raw = raw.replace(f"title: {_tenancy()['title']}", f"title: {tagged}", 1)
    assert tagged in raw
    _refused(_validate(tmp_path, None, raw), "tag", "line")


def test_standard_tags_and_plain_dates_are_read_as_usual() -> None:
    data = load_yaml("a: !!str 3\nb: !!int '4'\nc: 2001-12-14\nd: !!float 1\n")
    assert data == {"a": "3", "b": 4, "c": "2001-12-14", "d": 1.0}


def test_an_agentmediation_record_with_more_players_than_seats_is_refused(tmp_path: Path) -> None:
    record = dict(AGENTMEDIATION_CASES[0])
    record["players"] = [f"当事人{i}" for i in range(1000)]
    record["player_number"] = 1000
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n")
    args = ("scenarios", "import", str(path), "--from", "agentmediation")
    _refused(_cli(tmp_path, *args, "--out", str(tmp_path / "out")), "players", "at most 8")
    assert not list((tmp_path / "out").glob("*.yaml"))


def test_a_promediate_case_without_issues_is_refused(tmp_path: Path) -> None:
    case = {k: v for k, v in PROMEDIATE_CASE.items() if k != "issues"}
    path = tmp_path / "pm.json"
    path.write_text(json.dumps(case))
    args = ("scenarios", "import", str(path), "--from", "promediate")
    _refused(_cli(tmp_path, *args, "--out", str(tmp_path / "out")), "issues")
