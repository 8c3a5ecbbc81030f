"""`disputelab run --tracker`: a single run's consensus as a tracker reads it, so a run of
LLM parties (which have no oracle) still shows consensus, as an experiment's tables do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.store.sqlite import Store

# Every party of tenancy with a stance, as the topic-localized judge must give.
TENANCY_STANCES = {"tenant": "A", "landlord": "B"}

runner = CliRunner()
TABLE = "consensus (self-report tracker)"


# A rule run of tenancy whose consensus a judge reads: add the judge model's name.
JUDGED = [
    "run", "tenancy", "--mediator", "rule", "--budget", "6",
    "--tracker", "topic-localized", "--judge-model",
]  # fmt: skip


def _invoke(store: Path, *args: str, timeout: str = "5") -> Any:
    return runner.invoke(app, ["--store", str(store), "--timeout", timeout, *args])


def _schema_reply(body: dict[str, Any]) -> Scripted:
    return Scripted(content=json.dumps(fill(requested_schema(body))))


def _stored_evaluators(store: Path) -> set[str]:
    s = Store(store)
    try:
        run_id = s.resolve_run("last")
        return {sc.evaluator for e in s.episode_ids(run_id) for sc in s.scores(e)}
    finally:
        s.close()


def _runs(store: Path) -> int:
    s = Store(store)
    try:
        return len(s.runs())
    finally:
        s.close()


def test_llm_parties_get_the_self_report_table_by_default(tmp_path: Path) -> None:
    with fake_openai(_schema_reply) as server:
        r = _invoke(
            tmp_path,
            "run",
            "tenancy",
            "--model",
            f"openai:m@{server.url}",
            "--mediator",
            "generic",
            "--budget",
            "6",
        )
    assert r.exit_code == 0, r.output
    # The protocol's own table has no oracle to read; the tracker's table has a value.
    assert "no oracle" in r.output
    tracked = r.output.split(TABLE, 1)[1]
    row = next(line for line in tracked.splitlines() if "final_consensus" in line)
    assert "NaN" not in row
    assert "tracker:self-report" in _stored_evaluators(tmp_path)


def test_rule_parties_keep_the_oracle_table_alone_unless_asked(tmp_path: Path) -> None:
    plain = _invoke(tmp_path, "run", "tenancy", "--mediator", "rule", "--budget", "8")
    assert plain.exit_code == 0, plain.output
    assert "tracker)" not in plain.output
    asked = _invoke(
        tmp_path,
        "run",
        "tenancy",
        "--mediator",
        "rule",
        "--budget",
        "8",
        "--tracker",
        "self-report",
    )
    assert asked.exit_code == 0, asked.output
    header = next(line for line in asked.output.split(TABLE, 1)[1].splitlines() if "metric" in line)
    assert "unmediated" in header and "mediated" in header.replace("unmediated", "")


def test_oracle_names_the_protocols_own_table(tmp_path: Path) -> None:
    r = _invoke(
        tmp_path, "run", "tenancy", "--mediator", "rule", "--budget", "6", "--tracker", "oracle"
    )
    assert r.exit_code == 0, r.output
    assert "metrics (oracle consensus)" in r.output
    assert "tracker)" not in r.output


def test_a_judge_tracker_asks_the_judge_model(tmp_path: Path) -> None:
    reply = {"events": [{"turn": 3, "reasoning": "r", "score": 3, "stances": TENANCY_STANCES}]}
    with fake_openai(lambda body: Scripted(content=json.dumps(reply))) as server:
        r = _invoke(tmp_path, *JUDGED, f"openai:j@{server.url}")
        calls = server.calls
    assert r.exit_code == 0, r.output
    assert calls > 0
    assert "consensus (topic-localized tracker)" in r.output
    assert "tracker:topic-localized" in _stored_evaluators(tmp_path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["tenancy", "--tracker", "vibes"], "error: --tracker: unknown 'vibes'; use oracle, "),
        (
            ["tenancy", "--tracker", "per-turn"],
            "error: --tracker per-turn asks a judge model: pass --judge-model or --model",
        ),
        (
            ["product-sale", "--protocol", "bilateral", "--tracker", "self-report"],
            "error: --tracker self-report: scenario product-sale has no topics whose consensus",
        ),
    ],
)
def test_a_tracker_that_cannot_run_stops_before_anything_is_recorded(
    tmp_path: Path, args: list[str], message: str
) -> None:
    r = _invoke(tmp_path, "run", *args)
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines()[-1].startswith(message)
    assert "Traceback" not in r.output
    assert _runs(tmp_path) == 0


def test_a_case_without_topics_gets_no_tracker_table_by_default(tmp_path: Path) -> None:
    with fake_openai(_schema_reply) as server:
        r = _invoke(
            tmp_path,
            "run",
            "product-sale",
            "--protocol",
            "bilateral",
            "--model",
            f"openai:m@{server.url}",
        )
    assert r.exit_code == 0, r.output
    assert "tracker)" not in r.output


def test_a_judge_tracker_whose_judge_never_answers_ends_in_status_2(tmp_path: Path) -> None:
    closed = "openai:j@http://127.0.0.1:9/v1"  # port 9 (discard) is closed on the test hosts
    r = _invoke(tmp_path, *JUDGED, closed, timeout="1")
    assert r.exit_code == 2, r.output
    assert (
        r.output.strip()
        .splitlines()[-1]
        .startswith("error: the judge never answered, so its scores are NaN: ")
    )
    # The episodes were played and stored, and the NaN table says why, as `evaluate` does.
    assert "consensus (topic-localized tracker)" in r.output
    assert _runs(tmp_path) == 1


def _row(output: str, table: str, metric: str) -> list[str]:
    """The cells of `metric`'s row in the table titled `table`."""
    lines = output.split(table, 1)[1].splitlines()
    row = next(line for line in lines if f" {metric} " in line)
    return [c.strip() for c in row.split("│")[2:-1]]


