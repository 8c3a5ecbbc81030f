"""A party's restated option list that disagrees with the case's shared one is reported
per party and topic, and the mapping chosen is recorded in the scenario.

The fixture is a case of our own in ProMediate's shape: its shared options price a
maintenance contract at $90k, $70k, $50k and $40k, while one party's profile restates
them as (a) $90k (b) $50k (c) $40k (d) $30k, the kind of slip Flagship's upgrade values
have in the public data (checked there too, as a data test).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.scenario import load_scenario
from disputelab.scenario.importers.promediate import (
    ImportResult,
    import_promediate,
    import_promediate_file,
)
from disputelab.scenario.importers.promediate_lists import amounts, rank_left_out
from disputelab.scenario.schema import Party
from tests.helpers import PROMEDIATE

OPTIONS = (
    "1. Contract value: What will the maintenance contract be worth?\n"
    "(a) $90 thousand\n(b) $70 thousand\n(c) $50 thousand\n(d) $40 thousand\n\n"
    "2. Scope: What does the contract cover?\n"
    "(a) Pumps only\n(b) Pumps and valves\n(c) Valves and control panels\n"
)


def _profile(name: str, value_lines: str, scope_lines: str) -> str:
    return (
        f"## Background\nYou are {name}, the plant's maintenance lead.\n\n"
        "## Opinions\nHere is your opinion on each issue\n"
        f"1. Contract value\n{value_lines}\n\n2. Scope\n{scope_lines}\n"
    )


AGREEING_SCOPE = (
    "A. Pumps only is your second choice\nB. Pumps and valves is your first choice\n"
    "C. Valves and control panels is your third choice"
)
CASE = {
    "instruction": "A water plant and a contractor renegotiate maintenance.\n{issues}\n{options}",
    "issues": "1. Contract value\n2. Scope",
    "options": OPTIONS,
    "topics": ["Contract value", "Scope"],
    "names": {
        # Restates the amounts wrongly: its (b) $50k is shared C, its (d) $30k is none.
        "Okoro": _profile(
            "A. Okoro",
            "(a) $90 thousand is fourth choice\n(b) $50 thousand is third choice\n"
            "(c) $40 thousand is second choice\n(d) $30 thousand is first choice",
            # Its (C) words fit shared B, not C: reported, kept by letter.
            "A. Pumps only is your third choice\nB. Pumps and valves is your second choice\n"
            "C. Pumps and valves is your first choice",
        ),
        # Restates them as the shared list has them.
        "Brandt": _profile(
            "B. Brandt",
            "(a) $90 thousand is first choice\n(b) $70 thousand is second choice\n"
            "(c) $50 thousand is third choice\n(d) $40 thousand is **unacceptable**",
            AGREEING_SCOPE,
        ),
    },
}


def _party(result: ImportResult, name: str) -> Party:
    return next(p for p in result.scenario.parties if p.name == name)


def test_amounts_are_read_with_their_scale() -> None:
    assert amounts("$120 million") == {("$", 120e6)}
    assert amounts("(a) $1,500 and 4%") == {("$", 1500.0), ("%", 4.0)}
    assert amounts("Full kit") == set()


def test_a_restated_amount_is_mapped_to_the_shared_option_with_that_amount() -> None:
    result = import_promediate(CASE, "plant")
    okoro = _party(result, "Okoro").preferences["contract-value"]
    # By letter this would read D, C, B, A; by amount $40k (D) is its best shared option,
    # then $50k (C); $70k (B), left out of its list, ranks by amount before $90k (A).
    assert okoro.ranking == ["D", "C", "B", "A"]
    assert okoro.unacceptable == []


def test_the_disagreement_is_one_warning_per_party_and_topic_and_is_recorded() -> None:
    result = import_promediate(CASE, "plant")
    lists = [w for w in result.warnings if "disagrees with the shared options" in w]
    assert [w.split(":", 1)[0] for w in lists] == ["Okoro/contract-value", "Okoro/scope"]
    value = lists[0]
    assert '(b) "$50 thousand" is taken as C by amount (shared B is "$70 thousand")' in value
    assert '(d) "$30 thousand" matches no shared option by amount' in value
    assert 'shared B "$70 thousand", left out of its list, is ranked after D, C' in value
    assert 'its (C) "Pumps and valves" reads unlike shared C' in lists[1]
    assert "kept as C by letter" in lists[1]
    # Recorded in the scenario, not only printed.
    assert all(w in result.scenario.assumptions for w in lists)


def test_words_alone_never_move_a_choice() -> None:
    result = import_promediate(CASE, "plant")
    scope = _party(result, "Okoro").preferences["scope"]
    assert scope.ranking == ["C", "B", "A"]


def test_a_list_that_agrees_with_the_shared_one_says_nothing() -> None:
    result = import_promediate(CASE, "plant")
    assert not any(w.startswith("Brandt/") for w in result.warnings)
    brandt = _party(result, "Brandt").preferences["contract-value"]
    assert (brandt.ranking, brandt.unacceptable) == (["A", "B", "C"], ["D"])


def test_a_left_out_option_is_ranked_by_amount_only_where_the_ranking_runs_in_amount() -> None:
    labels = {"A": "$150M", "B": "$120M", "C": "$100M", "D": "$80M"}
    assert rank_left_out(["A", "C", "D"], ["B"], labels) == (["A", "B", "C", "D"], [])
    assert rank_left_out(["D", "C"], ["B"], labels) == (["D", "C", "B"], [])
    # Not monotonic in amount: nothing to place it by.
    assert rank_left_out(["C", "A", "D"], ["B"], labels) == (["C", "A", "D"], ["B"])


def test_the_cli_prints_the_warning(tmp_path: Path) -> None:
    case = tmp_path / "plant.json"
    case.write_text(json.dumps(CASE))
    result = CliRunner().invoke(
        app,
        ["scenarios", "import", "--from", "promediate", str(case), "--out", str(tmp_path / "o")],
    )
    assert result.exit_code == 0, result.output
    assert "imported" in result.stdout
    text = " ".join(result.stderr.split())  # warnings go to standard error
    assert "Okoro/contract-value: its option list disagrees with the shared options" in text
    saved = load_scenario(tmp_path / "o" / "plant.yaml")
    assert any(a.startswith("Okoro/contract-value: its option list") for a in saved.assumptions)


@pytest.mark.data("promediate")
def test_flagship_upgrade_values_are_mapped_by_amount_for_every_party() -> None:
    result = import_promediate_file(PROMEDIATE / "flagship.json")
    upgrade = [w for w in result.warnings if "/new-value-for-fleet-upgrade: its option" in w]
    assert len(upgrade) == 6  # every party restates (a) $150M (b) $100M (c) $80M (d) $60M
    for w in upgrade:
        assert '(b) "$100 million" is taken as C by amount (shared B is "$120 million")' in w
        assert '(d) "$60 million" matches no shared option by amount' in w
    # Ross calls $80M barely acceptable and $60M unacceptable: by letter D ($80M) was
    # unacceptable; by amount D is its last acceptable option.
    ross = _party(result, "Ross").preferences["new-value-for-fleet-upgrade"]
    assert (ross.ranking, ross.unacceptable) == (["A", "B", "C", "D"], [])
    contents = [w for w in result.warnings if "/contents-for-upgrade: its option" in w]
    assert len(contents) == 6 and all("kept as D by letter" in w for w in contents)
