"""Experiment tables name their consensus source, and an experiment with LLM parties
(no hidden state, so no oracle) shows consensus gain, timeliness and effectiveness from
the self-report tracker instead of leaving them out."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.protocols.roundtable.tables.layout import experiment_markdown_for
from disputelab.store.sqlite import Store


def scripted(body: dict[str, Any]) -> Scripted:
    """Parties agree for a round, split for a round, then agree again only once a
    mediator has spoken: the mediated arm recovers and its twin does not."""
    schema = requested_schema(body)
    reply = fill(schema, text="Let us settle this.")
    if "stances" in reply:
        user = body["messages"][-1]["content"]
        turn = int(user.split("party turn ")[1].split(" ")[0])
        own = 0 if "You are Mira Okafor" in body["messages"][0]["content"] else 1
        mediated = "\nMediator: " in user
        pick = 0 if turn <= 2 or (turn >= 5 and mediated) else own
        for topic, stance in reply["stances"].items():
            options = schema["properties"]["stances"]["properties"][topic]["properties"]
            stance["option"] = options["option"]["enum"][pick]
            stance["acceptable"] = [stance["option"]]
        reply["signal"] = "continue"
    if "should_speak" in reply:
        reply["should_speak"] = True
    return Scripted(content=json.dumps(reply))


def run(tmp_path: Path, **fields: Any) -> tuple[Store, ExperimentSpec]:
    store = Store(tmp_path / "runs")
    with fake_openai(scripted) as server:
        model = f"openai:m@{server.url}"
        spec = ExperimentSpec(
            name="llm",
            scenarios=["tenancy"],
            mediators=["generic"],
            parties="llm",
            models={"parties": model, "mediator": model},
            replicates=1,
            budget=6,
            **fields,
        )
        hub = ModelHub(store.root / "cache.sqlite")
        summary = asyncio.run(run_experiment(store, plan_experiment(spec, base=tmp_path), hub))
    assert summary.failed == 0, summary.errors
    return store, spec


def test_llm_parties_default_to_the_self_report_tracker(tmp_path: Path) -> None:
    spec = ExperimentSpec(
        name="x", scenarios=["tenancy"], parties="llm", models={"parties": "local"}
    )
    assert spec.tracker == "self-report" and "self-report" in spec.evaluators


def test_rule_parties_default_to_the_oracle(tmp_path: Path) -> None:
    spec = ExperimentSpec(name="x", scenarios=["tenancy"])
    assert spec.tracker == "oracle" and spec.evaluators == []


def test_an_unknown_tracker_is_refused() -> None:
    with pytest.raises(ValueError, match="tracker: unknown 'vibes'"):
        ExperimentSpec(name="x", scenarios=["tenancy"], tracker="vibes")


def test_a_judged_tracker_needs_a_judge_model() -> None:
    with pytest.raises(ValueError, match="need a judge model"):
        ExperimentSpec(name="x", scenarios=["tenancy"], tracker="topic-localized")


def test_the_table_of_llm_parties_shows_self_reported_gain_timeliness_effectiveness(
    tmp_path: Path,
) -> None:
    store, spec = run(tmp_path)
    config = json.loads(spec.model_dump_json())
    table = experiment_markdown_for(store, "llm", config)
    assert "Consensus source: **self-report tracker" in table
    row = next(line for line in table.splitlines() if line.startswith("| general | generic |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    gain, timeliness, effectiveness, final = cells[3:7]
    # The twin ends split (0) and the mediated arm agreed (100): a normalised gain of
    # 100; the drop at turn 3 is met by the mediator's next turn, and consensus recovers.
    assert gain.startswith("100.0") and final.startswith("100.0")
    assert timeliness.startswith("100.0") and effectiveness.startswith("100.0")
    assert "undef" not in row


def test_the_oracle_table_says_so(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs")
    spec = ExperimentSpec(name="rules", scenarios=["tenancy"], replicates=1, budget=8)
    asyncio.run(
        run_experiment(
            store, plan_experiment(spec, base=tmp_path), ModelHub(store.root / "c.sqlite")
        )
    )
    table = experiment_markdown_for(store, "rules", json.loads(spec.model_dump_json()))
    assert "Consensus source: **oracle" in table


def test_an_explicit_tracker_overrides_the_default_on_rule_parties(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs")
    spec = ExperimentSpec(
        name="rules", scenarios=["tenancy"], replicates=1, budget=8, tracker="self-report"
    )
    asyncio.run(
        run_experiment(
            store, plan_experiment(spec, base=tmp_path), ModelHub(store.root / "c.sqlite")
        )
    )
    table = experiment_markdown_for(store, "rules", json.loads(spec.model_dump_json()))
    assert "Consensus source: **self-report tracker" in table
