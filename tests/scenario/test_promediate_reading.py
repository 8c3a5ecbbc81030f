"""The ProMediate importer never guesses: what its rules cannot read fails the case with
the party, topic and line, is imported only when asked (`--lenient`, marked as assumed),
or is read by a model held to the case's options (`--model`, also marked)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.scenario import load_scenario
from disputelab.scenario.importers.promediate import import_promediate
from disputelab.scenario.importers.promediate_text import parse_options
from tests.helpers import PROMEDIATE

SHARED = PROMEDIATE

# Two options that share nearly every word: only a reader of meaning can tell which one
# Quinn's prose describes (the shape of the Williams case).
CASE: dict[str, Any] = {
    "instruction": "A hospital committee settles a prescribing policy.\n{issues}",
    "issues": "1. Consultation",
    "options": (
        "1. Consultation:\n"
        "(a) No consultations\n"
        "(b) Mandatory consultation outside a specialty; borderline drugs at discretion\n"
        "(c) Mandatory consultation outside a specialty and for borderline drugs\n"
    ),
    "names": {
        "Ada": "## Opinions\n1) Consultation\nFirst choice: c\nSecond choice: b\nUnacceptable: a",
        "Quinn": (
            "## Opinions\n1) Consultation\n- First Choice\n"
            "You want consultation to be mandatory outside a specialty, and borderline "
            "drugs must be covered as well.\n"
        ),
        "Mediator": "You chair.",
    },
}


def _write(tmp_path: Path, data: dict[str, Any] = CASE, name: str = "policy.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _import(*args: str) -> Any:
    return CliRunner().invoke(app, ["scenarios", "import", "--from", "promediate", *args])


def test_an_option_marker_counts_only_at_the_start_of_a_line_or_in_sequence() -> None:
    text = (
        "2. Engines: Which engine(s) will the airline buy?\n"
        "(a) JX5 engines only\n(b) Half each\n(c) C-323 engines only\n"
    )
    (topic,) = parse_options(text)
    assert [o.id for o in topic.options] == ["A", "B", "C"]  # no option 'S'
    assert topic.heading.startswith("Engines")


@pytest.mark.parametrize(
    ("text", "markers"),
    [
        ("1. Name\n(A): first\n(B): second\n", ["A", "B"]),
        ("1. Name\n(1). first\n(2). second\n", ["1", "2"]),
        ("## Issue 1: Name\n- Option 1A: first\n- Option 1B: second\n", ["1A", "1B"]),
        ("1. Name\n(a) Two-year (b) Five-year\n", ["a", "b"]),
    ],
)
def test_every_option_list_shape_of_the_public_cases_is_read(text: str, markers: list[str]) -> None:
    (topic,) = parse_options(text)
    assert [o.marker for o in topic.options] == markers
    assert [o.label for o in topic.options] == [
        "first" if "first" in text else "Two-year",
        "second" if "second" in text else "Five-year",
    ]


def test_a_preference_the_rules_cannot_read_fails_the_case_naming_party_topic_and_line(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError, match=r"Quinn/consultation: .*First Choice You want"):
        import_promediate(CASE, "policy")
    result = _import(str(_write(tmp_path)), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "Quinn/consultation" in result.output and "--lenient" in result.output
    assert not (tmp_path / "out" / "policy.yaml").exists()


def test_lenient_imports_it_with_a_warning_and_marks_the_scenario_as_assuming(
    tmp_path: Path,
) -> None:
    result = _import(str(_write(tmp_path)), "--out", str(tmp_path / "out"), "--lenient")
    assert result.exit_code == 0, result.output
    assert "assumed: options ranked in listed order" in result.output
    s = load_scenario(tmp_path / "out" / "policy.yaml")
    (assumed,) = [a for a in s.assumptions if a.startswith("Quinn/consultation")]
    assert "unreadable" in assumed
    assert s.party("ada").preferences["consultation"].ranking == ["C", "B"]  # read, not assumed


def _reader(reply: dict[str, Any], seen: list[dict[str, Any]]) -> Any:
    def answer(body: dict[str, Any]) -> Scripted:
        seen.append(body)
        return Scripted(content=json.dumps(reply))

    return answer


def test_a_model_reads_what_the_rules_cannot_under_the_cases_options(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    with fake_openai(_reader({"ranking": ["C"], "unacceptable": []}, seen)) as server:
        result = _import(
            str(_write(tmp_path)),
            "--out",
            str(tmp_path / "out"),
            "--model",
            f"openai:reader@{server.url}",
        )
    assert result.exit_code == 0, result.output
    (body,) = seen  # only Quinn's unread opinion went to the model; Ada's was read by rule
    assert "Quinn" in body["messages"][-1]["content"]
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["ranking"]["items"]["enum"] == ["A", "B", "C"]
    s = load_scenario(tmp_path / "out" / "policy.yaml")
    quinn = s.party("quinn").preferences["consultation"]
    assert quinn.ranking[0] == "C"
    assert any(a.startswith("Quinn/consultation: read by openai:reader") for a in s.assumptions)


def test_a_model_reading_that_names_an_option_the_case_lacks_is_refused(
    tmp_path: Path,
) -> None:
    seen: list[dict[str, Any]] = []
    with fake_openai(_reader({"ranking": ["D"], "unacceptable": []}, seen)) as server:
        result = _import(
            str(_write(tmp_path)),
            "--out",
            str(tmp_path / "out"),
            "--model",
            f"openai:r@{server.url}",
        )
    assert result.exit_code == 2
    assert len(seen) == 3  # asked, then re-asked twice with the problem fed back
    assert "options the case does not have: D" in json.dumps(seen[-1])
    assert "the model could not read it either" in result.output


def test_model_reading_is_for_promediate_only(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["scenarios", "import", "--from", "agentmediation", str(tmp_path), "--model", "local"],
    )
    assert result.exit_code == 2 and "ProMediate briefs only" in result.output


@pytest.mark.data("promediate")
def test_a_clone_of_the_promediate_repository_imports_as_it_is(tmp_path: Path) -> None:
    # The repository keeps cases in cases/ and topic names in thoughtful_agents/prompts/.
    repo = tmp_path / "ProMediate-Eval"
    (repo / "cases").mkdir(parents=True)
    (repo / "thoughtful_agents" / "prompts").mkdir(parents=True)
    for case in ("hmo", "flagship"):
        shutil.copy(SHARED / f"{case}.json", repo / "cases")
    shutil.copy(SHARED / "topics.json", repo / "thoughtful_agents" / "prompts")
    result = _import(str(repo), "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    names = json.loads((SHARED / "topics.json").read_text())
    flagship = load_scenario(tmp_path / "out" / "flagship.yaml")
    assert [t.name for t in flagship.topics] == names["flagship"]
    assert "topics.json" not in result.output


def test_a_topics_json_that_cannot_be_read_fails_the_case_instead_of_being_skipped(
    tmp_path: Path,
) -> None:
    case = _write(tmp_path)
    (tmp_path / "topics.json").write_text("{not json", encoding="utf-8")
    result = _import(str(case), "--out", str(tmp_path / "out"), "--lenient")
    assert result.exit_code == 2
    assert "topics.json cannot be read" in result.output