def test_each_column_holds_its_own_episodes_scores(tmp_path: Path) -> None:
    # workplace, seed 5: the twin ends nearer agreement than the mediated episode, so a
    # swap of the columns would show.
    r = _invoke(
        tmp_path, "run", "workplace", "--mediator", "rule", "--budget", "40", "--seed", "5",
        "--tracker", "self-report",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    shown = [float(c) for c in _row(r.output, TABLE, "final_consensus")]
    stored = _invoke(tmp_path, "evaluate", "--evaluator", "self-report", "--format", "json")
    assert stored.exit_code == 0, stored.output
    by_arm = {row["arm"]: row["final_consensus"] for row in json.loads(stored.stdout)}
    assert by_arm["unmediated"] != pytest.approx(by_arm["mediated"], abs=0.01)
    assert shown == pytest.approx([by_arm["unmediated"], by_arm["mediated"]], abs=0.001)


def test_a_presets_tracker_applies_when_a_judge_model_is_named(tmp_path: Path) -> None:
    reply = {"events": [{"turn": 3, "reasoning": "r", "score": 3, "stances": TENANCY_STANCES}]}
    base = ["run", "tenancy", "--preset", "socrates", "--mediator", "rule", "--budget", "6"]
    without = _invoke(tmp_path, *base)
    assert without.exit_code == 0, without.output
    assert "tracker)" not in without.output  # rule parties, no judge: the oracle alone
    with fake_openai(lambda body: Scripted(content=json.dumps(reply))) as server:
        judged = _invoke(tmp_path, *base, "--judge-model", f"openai:j@{server.url}")
    assert judged.exit_code == 0, judged.output
    assert "consensus (topic-localized tracker)" in judged.output


def test_the_tracker_table_heads_the_episode_as_the_protocols_table_does(tmp_path: Path) -> None:
    # The staged protocol has a mediator and no twin: both tables say "mediated".
    r = _invoke(tmp_path, "run", "tenancy", "--protocol", "staged", "--tracker", "self-report")
    assert r.exit_code == 0, r.output
    headers = [line for line in r.output.splitlines() if "┃ metric" in line]
    assert len(headers) == 2
    assert all("mediated" in h and "episode" not in h for h in headers)
