"""The bilateral protocol with model-played bargainers, remediator and moderator, over
real HTTP to the scripted server: the remediator is prompted with its exemplars, and no
request the buyer makes ever contains what the seller said before it was rewritten."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from disputelab.experiments.episodes import run_single
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai, requested_name
from disputelab.plan.cast import Cast
from disputelab.store.sqlite import Store
from tests.helpers import scenario

RUDE = "Only a fool offers that, you clueless amateur! $48 is my price."
FIX = "I understand your budget; we would value working together. Our price is $48."


def answer(body: dict[str, Any]) -> Scripted:
    text = json.dumps(body["messages"])
    name = requested_name(body)
    if name == "rewrite":
        reply: dict[str, Any] = {"rewrite": FIX}
    elif name == "detectreply":
        rude = "clueless" in json.dumps(body["messages"][-1])
        reply = {"violates": rude, "category": "insulting" if rude else ""}
    elif name == "callreply":
        reply = {"ended": "Deal at" in text, "deal": "Deal at" in text, "price": 40}
    elif "break a social norm" in text:
        reply = {"utterance": RUDE, "price": 48, "decision": "counter"}
    elif "Jonas" in text:  # the buyer
        reply = {
            "utterance": "Deal at $40." if text.count("$") > 12 else "I offer $35.",
            "price": 40 if text.count("$") > 12 else 35,
            "decision": "counter",
        }
    else:
        reply = {"utterance": "We can do $45.", "price": 45, "decision": "counter"}
    return Scripted(content=json.dumps(reply))


def _run(tmp_path: Path, server: Any, **extra: Any) -> Any:
    model = f"openai:m@{server.url}"
    roles = ("parties", "mediator", "moderator", "detector")
    cast = Cast({"parties": "llm", "mediator": "random-icl"}, dict.fromkeys(roles, model))
    store = Store(tmp_path)
    hub = ModelHub(store.root / "cache.sqlite")
    params = {"violation_prob": 1.0, "max_rounds": 4, "embedding": "lexical", **extra}

    async def go() -> Any:
        try:
            return await run_single(
                store, scenario("product-sale"), cast, 3, "bilateral", params, hub=hub
            )
        finally:
            await hub.aclose()

    return asyncio.run(go())


def test_model_agents_play_and_the_buyer_is_never_sent_the_original(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        result = _run(tmp_path, server)
        requests = list(server.requests)
    ep = result.episode
    remediated = [t for t in ep.turns if t.delivered]
    assert remediated and all(t.text == RUDE for t in remediated)
    assert all(set(t.delivered.values()) == {FIX} for t in remediated)
    rewrite_prompts = [
        json.dumps(r["messages"]) for r in requests if requested_name(r) == "rewrite"
    ]
    assert rewrite_prompts and all("# Dialogue:" in p for p in rewrite_prompts)  # 8 exemplars
    buyer_prompts = [
        json.dumps(r["messages"])
        for r in requests
        if requested_name(r) == "movereply" and "Jonas" in json.dumps(r["messages"][0])
    ]
    assert buyer_prompts and not any("clueless amateur" in p for p in buyer_prompts)
    assert ep.agents["mediator"] == "random-icl" and ep.agents["mediator_model"].startswith(
        "openai:"
    )
    assert ep.usage["mediator"].calls == len(rewrite_prompts)


def test_in_detector_mode_the_model_detector_decides_what_is_rewritten(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        result = _run(tmp_path, server, trigger="detector")
        names = [requested_name(r) for r in server.requests]
    ep = result.episode
    flagged = [t for t in ep.turns if "detected:insulting" in t.stage]
    assert flagged and all(t.delivered and t.text == RUDE for t in flagged)
    assert "detectreply" in names and ep.usage["detector"].calls == names.count("detectreply")
