"""The staged protocol with LLM and hybrid agents, over real HTTP to the scripted server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from disputelab.episode import Status
from disputelab.experiments.episodes import run_single
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import (
    FakeOpenAI,
    Scripted,
    fake_openai,
    fill,
    requested_name,
    requested_schema,
)
from disputelab.plan.cast import Cast
from disputelab.scenario.schema import Fact, LegalContext, Scenario
from disputelab.store.sqlite import Store
from tests.helpers import scenario

GOLD_POINTS = "房东是否应承担维修责任以及欠付租金如何处理。"
GOLD_BASES = ["《中华人民共和国民法典》第712条", "《中华人民共和国民法典》第713条"]


def _case() -> Scenario:
    s = scenario("tenancy").model_copy(deep=True)
    s.legal = LegalContext(
        dispute_type="房屋租赁合同纠纷",
        brief=s.background,
        facts=[Fact(source="调解员调查", content="墙体霉变已持续四个月。")],
        points_of_contention=[GOLD_POINTS],
        legal_bases=GOLD_BASES,
    )
    return s


def answer(body: dict[str, Any]) -> Scripted:
    """Fill whatever schema is asked; a proposal cites one gold basis, a verdict accepts."""
    schema = requested_schema(body)
    reply = fill(schema, text="我们一起看看这个方案。")
    name = requested_name(body)
    if name in ("proposal", "final"):
        reply["points"] = "房东是否应承担维修责任。"
        reply["bases"] = [GOLD_BASES[0], "《中华人民共和国民法典》第五百零九条"]
    if name == "verdict":
        reply["decision"], reply["satisfaction"] = "accept", "high"
    return Scripted(content=json.dumps(reply, ensure_ascii=False))


def _run(tmp_path: Path, server: FakeOpenAI, parties: str, mediator: str, **kw: Any) -> Any:
    model = f"openai:m@{server.url}"
    cast = Cast({"parties": parties, "mediator": mediator}, {"parties": model, "mediator": model})
    store = Store(tmp_path)
    hub = ModelHub(store.root / "cache.sqlite")
    return asyncio.run(run_single(store, _case(), cast, 1, "staged", {"rounds": 2}, hub=hub, **kw))


def test_llm_parties_and_an_llm_mediator_play_all_five_stages(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        result = _run(tmp_path, server, "llm", "llm")
        names = [requested_name(r) for r in server.requests]
    ep = result.episode
    assert ep.turns[0].stage == "preliminary"
    assert {"open", "proposal", "guide", "final", "verdict", "party_action"} <= set(names)
    assert names.count("verdict") == len(_case().parties)
    assert ep.outcome.status is Status.RESOLVED
    assert result.scores["success"].value == 100.0
    assert result.scores["legal_basis_recall"].value == 0.5
    assert 0.0 < result.scores["points_rouge_l"].value < 1.0


def test_the_llm_mediator_sees_retrieved_bases_but_never_the_gold_ones(tmp_path: Path) -> None:
    retrieved = ("《中华人民共和国民法典》第五百零九条",)
    with fake_openai(answer) as server:
        _run(tmp_path, server, "llm", "llm", retrieved=retrieved)
        mediator_prompts = [
            json.dumps(r["messages"], ensure_ascii=False)
            for r in server.requests
            if requested_name(r) in ("open", "proposal", "guide", "final")
        ]
    assert mediator_prompts
    for prompt in mediator_prompts:
        assert retrieved[0] in prompt  # handed over before it proposes
        assert GOLD_POINTS not in prompt
        assert "第713条" not in prompt
        assert "墙体霉变已持续四个月" in prompt  # the established facts are its to read


def test_hybrid_parties_keep_the_oracle_in_a_staged_episode(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        result = _run(tmp_path, server, "hybrid", "rule")
        names = {requested_name(r) for r in server.requests}
    ep = result.episode
    assert names == {"utterance"}  # the rule policy decides, the model only phrases
    assert ep.initial_consensus is not None
    assert all(t.consensus is not None for t in ep.turns if t.role == "party")
    verdicts = [t.action.verdict for t in ep.turns if t.action and t.action.verdict]
    assert len(verdicts) == len(_case().parties)
