"""Trackers against people, from labels saved straight into the label store: a judge
(behind the HTTP stub) whose reading is the annotator's scores alpha 1 on consensus and
stances; labels of a turn the judge reads otherwise lower it; the majority needs more
than half of a unit's annotators."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from disputelab.annotation.agreement import _majority
from disputelab.annotation.store import Label, save_labels
from disputelab.cli import app
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.store.sqlite import Store

runner = CliRunner()
# The judge locates every topic at party turn 3: some common ground (3 of 5), the tenant
# backing A and the landlord B; before it, SoCRATES' defaults: far apart, no stances.
JUDGED = {"tenant": "A", "landlord": "B"}
EVENTS = {"events": [{"turn": 3, "reasoning": "r", "score": 3, "stances": JUDGED}]}


def _as_the_judge_reads(store: Path, who: str, off_at: int | None = None) -> str:
    """Labels of every party turn of the last run as the scripted judge reads them (one
    level closer at party turn `off_at`); the run id."""
    db = Store(store, writable=False)
    run_id = db.resolve_run("last")
    labels = []
    for eid in db.episode_ids(run_id):
        record = db.load_episode(eid)
        for turn in record.episode.turns:
            if turn.role != "party":
                continue
            after = turn.party_turn >= 3
            close = (3 if after else 1) + (turn.party_turn == off_at)
            base = (run_id, eid, turn.index, who)
            labels.append(Label(*base, "norm", "0"))
            for topic in record.scenario["topics"]:
                labels.append(Label(*base, "consensus", str(close), topic=topic["id"]))
                for party, option in JUDGED.items():
                    value = option if after else "none"
                    labels.append(Label(*base, "stance", value, party=party, topic=topic["id"]))
    db.close()
    save_labels(store, labels)
    return run_id


def _against(store: Path, run_id: str, *extra: str) -> dict[str, dict[str, Any]]:
    result = runner.invoke(
        app,
        ["--store", str(store), "validate-judge", "--against", f"human:{run_id}",
         "--format", "json", *extra],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return {r["tracker"]: r for r in json.loads(result.output)["rows"]}


def test_a_judge_reading_as_the_annotator_does_scores_one(tmp_path: Path) -> None:
    made = runner.invoke(
        app, ["--store", str(tmp_path), "run", "tenancy", "--model", "rule", "--budget", "6"]
    )
    assert made.exit_code == 0, made.output
    run_id = _as_the_judge_reads(tmp_path, "p-same")
    _as_the_judge_reads(tmp_path, "p-other", off_at=4)
    asked: list[Any] = []

    def reply(body: Any) -> Scripted:
        asked.append(body)
        return Scripted(content=json.dumps(EVENTS))

    with fake_openai(reply) as server:
        rows = _against(tmp_path, run_id, "--judge-model", f"openai:j@{server.url}")
    judged = rows["topic-localized"]
    assert asked and judged["judge"] == f"openai:j@{server.url}"
    assert judged["alpha vs p-same"] == "1.000" and float(judged["alpha vs p-other"]) < 1.0
    assert judged["stance alpha (mean)"] == "1.000"
    between = float(rows["annotators with each other"]["mean alpha vs annotators"])
    assert between < 1.0
    # Party turn 4 of each episode's topics has no majority of two.
    assert float(judged["exact vs majority"]) == 1.0


def test_the_majority_needs_more_than_half() -> None:
    assert _majority({"a": 2, "b": 2, "c": 3}) == 2
    assert _majority({"a": 2, "b": 3}) is None
    assert _majority({"a": 4}) == 4
    assert _majority({"a": 1, "b": 2, "c": 3}) is None
