"""An LLM party under the adaptive strategy update: its instructions follow its point
from round to round, and the stored turns record the point each was played from."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_name, requested_schema
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.store.sqlite import Store

STANCE = re.compile(r"assertiveness (\d+(?:\.\d+)?) .*?cooperativeness (\d+(?:\.\d+)?)")


def _answer(body: dict[str, Any]) -> Scripted:
    return Scripted(content=json.dumps(fill(requested_schema(body), text="We hold our terms.")))


def test_the_brief_names_the_moved_point_and_the_turns_record_it(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs")
    with fake_openai(_answer) as server:
        model = f"openai:m@{server.url}"
        spec = ExperimentSpec(
            name="adaptive-llm",
            protocol="staged",
            scenarios=["tenancy"],
            conditions=["strategy:avoiding@all,strategy_update:adaptive"],
            mediators=["llm"],
            parties="llm",
            models={"parties": model, "mediator": model},
            replicates=1,
            rounds=3,
        )
        hub = ModelHub(store.root / "cache.sqlite")
        summary = asyncio.run(run_experiment(store, plan_experiment(spec, base=tmp_path), hub))
        requests = list(server.requests)
    assert summary.failed == 0, summary.errors
    (eid,) = store.complete_episode_ids(summary.run_id)
    turns = [
        t
        for t in store.load_episode(eid).episode.turns
        if t.role == "party" and t.stage in ("statement", "bargaining") and t.action
    ]
    recorded = [t.action.strategy for t in turns if t.action]
    assert recorded[0] == (0.0, 0.0) and len(set(recorded)) > 1, recorded
    stated = []
    for body in requests:
        if requested_name(body) != "party_action":
            continue
        found = STANCE.search(json.dumps(body["messages"], ensure_ascii=False))
        stated.append(None if found is None else (float(found[1]), float(found[2])))
    assert len(stated) == len(turns)
    for said, point in zip(stated, recorded, strict=True):
        assert point is not None
        if point == (0.0, 0.0):
            assert said is None, "a mode's own point is named by the mode alone"
        else:
            assert said == (round(point[0], 1), round(point[1], 1))
