"""Re-scoring with a judge charges the judge's calls to the episode, under their own role."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.report.render import run_markdown
from disputelab.store.sqlite import Store


def test_judge_calls_are_stored_per_episode_under_the_evaluators_role(tmp_path: Path) -> None:
    reply = {"reasoning": "r", "label": "high"}
    with fake_openai(lambda b: Scripted(content=json.dumps(reply))) as server:
        runner = CliRunner()
        base = ["--store", str(tmp_path)]
        assert runner.invoke(app, [*base, "run", "tenancy", "--mediator", "rule"]).exit_code == 0
        judge = f"openai:j@{server.url}"
        args = [*base, "evaluate", "--evaluator", "outcome-judges", "--judge-model", judge]
        assert runner.invoke(app, args).exit_code == 0
    store = Store(tmp_path)
    run_id = store.resolve_run("last")
    for eid in store.episode_ids(run_id):
        (row,) = [u for u in store.usage(eid) if u["role"] == "judge:outcome-judges"]
        # two rubrics per episode; the scripted server reports 11 tokens in and 7 out
        assert (row["model"], row["calls"]) == (judge, 2)
        assert (row["input_tokens"], row["output_tokens"]) == (22, 14)
    assert "judge:outcome-judges" in run_markdown(store, run_id)
