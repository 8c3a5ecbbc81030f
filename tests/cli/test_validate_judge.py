"""`disputelab validate-judge` and `disputelab report` on a validation run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.testing import Scripted, fake_openai

# Every party of tenancy with a stance, as the topic-localized judge must give.
TENANCY_STANCES = {"tenant": "A", "landlord": "B"}

runner = CliRunner()


def _flat(text: str) -> str:
    return " ".join(text.split())


def _invoke(tmp_path: Path, *args: str) -> Any:
    return runner.invoke(app, ["--store", str(tmp_path), *args])


def test_the_default_run_covers_five_scenarios_and_flags_self_report(tmp_path: Path) -> None:
    r = _invoke(tmp_path, "validate-judge", "--episodes", "1", "--budget", "10")
    assert r.exit_code == 0, r.output
    assert (
        "5 scenarios (community-centre, kitchen-renovation, library-closures, tenancy, "
        "workplace)" in _flat(r.output)
    )
    assert "voice paraphrase" in r.output
    assert "oracle's state: not a judge" in r.output
    assert "self-report reads the stances the rule policy states" in r.output
    assert "dropped" in r.output and "undefined until every party has spoken" in r.output


def test_report_prints_the_stored_table_again(tmp_path: Path) -> None:
    r = _invoke(
        tmp_path,
        "validate-judge",
        "--scenario",
        "tenancy",
        "--scenario",
        "workplace",
        "--episodes",
        "2",
        "--budget",
        "10",
        "--format",
        "json",
    )
    assert r.exit_code == 0, r.output
    first = json.loads(r.stdout)
    again = _invoke(tmp_path, "report", "last", "--format", "json")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout) == first
    assert first["trackers"][0]["reads_oracle"] is True
    md = _invoke(tmp_path, "report", "last")
    assert md.exit_code == 0, md.output
    assert "| self-report | - | oracle's state: not a judge |" in md.output
    assert "Pearson r [95% CI]" in md.output and "kappa (5 levels)" in md.output


def test_a_judge_behind_a_server_gets_its_row_and_cost(tmp_path: Path) -> None:
    events = {"events": [{"turn": 3, "reasoning": "r", "score": 3, "stances": TENANCY_STANCES}]}
    with fake_openai(lambda body: Scripted(content=json.dumps(events))) as server:
        r = _invoke(
            tmp_path,
            "validate-judge",
            "--judge-model",
            f"openai:j@{server.url}",
            "--scenario",
            "tenancy",
            "--episodes",
            "2",
            "--budget",
            "6",
            "--format",
            "csv",
        )
    assert r.exit_code == 0, r.output
    rows = r.stdout.strip().splitlines()  # stderr may hold a progress line on a slow run
    assert rows[0].startswith("tracker,judge,reads,points")
    judge = next(line for line in rows if line.startswith("topic-localized"))
    assert ",the dialogue," in judge and ",4.0,72" in judge  # 4 calls of 11 + 7 tokens


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tracker", "oracle"], "oracle is the truth"),
        (["--tracker", "vibes"], "unknown tracker 'vibes'"),
        (["--tracker", "topic-localized"], "need a judge"),
        (["--voice", "hybrid"], "hybrid voice needs a model"),
        (["--scenario", "nowhere"], "nowhere"),
        (["--scenario", "salary"], "no topics"),
        (["--mediator", "llm"], "mediator must be none or rule"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    r = _invoke(tmp_path, "validate-judge", *args)
    assert r.exit_code == 2 and message in r.output
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1


def test_a_judge_that_never_answers_is_an_error_after_the_table(tmp_path: Path) -> None:
    closed = "openai:j@http://127.0.0.1:9/v1"  # port 9 (discard) is closed on the test hosts
    r = runner.invoke(
        app,
        [
            *("--store", str(tmp_path), "--timeout", "1", "validate-judge"),
            *("--judge-model", closed, "--scenario", "tenancy", "--episodes", "1"),
            *("--budget", "6"),
        ],
    )
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert lines[-1].startswith("error: the judge never answered, so its scores are NaN: ")
    assert "topic-localized failed: judge failed" in r.output  # the table came first
    assert "Traceback" not in r.output
