"""All six public ProMediate cases against preferences read from them by hand.

`data/promediate_stated_preferences.json` records, for every party and topic of the six
cases, the ranking and unacceptable options the case text states, read by a person
(option ids A, B, ... in listed order; no case text). Five cases state their choices in
forms the rules read; Williams states them in prose that only a model can map to its
near-identical options, so by rule it fails, naming the line, and with `--model` it
imports whatever the model reads (here a scripted model that answers as the person read).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.scenario import load_scenario
from disputelab.scenario.importers.promediate import import_promediate_file
from disputelab.scenario.schema import Scenario
from tests.helpers import PROMEDIATE

SHARED = PROMEDIATE
STATED = json.loads(
    (Path(__file__).parent / "data" / "promediate_stated_preferences.json").read_text()
)
BY_RULE = ("hmo", "francis", "ias", "river", "flagship")

# Where the text leaves room for judgment, the importer's reading differs from the person's
# in a documented way (README, "Importing ProMediate cases"); each is pinned here.
DECIDED = {
    # 'Depends on formulary status: open gets a only; dual gets a, b, c; exclusive gets
    # all': ranked by how many of the cases accept each option, and warned as conditional.
    ("hmo", "Jamie", "Marketing Support"): (["A", "B", "C", "D", "E"], []),
    # 'First choice: a, plus you will negotiate as many others as necessary': the others
    # are unranked, so they follow in listed order, warned as not mentioned.
    ("hmo", "Lee", "Marketing Support"): (["A", "B", "C", "D", "E"], []),
    # An option blocked only by description ('any option that allows Northland to store
    # its water') is read as the option whose words match, here 2C, even where another
    # line names 2C as a conditional third choice.
    ("river", "Basin", "Unused Water Allocations"): (["D", "B", "A"], ["C"]),
    ("river", "Southland", "Unused Water Allocations"): (["D", "B", "A"], ["C"]),
    # 'Either:' with an option given only by description, and 'Not preferable: (1D)':
    # not refusals in so many words, so those options are ranked last, warned.
    ("river", "Darbin", "Water Prediction and Audit of Water Withdrawal and Use"): (
        ["B", "A", "C", "D"],
        [],
    ),
    ("river", "Ministry", "Water Prediction and Audit of Water Withdrawal and Use"): (
        ["A", "B", "C", "D"],
        [],
    ),
    ("river", "Northland", "Water Prediction and Audit of Water Withdrawal and Use"): (
        ["B", "A", "C", "D"],
        [],
    ),
    # Flagship's profiles restate the upgrade values as $150M/$100M/$80M/$60M against
    # the shared $150M/$120M/$100M/$80M; the importer maps them by amount, warned
    # (`promediate_lists`). Ross's "(c) $80 million is barely acceptable, (d) $60 million
    # unacceptable" then makes D ($80M) its last acceptable option, where the reading by
    # letter made D unacceptable; $120M, left out of its list, ranks by amount.
    ("flagship", "Ross", "New value for fleet upgrade"): (["A", "B", "C", "D"], []),
}

needs_data = pytest.mark.data("promediate")


def _party(s: Scenario, name: str) -> Any:
    return next(p for p in s.parties if p.name.lower() == name.lower())


@needs_data
@pytest.mark.parametrize("case", sorted(STATED))
def test_every_case_has_the_topics_topics_json_names_each_with_its_options(case: str) -> None:
    s = import_promediate_file(SHARED / f"{case}.json", lenient=True).scenario
    names = json.loads((SHARED / "topics.json").read_text())[case]
    assert [t.name for t in s.topics] == names
    assert [[o.id for o in t.options] for t in s.topics] == [
        t["options"] for t in STATED[case]["topics"]
    ]
    assert sorted(p.name.lower() for p in s.parties) == sorted(
        n.lower() for n in STATED[case]["parties"]
    )


@needs_data
@pytest.mark.parametrize("case", BY_RULE)
def test_the_rules_read_each_partys_stated_preferences(case: str) -> None:
    result = import_promediate_file(SHARED / f"{case}.json")  # strict: nothing assumed
    s = result.scenario
    for name, prefs in STATED[case]["parties"].items():
        party = _party(s, name)
        for topic in s.topics:
            got = party.preferences[topic.id]
            if (case, name, topic.name) in DECIDED:
                assert (got.ranking, got.unacceptable) == DECIDED[(case, name, topic.name)]
                continue
            want = prefs[topic.name]
            stated = [o for o in got.ranking if o not in want["unmentioned"]]
            assert stated == want["ranking"], (name, topic.name)
            assert sorted(got.unacceptable) == sorted(want["unacceptable"]), (name, topic.name)
            # An option the text never mentions is ranked last and said so.
            for o in want["unmentioned"]:
                assert got.ranking[-len(want["unmentioned"]) :].count(o) == 1
    assert not result.unread


@needs_data
def test_roles_are_read_from_the_brief_not_from_initials() -> None:
    s = import_promediate_file(SHARED / "flagship.json").scenario
    assert _party(s, "Atchison").role.startswith("the vice president of Product Development")
    assert all(len(p.role) != 1 for p in s.parties)


@needs_data
def test_williams_states_its_choices_in_prose_so_the_rules_fail_naming_the_line() -> None:
    with pytest.raises(ValueError, match=r"Bradley/consultation-procedures: .*Choice"):
        import_promediate_file(SHARED / "williams.json")
    lenient = import_promediate_file(SHARED / "williams.json", lenient=True)
    assert len(lenient.unread) == 15  # five parties, three topics, none read by rule
    assert len(lenient.scenario.assumptions) >= 15


def _as_read_by_hand(body: dict[str, Any]) -> Scripted:
    ask = body["messages"][-1]["content"]
    topic = re.search(r"^Issue: (.+)$", ask, re.M)
    party = re.search(r"What (\w+)'s brief says", ask)
    assert topic and party, ask
    want = STATED["williams"]["parties"][party.group(1)][topic.group(1)]
    reply = {"ranking": want["ranking"], "unacceptable": want["unacceptable"]}
    return Scripted(content=json.dumps(reply))


@needs_data
def test_with_a_model_williams_imports_with_what_the_model_read(tmp_path: Path) -> None:
    with fake_openai(_as_read_by_hand) as server:
        result = CliRunner().invoke(
            app,
            [
                "scenarios",
                "import",
                "--from",
                "promediate",
                str(SHARED / "williams.json"),
                "--out",
                str(tmp_path),
                "--model",
                f"openai:reader@{server.url}",
            ],
        )
        asked = len(server.requests)
    assert result.exit_code == 0, result.output
    assert asked == 15
    s = load_scenario(tmp_path / "williams.yaml")
    for name, prefs in STATED["williams"]["parties"].items():
        for topic in s.topics:
            got, want = _party(s, name).preferences[topic.id], prefs[topic.name]
            assert got.ranking[: len(want["ranking"])] == want["ranking"]
            assert sorted(got.unacceptable) == sorted(want["unacceptable"])
    assert sum("read by openai:reader" in a for a in s.assumptions) == 15


@needs_data
def test_everything_assumed_is_recorded_in_the_scenario_not_only_warned() -> None:
    result = import_promediate_file(SHARED / "hmo.json")
    s = result.scenario
    assert any("equal weights" in a for a in s.assumptions)
    assert any(a.startswith("Jamie/marketing-support: a conditional") for a in s.assumptions)
    assert any(
        a.startswith("Alex/marketing-support: B, C, D, E not mentioned") for a in s.assumptions
    )
    # Every warning about a party's preferences has its line in the scenario.
    for w in result.warnings:
        where = w.split(":", 1)[0]
        if "/" in where:
            assert any(a.startswith(where) for a in s.assumptions), w
