"""`expertise_use: append`: the staged mediator proposes without the retrieved legal bases,
which are added to its proposals' bases afterwards, as AgentMediation's evaluation did
for Table 7's w/ EK columns; `prompt` (the default) puts them in the mediator's prompt."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from disputelab.episode import Intervention
from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.scenario.io import save_scenario
from disputelab.scenario.schema import LegalContext
from disputelab.store.sqlite import Store
from tests.helpers import scenario

RETRIEVED = ["《民法典》第712条", "《民法典》第577条", "《民法典》第713条"]  # canonical form
OWN = "《民法典》第五百七十七条"  # the mediator cites one of them itself, in other words


def _case(tmp_path: Path) -> Path:
    sc = scenario("tenancy")
    sc.legal = LegalContext(
        dispute_type="tenancy",
        brief=sc.background,
        points_of_contention=["repairs"],
        legal_bases=["《民法典》第七百一十二条"],
        stored_retrieval=RETRIEVED,
    )
    path = tmp_path / "case.yaml"
    save_scenario(sc, path)
    return path


def _answer(body: dict[str, Any]) -> Scripted:
    schema = requested_schema(body)
    reply = fill(schema, text="Let us talk about the repairs.")
    if "bases" in reply:
        reply["bases"] = [OWN]
    return Scripted(content=json.dumps(reply))


def _run(tmp_path: Path, use: str | None) -> tuple[list[Intervention], list[dict[str, Any]]]:
    store = Store(tmp_path / "runs")
    params = {} if use is None else {"expertise_use": use}
    with fake_openai(_answer) as server:
        spec = ExperimentSpec(
            name="ek",
            protocol="staged",
            scenarios=[str(_case(tmp_path))],
            conditions=["expertise:stored-top3"],
            mediators=["llm"],
            models={"mediator": f"openai:m@{server.url}"},
            replicates=1,
            rounds=1,
            params=params,
        )
        summary = asyncio.run(
            run_experiment(
                store, plan_experiment(spec, base=tmp_path), ModelHub(store.root / "cache.sqlite")
            )
        )
    assert summary.failed == 0, summary.errors
    (eid,) = store.complete_episode_ids(summary.run_id)
    turns = store.load_episode(eid).episode.turns
    moves = [t.intervention for t in turns if t.intervention and t.stage in ("option", "closure")]
    return moves, server.requests


def _system_prompts(requests: list[dict[str, Any]]) -> str:
    return "\n".join(m["content"] for r in requests for m in r["messages"] if m["role"] == "system")


def test_by_default_the_mediator_reads_the_retrieved_bases_and_cites_its_own(
    tmp_path: Path,
) -> None:
    moves, requests = _run(tmp_path, None)
    prompts = _system_prompts(requests)
    assert all(b in prompts for b in RETRIEVED)
    assert [m.bases for m in moves] == [(OWN,), (OWN,)]


def test_append_hides_them_from_the_mediator_and_adds_them_to_each_proposal(
    tmp_path: Path,
) -> None:
    moves, requests = _run(tmp_path, "append")
    prompts = _system_prompts(requests)
    assert not any(b in prompts for b in RETRIEVED)
    assert len(moves) == 2
    for move in moves:
        # Its own citation first, then the retrieved ones it did not cite, once each.
        assert move.bases == (OWN, RETRIEVED[0], RETRIEVED[2])
        assert "appended afterwards" in move.thought and OWN not in move.thought.split(":")[-1]
