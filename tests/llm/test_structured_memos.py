"""The structured layer's memos save work per call without changing a single request:
a reply class's schema is built once, a schema rebuilt equal for every call is checked
once and asked for with the same words, and an episode played with every memo empty
sends exactly what the same episode sends with every memo warm."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest
from pydantic import BaseModel, Field

from disputelab.agents.parties.verdicts import AcceptanceReply, _schema
from disputelab.llm.base import ChatRequest, Message
from disputelab.llm.openai_backend import OpenAICompatible
from disputelab.llm.structured import ask_structured, model_schema
from disputelab.llm.testing import Scripted, fake_openai
from tests.helpers import WAIT_S


class _Offer(BaseModel):
    utterance: str = Field(max_length=200)
    price: float


def test_a_reply_class_has_one_schema_equal_to_the_one_pydantic_builds() -> None:
    assert model_schema(_Offer) is model_schema(_Offer)
    assert model_schema(_Offer) == _Offer.model_json_schema()


def test_a_bounded_verdict_schema_is_built_once_and_leaves_the_shared_one_alone() -> None:
    bounded = _schema(AcceptanceReply, {"reason": 300, "utterance": 200})
    assert bounded is _schema(AcceptanceReply, {"reason": 300, "utterance": 200})
    assert bounded["properties"]["reason"]["maxLength"] == 300
    assert bounded["additionalProperties"] is False
    assert model_schema(AcceptanceReply) == AcceptanceReply.model_json_schema()


def _fresh_schema(bound: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"utterance": {"type": "string", "maxLength": bound}},
        "required": ["utterance"],
    }


def _asked(bound: int, times: int) -> list[dict[str, Any]]:
    """The requests `times` calls sent, each with its schema built afresh."""
    with fake_openai(lambda body: Scripted(content='{"utterance": "fine"}')) as server:
        model = OpenAICompatible("test-model", base_url=server.url, api_key_env=None)

        async def go() -> None:
            try:
                for _ in range(times):
                    request = ChatRequest(
                        (Message("user", "Say something."),), schema=_fresh_schema(bound)
                    )
                    await ask_structured(model, request, lambda found: found)
            finally:
                await model.aclose()

        asyncio.run(go())
        return list(server.requests)


def test_a_schema_rebuilt_equal_for_every_call_is_asked_for_in_the_same_words() -> None:
    first, second, third = _asked(120, 3)
    assert first["messages"] == second["messages"] == third["messages"]
    assert '"maxLength":120' in first["messages"][-1]["content"]


def test_a_schema_over_the_string_bound_is_refused_on_every_call_not_only_the_first() -> None:
    for _ in range(2):
        with pytest.raises(ValueError, match="maxLength 1500 is over 800"):
            _asked(1500, 1)


# Plays the same episode twice in one fresh interpreter, each time into a new store (and
# so a new response cache): the first with every memo empty, the second with them warm.
PLAY_TWICE = """
import json, sys, tempfile
import disputelab as dl
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema

scenario, options = sys.argv[1], json.loads(sys.argv[2])

def answer(body):
    text = "Could we look at the repairs first, and then the rent?"
    return Scripted(content=json.dumps(fill(requested_schema(body), text=text)))

plays = []
with fake_openai(answer) as server:
    for _ in range(2):
        with tempfile.TemporaryDirectory() as store:
            sent = server.calls
            result = dl.run(scenario, store=store, model=f"openai:test@{server.url}", **options)
            turns = [[t.speaker, t.text, repr(t.action)] for t in result.episode.turns]
            plays.append({"requests": server.requests[sent:], "turns": turns})
print(json.dumps(plays))
"""


@pytest.mark.parametrize(
    ("scenario", "options"),
    [
        ("tenancy", {"preset": "agentmediation"}),
        ("product-sale", {"protocol": "bilateral"}),
        # The model counsel's requests; the staff keep their rules, whose replies a stub
        # that fills any schema with one sentence and small numbers cannot satisfy.
        (
            "settle-kitchen-refit-defects",
            {
                "protocol": "settlement",
                "models": {r: "rule" for r in ("outcome", "auditor", "memory", "mediator")},
            },
        ),
    ],
)
def test_an_episode_with_every_memo_empty_sends_what_it_sends_with_them_warm(
    scenario: str, options: dict[str, Any]
) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PLAY_TWICE, scenario, json.dumps(options)],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    cold, warm = json.loads(proc.stdout.splitlines()[-1])
    assert cold["requests"], "the episode made no model call"
    # As a multiset: calls a step sends together reach the server in no set order.
    assert sorted(map(json.dumps, cold["requests"])) == sorted(map(json.dumps, warm["requests"]))
    assert cold["turns"] == warm["turns"]
