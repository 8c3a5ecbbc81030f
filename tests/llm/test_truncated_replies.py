"""A reply cut off at its token limit is never repaired into an answer the model did not
give: it is asked again with more room, and cut off again it is recorded as truncated,
with the reason (a judge's tracker then stores NaN with it)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from pydantic import BaseModel

from disputelab.evaluation.trackers import topic_localized
from disputelab.experiments.episodes import run_single
from disputelab.llm.base import ChatRequest, Message, TruncatedReplyError
from disputelab.llm.openai_backend import OpenAICompatible
from disputelab.llm.structured import ROOM_FACTOR, ask_structured
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.scenario import builtin_scenarios
from disputelab.store.sqlite import Store


class Reply(BaseModel):
    utterance: str
    signal: str = "continue"  # a default: JSON repair would close a cut reply into this


# Closed by JSON repair this is {"utterance": "We could sp"}: valid, and never said.
CUT = Scripted(content='{"utterance": "We could sp', finish_reason="length")
WHOLE = Scripted(content='{"utterance": "We could split it.", "signal": "consensus"}')


def _backend(url: str) -> OpenAICompatible:
    return OpenAICompatible("test-model", url, api_key_env=None)


def _ask(url: str, max_tokens: int = 12) -> tuple[Reply, list[Any]]:
    request = ChatRequest((Message("user", "Say something."),), max_tokens=max_tokens)
    return asyncio.run(ask_structured(_backend(url), request, Reply.model_validate))


def test_a_cut_reply_is_asked_again_with_more_room_and_the_whole_one_is_used() -> None:
    with fake_openai() as server:
        server.script(CUT, WHOLE)
        reply, responses = _ask(server.url)
    assert reply == Reply(utterance="We could split it.", signal="consensus")
    assert [r["max_tokens"] for r in server.requests] == [12, 12 * ROOM_FACTOR]
    assert len(responses) == 2  # both calls are charged


def test_a_reply_cut_twice_is_truncated_with_its_reason_not_repaired() -> None:
    cut_off = pytest.raises(TruncatedReplyError, match="truncated: the reply was cut off at")
    with fake_openai(lambda body: CUT) as server, cut_off as e:
        _ask(server.url)
    assert server.calls == 2  # one re-ask with room, no repair attempts after it
    assert len(e.value.responses) == 2


def test_a_judge_whose_replies_are_cut_stores_nan_with_the_reason(tmp_path: Any) -> None:
    scenario = builtin_scenarios()["tenancy"]
    store = Store(tmp_path)
    episode = asyncio.run(run_single(store, scenario, seed=1, params={"budget": 2})).episode
    with fake_openai(lambda body: CUT) as server:
        trajectory = asyncio.run(topic_localized(episode, scenario, _backend(server.url)))
    store.close()
    values = [v for scores in trajectory.by_topic.values() for v in scores]
    assert values and all(math.isnan(v) for v in values)
    assert trajectory.failure is not None and "truncated" in trajectory.failure
