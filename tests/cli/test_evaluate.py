"""`disputelab evaluate`: re-scoring a stored run, and what it says when the judge fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.testing import Scripted, fake_openai

# Every party of tenancy with a stance, as the topic-localized judge must give.
TENANCY_STANCES = {"tenant": "A", "landlord": "B"}

runner = CliRunner()
CLOSED = "openai:j@http://127.0.0.1:9/v1"  # port 9 (discard) is closed on the test hosts


def _invoke(store: Path, *args: str) -> Any:
    return runner.invoke(app, ["--store", str(store), "--timeout", "1", *args])


def _stored_run(store: Path) -> None:
    r = _invoke(store, "run", "tenancy", "--mediator", "rule", "--budget", "6")
    assert r.exit_code == 0, r.output


def test_a_judge_that_never_answers_is_an_error_not_a_table_of_nan(tmp_path: Path) -> None:
    _stored_run(tmp_path)
    r = _invoke(tmp_path, "evaluate", "--evaluator", "topic-localized", "--judge-model", CLOSED)
    assert r.exit_code == 2, r.output
    last = r.output.strip().splitlines()[-1]
    assert last.startswith("error: the judge never answered, so its scores are NaN: ")
    assert "cannot connect" in last
    assert "Traceback" not in r.output
    # The NaN scores and their reasons are printed and stored all the same.
    assert "final_consensus: undefined: judge failed" in " ".join(r.output.split())


def test_a_judge_that_answers_leaves_the_exit_status_at_0(tmp_path: Path) -> None:
    _stored_run(tmp_path)
    reply = {"events": [{"turn": 3, "reasoning": "r", "score": 3, "stances": TENANCY_STANCES}]}
    with fake_openai(lambda body: Scripted(content=json.dumps(reply))) as server:
        r = _invoke(
            tmp_path,
            "evaluate",
            "--evaluator",
            "topic-localized",
            "--judge-model",
            f"openai:j@{server.url}",
        )
    assert r.exit_code == 0, r.output
    assert "judge never answered" not in r.output
    assert "judge failed" not in r.output  # its events were read into every trajectory


def test_an_evaluator_without_a_judge_runs_with_no_model(tmp_path: Path) -> None:
    _stored_run(tmp_path)
    r = _invoke(tmp_path, "evaluate", "--evaluator", "oracle")
    assert r.exit_code == 0, r.output
    assert "oracle scores, run " in r.output


def test_undefined_reasons_stand_under_their_own_heading_and_name_their_arms(
    tmp_path: Path,
) -> None:
    _stored_run(tmp_path)
    r = _invoke(tmp_path, "evaluate", "--evaluator", "promediate")
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    reasons = text.split("undefined scores, by reason:", 1)[1]
    # Both arms had no drop event: the reason says so rather than sitting under the
    # last cell printed (the mediated one) as if it were that cell's alone.
    assert "response_latency: undefined: no drop events (2 episodes: 1 mediated, 1 unmediated)" in (
        reasons
    )
