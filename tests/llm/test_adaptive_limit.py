"""Adaptive concurrency: the in-flight limit is cut (to 0.7 of itself) when the provider
is overloaded and grows back one call per round trip, so a run settles near a provider's
hidden limit."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from disputelab.llm.base import ChatRequest, ChatResponse, Message, TransientModelError
from disputelab.llm.models import Profile, parse_model
from disputelab.llm.openai_backend import OpenAICompatible
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.llm.wrappers import BACKOFF, Limited, Retrying

ASK = ChatRequest((Message("user", "Your move?"),))


class _Script:
    """A model that answers or fails as told, in order."""

    name = "script"

    def __init__(self, *outcomes: str) -> None:
        self.outcomes = list(outcomes)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        outcome = self.outcomes.pop(0)
        if outcome == "429":
            raise TransientModelError("script: rate limited (429)", overload=True)
        if outcome == "500":
            raise TransientModelError("script: server error 500")
        return ChatResponse("ok", self.name)


def _run(limited: Limited, n: int) -> None:
    async def calls() -> None:
        for _ in range(n):
            with contextlib.suppress(TransientModelError):
                await limited.complete(ASK)

    asyncio.run(calls())


def test_an_overload_cuts_the_limit_and_successes_grow_it_back_to_the_ceiling() -> None:
    limited = Limited(_Script("429", *["ok"] * 40), concurrency=8, adaptive=True)
    _run(limited, 1)
    assert limited.limit == pytest.approx(8 * BACKOFF)
    _run(limited, 40)
    assert limited.limit == 8  # one call per limit's worth of successes, capped


def test_only_overloads_count_and_the_limit_never_falls_below_one() -> None:
    limited = Limited(_Script("500", *["429"] * 20), concurrency=8, adaptive=True)
    _run(limited, 1)
    assert limited.limit == 8  # a 500 says nothing about capacity
    _run(limited, 20)
    assert limited.limit == 1


def test_a_fixed_limit_ignores_overloads() -> None:
    limited = Limited(_Script("429", "429"), concurrency=8)
    _run(limited, 2)
    assert limited.limit == 8


def test_calls_failing_together_under_one_limit_cut_it_once() -> None:
    class Slow429:
        name = "slow"

        async def complete(self, request: ChatRequest) -> ChatResponse:
            await asyncio.sleep(0.02)
            raise TransientModelError("slow: rate limited (429)", overload=True)

    limited = Limited(Slow429(), concurrency=16, adaptive=True)

    async def burst() -> None:
        await asyncio.gather(*(limited.complete(ASK) for _ in range(16)), return_exceptions=True)

    asyncio.run(burst())
    assert limited.limit == pytest.approx(16 * BACKOFF)


def _against_hidden_limit(adaptive: bool) -> tuple[int, float]:
    with fake_openai(lambda b: Scripted(content="ok", delay_s=0.03), hidden_limit=4) as server:
        backend = OpenAICompatible("m", server.url, None, timeout_s=120, connections=32)
        limited = Limited(backend, 32, None, adaptive)
        model = Retrying(limited, attempts=60, base_s=0.01, cap_s=0.1)

        async def calls() -> None:
            await asyncio.gather(*(model.complete(ASK) for _ in range(300)))
            await backend.aclose()

        asyncio.run(calls())
        return server.refused, limited.limit


def test_against_a_provider_with_a_hidden_limit_adapting_avoids_most_refusals() -> None:
    fixed_refused, _ = _against_hidden_limit(adaptive=False)
    adaptive_refused, settled = _against_hidden_limit(adaptive=True)
    assert adaptive_refused * 4 < fixed_refused
    assert 1 <= settled <= 12  # near the provider's 4, far below the 32 allowed


def test_endpoints_adapt_unless_a_profile_says_not_to() -> None:
    url = "http://127.0.0.1:9/v1"
    assert parse_model(f"openai:m@{url}", {}).adaptive
    assert not parse_model("p", {"p": Profile(model="m", base_url=url, adaptive=False)}).adaptive
