"""`disputelab scenarios impasse` (the SoCRATES impasse filter on built-ins) and
`scenarios list --by-domain`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.scenario import builtin_scenarios
from disputelab.scenario.schema import SOCRATES_DOMAINS


def _cli(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), *args])
    return result.exit_code, result.stdout, result.stderr


def test_impasse_gives_the_filter_figures_per_scenario_in_domain_order(tmp_path: Path) -> None:
    code, text, _ = _cli(
        tmp_path, "scenarios", "impasse", "herring-quota", "tenancy", "--format", "json"
    )
    assert code == 0, text
    rows = json.loads(text)
    assert [r["id"] for r in rows] == ["tenancy", "herring-quota"]  # transactional first
    for row in rows:
        replays = row["replays"].split()
        assert len(replays) == 3
        unresolved = sum(r != "resolved" for r in replays)
        assert row["unresolved"] == f"{unresolved}/3"
        assert row["verdict"] == ("kept" if unresolved >= 2 else row["verdict"])
        inside, total = map(int, row["zone"].split("/"))
        assert 0 < inside <= total


def test_impasse_without_ids_covers_every_multi_issue_builtin(tmp_path: Path) -> None:
    code, text, _ = _cli(tmp_path, "scenarios", "impasse", "--format", "csv")
    assert code == 0
    ids = [line.split(",")[0] for line in text.splitlines()[1:]]
    assert sorted(ids) == sorted(sid for sid, s in builtin_scenarios().items() if s.topics)


@pytest.mark.parametrize(
    ("args", "why"),
    [
        (("no-such-case",), "no built-in scenario 'no-such-case'"),
        (("salary",), "'salary' has no topics"),
        (("tenancy", "--disclosure", "loud"), "unknown disclosure 'loud'"),
    ],
)
def test_impasse_rejects_bad_input_in_one_line(
    tmp_path: Path, args: tuple[str, ...], why: str
) -> None:
    code, _, err = _cli(tmp_path, "scenarios", "impasse", *args)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and why in lines[0]


def test_list_by_domain_counts_the_multi_issue_scenarios_of_each_domain(tmp_path: Path) -> None:
    code, text, _ = _cli(tmp_path, "scenarios", "list", "--by-domain", "--format", "json")
    assert code == 0
    rows = json.loads(text)
    assert [r["domain"] for r in rows][: len(SOCRATES_DOMAINS)] == list(SOCRATES_DOMAINS)
    library = builtin_scenarios()
    for row in rows:
        ids = row["ids"].split(", ") if row["ids"] else []
        assert row["multi-issue"] == len(ids)
        assert all(library[i].domain == row["domain"] and library[i].topics for i in ids)
    assert sum(r["multi-issue"] + r["other"] for r in rows) == len(library)
