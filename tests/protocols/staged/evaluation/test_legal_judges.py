"""AgentMediation's third-party judge: Con and LR from the background, the bargaining
dialogue and the final proposal, never the verdicts; and the staged tables use them,
saying so, whenever an experiment has a judge model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_name, requested_schema
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.protocols.staged.tables import staged_markdown
from disputelab.store.sqlite import Store

VERDICT_WORDS = "I will sign this today."


def answer(body: dict[str, Any]) -> Scripted:
    schema = requested_schema(body)
    reply = fill(schema, text="Let us look at the repairs.")
    name = requested_name(body)
    if name == "verdict":
        reply.update(decision="accept", satisfaction="high", utterance=VERDICT_WORDS)
    if name == "level":
        prompt = body["messages"][-1]["content"]
        reply["label"] = "high" if "consensus the parties had" in prompt else "low"
    return Scripted(content=json.dumps(reply))


def run(tmp_path: Path, judge: bool) -> tuple[Store, ExperimentSpec, list[dict[str, Any]]]:
    store = Store(tmp_path / "runs")
    with fake_openai(answer) as server:
        model = f"openai:m@{server.url}"
        models = {"parties": model, "mediator": model} | ({"judge": model} if judge else {})
        spec = ExperimentSpec(
            name="legal",
            protocol="staged",
            scenarios=["tenancy"],
            mediators=["llm"],
            parties="llm",
            models=models,
            replicates=1,
            rounds=1,
        )
        summary = asyncio.run(
            run_experiment(
                store, plan_experiment(spec, base=tmp_path), ModelHub(store.root / "cache.sqlite")
            )
        )
    assert summary.failed == 0, summary.errors
    return store, spec, server.requests


def test_with_a_judge_the_tables_show_the_judged_con_and_lr(tmp_path: Path) -> None:
    store, spec, requests = run(tmp_path, judge=True)
    assert "legal-judges" in spec.evaluators
    judged = [r for r in requests if r["response_format"]["json_schema"]["name"] == "level"]
    assert len(judged) == 2
    for r in judged:
        prompt = r["messages"][-1]["content"]
        assert "Bargaining dialogue:" in prompt and "Final mediation proposal:" in prompt
        assert VERDICT_WORDS not in prompt  # the verdicts would give the answer away
    table = staged_markdown(store, "legal", json.loads(spec.model_dump_json()))
    assert "Con and LR are the third-party judge's labels" in table
    row = next(line for line in table.splitlines() if line.startswith("| general | llm |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    # condition, mediator, SR, Sat, Sat range, Con, LR, ...
    assert cells[5].startswith("75.0") and cells[6].startswith("25.0")  # high, low
    assert cells[-1] == "1"  # N per cell: one case, one replicate


def test_without_a_judge_the_tables_say_con_and_lr_are_stand_ins(tmp_path: Path) -> None:
    store, spec, _ = run(tmp_path, judge=False)
    assert "legal-judges" not in spec.evaluators
    table = staged_markdown(store, "legal", json.loads(spec.model_dump_json()))
    assert "LR is a stand-in" in table and "third-party judge's labels" not in table
