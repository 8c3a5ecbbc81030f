"""The ProMediate importer: the real shared case, the format's variants, and bad files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.scenario import load_scenario
from disputelab.scenario.importers.promediate import (
    import_promediate,
    parse_options,
    parse_preference,
    sibling_topics,
)
from tests.data_location import skip_reason
from tests.helpers import PROMEDIATE

HMO = PROMEDIATE / "hmo.json"
OPTIONS = [("A", "Open"), ("B", "Dual"), ("C", "Exclusive")]


@pytest.mark.data("promediate")
def test_the_shared_hmo_case_imports_with_the_rankings_its_profiles_state() -> None:
    result = import_promediate(json.loads(HMO.read_text()), "hmo")
    s = result.scenario
    assert [t.id for t in s.topics] == [
        "market-share-target-tiers",
        "discount-pricing-schedule",
        "marketing-support",
        "formulary-status",
        "contract-term",
    ]
    prefs = {p.name: {t: p.preferences[t] for t in p.preferences} for p in s.parties}
    # Jamie: 'First choice: c / Second choice: b / Unacceptable: a' on formulary status
    assert prefs["Jamie"]["formulary-status"].ranking == ["C", "B"]
    assert prefs["Jamie"]["formulary-status"].unacceptable == ["A"]
    # Lee, in prose: prefers open, would consider dual, 'will not consider exclusive'
    assert prefs["Lee"]["formulary-status"].ranking == ["A", "B"]
    assert prefs["Lee"]["formulary-status"].unacceptable == ["C"]
    # Alex: 'First choice: c, Second choice: a, Third choice: b' with bare letters
    assert prefs["Alex"]["discount-pricing-schedule"].ranking == ["C", "A", "B"]
    assert any("conditional choice" in w for w in result.warnings)
    assert any("equal weights" in w for w in result.warnings)


def test_options_in_one_line_or_many() -> None:
    text = (
        "1. Formulary status:\n(a) Open; (b) Dual; (c) Exclusive\n"
        "2. Term:\n(a) Two-year\n(b) Five-year"
    )
    assert parse_options(text) == [
        ("Formulary status", OPTIONS),
        ("Term", [("A", "Two-year"), ("B", "Five-year")]),
    ]


@pytest.mark.parametrize(
    ("block", "ranking", "bad"),
    [
        ("First choice: (c) Exclusive\nSecond choice: b\nUnacceptable: a", ["C", "B"], ["A"]),
        (
            "Options:\n(a) Open\n(b) Dual\nYour opinion:\nFirst choice: b\n"
            "Second choice (reluctantly): a",
            ["B", "A"],
            [],
        ),
        (
            "You prefer open formulary, but you could live with dual. "
            "You will not consider exclusive.",
            ["A", "B"],
            ["C"],
        ),
    ],
)
def test_preferences_from_letters_bare_letters_and_prose(
    block: str, ranking: list[str], bad: list[str]
) -> None:
    assert parse_preference(block, OPTIONS) == (ranking, bad)


def test_the_cli_writes_files_and_reports_bad_ones(tmp_path: Path) -> None:
    good = {
        "instruction": "Two hospitals share a pharmacy budget.\n{issues}",
        "issues": "1. Formulary status",
        "options": "1. Formulary status:\n(a) Open; (b) Dual; (c) Exclusive",
        "names": {
            "Ana": "## Opinions\n1) Formulary\nFirst choice: a\nSecond choice: b\nUnacceptable: c",
            "Ben": "## Opinions\n1) Formulary\nFirst choice: c\nSecond choice: b",
            "Mediator": "You mediate.",
        },
    }
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "pharmacy.json").write_text(json.dumps(good))
    (tmp_path / "cases" / "broken.json").write_text("{not json")
    r = CliRunner().invoke(
        app,
        [
            "scenarios",
            "import",
            "--from",
            "promediate",
            str(tmp_path / "cases"),
            "--out",
            str(tmp_path / "out"),
        ],
    )
    assert r.exit_code == 2  # one file was bad, and is named
    assert "broken.json" in r.output and "imported" in r.output
    s = load_scenario(tmp_path / "out" / "pharmacy.yaml")
    assert s.party("ana").preferences["formulary-status"].unacceptable == ["C"]
    unknown = CliRunner().invoke(app, ["scenarios", "import", "--from", "csv", str(tmp_path)])
    assert unknown.exit_code == 2 and "unknown format 'csv'" in unknown.output


# ---- the variants of the other ProMediate cases (seed-003 §1.4, §0 finding 5) -----------
def _hmo() -> dict[str, object]:
    if not HMO.exists():  # the tests calling this are marked data("promediate")
        pytest.skip(skip_reason(["promediate"]))
    data: dict[str, object] = json.loads(HMO.read_text())
    return data


@pytest.mark.data("promediate")
def test_issue_subsections_under_opinions_read_like_numbered_issues() -> None:
    data = _hmo()
    baseline = import_promediate(data, "hmo").scenario
    topics = [t.name for t in baseline.topics]
    names = dict(data["names"])  # type: ignore[call-overload]
    for party, profile in names.items():
        if party == "Mediator":
            continue
        head, _, opinions = profile.partition("## Opinions")
        body, sep, tail = opinions.partition("\n## ")
        blocks = [b for b in re.split(r"(?m)^\s*\d+\)\s*", body) if b.strip()]
        # '### Issue' subsections, in reverse order, as the IAS and River cases write them
        as_sections = "".join(
            f"\n### {name}\n{block.split(chr(10), 1)[1] if chr(10) in block else ''}"
            for name, block in reversed(list(zip(topics, blocks, strict=True)))
        )
        names[party] = f"{head}## Opinions\n{as_sections}{sep}{tail}"
    variant = import_promediate({**data, "names": names}, "hmo")
    for a, b in zip(baseline.parties, variant.scenario.parties, strict=True):
        assert a.preferences == b.preferences, a.name


@pytest.mark.data("promediate")
def test_topic_names_come_from_a_topics_json_beside_the_case(tmp_path: Path) -> None:
    data = _hmo()
    names = list(data.pop("topics"))  # type: ignore[call-overload]
    case = tmp_path / "hmo.json"
    case.write_text(json.dumps(data))
    bare = import_promediate(data, "hmo")
    assert any("no 'topics' in the case" in w for w in bare.warnings)
    (tmp_path / "topics.json").write_text(json.dumps({"hmo": names, "williams": ["x"]}))
    assert sibling_topics(case) == names
    code = CliRunner().invoke(
        app, ["scenarios", "import", "--from", "promediate", str(case), "--out", str(tmp_path)]
    )
    assert code.exit_code == 0, code.output
    assert [t.name for t in load_scenario(tmp_path / "hmo.yaml").topics] == names


@pytest.mark.data("promediate")
def test_a_profile_copied_into_another_party_is_reported() -> None:
    data = _hmo()
    names = dict(data["names"])  # type: ignore[call-overload]
    first, second = [k for k in names if k != "Mediator"][:2]
    names[second] = names[first]
    result = import_promediate({**data, "names": names}, "hmo")
    assert any(f"{first} and {second} have identical preferences" in w for w in result.warnings)


@pytest.mark.data("promediate")
def test_turn_taking_thresholds_carry_over_from_the_case_config() -> None:
    data = _hmo()
    config = {  # names spelt differently from `names`, as francis.json and ias.json do
        k.upper(): {"im_threshold": 3.4, "interrupt_threshold": 2.1, "system1_prob": 0.4}
        for k in data["names"]  # type: ignore[union-attr]
        if k != "Mediator"
    }
    config["Mediator"] = {"im_threshold": 3.8, "interrupt_threshold": 3.8, "system1_prob": 0}
    s = import_promediate({**data, "config": config}, "hmo").scenario
    for p in s.parties:
        assert (p.persona.im_threshold, p.persona.interrupt_threshold) == (3.4, 2.1)
        assert p.persona.system1_prob == 0.4
    assert s.mediator is not None and s.mediator.im_threshold == 3.8


@pytest.mark.data("promediate")
def test_a_party_left_out_of_the_config_gets_the_defaults_with_a_warning() -> None:
    data = _hmo()
    config = dict(data["config"])  # type: ignore[call-overload]
    dropped = next(k for k in config if k != "Mediator")
    del config[dropped]
    result = import_promediate({**data, "config": config}, "hmo")
    p = next(p for p in result.scenario.parties if p.name == dropped)
    assert (p.persona.im_threshold, p.persona.interrupt_threshold) == (3.0, 2.5)
    assert any(f"{dropped}: not in 'config'" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("field", "value"), [("im_threshold", 7), ("interrupt_threshold", 0.5), ("system1_prob", 2)]
)
@pytest.mark.data("promediate")
def test_a_threshold_out_of_range_fails_the_import_naming_it(field: str, value: float) -> None:
    data = _hmo()
    config = json.loads(json.dumps(data["config"]))
    party = next(k for k in config if k != "Mediator")
    config[party][field] = value
    with pytest.raises(ValueError, match=rf"config\.{party}\.{field}: .*got {value}"):
        import_promediate({**data, "config": config}, "hmo")
