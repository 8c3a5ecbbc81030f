"""Adaptive concurrency: the in-flight limit is cut (to 0.7 of itself) when the provider
is overloaded and grows back one call per round trip, so a run settles near a provider's
hidden limit; a refusal now and then, at random, is noise and leaves it where it is."""

from __future__ import annotations

import asyncio
import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.llm.base import ChatRequest, ChatResponse, Message, TransientModelError
from disputelab.llm.models import Profile, parse_model
from disputelab.llm.openai_backend import OpenAICompatible
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.llm.wrappers import BACKOFF, TOLERANCE, AdaptiveLimit, Limited, Retrying

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


# ---- the limit's arithmetic ----------------------------------------------------------


@given(st.integers(1, 256), st.lists(st.tuples(st.booleans(), st.integers(-2, 0)), max_size=300))
def test_the_limit_stays_between_one_and_the_ceiling(
    ceiling: int, outcomes: list[tuple[bool, int]]
) -> None:
    control = AdaptiveLimit(ceiling)
    for overloaded, lag in outcomes:
        if overloaded:
            control.on_overload(max(0, control.cuts + lag))
        else:
            control.on_success()
        assert 1 <= control.limit <= ceiling


@given(st.integers(1, 64), st.integers(1, 50))
def test_successes_alone_grow_the_limit_back_to_the_ceiling(ceiling: int, cuts: int) -> None:
    control = AdaptiveLimit(ceiling)
    for _ in range(cuts):
        control.on_overload(control.cuts)
    for _ in range(ceiling * ceiling):  # ceiling round trips of at most ceiling calls
        control.on_success()
    assert control.limit == ceiling


@given(st.lists(st.integers(64, 200), min_size=1, max_size=40))
def test_a_refusal_now_and_then_does_not_cut_a_high_limit(gaps: list[int]) -> None:
    # At 64 in flight, one refusal a round trip is 1.6 %: noise, not a full provider.
    control = AdaptiveLimit(64)
    for gap in gaps:
        assert not control.on_overload(control.cuts)
        for _ in range(gap):
            control.on_success()
    assert control.limit == 64


def test_refusals_past_the_tolerance_within_a_round_trip_cut_the_limit_once() -> None:
    control = AdaptiveLimit(64)
    allowed = int(TOLERANCE * 64)  # 3 of a window's 64 calls
    epoch = control.cuts
    assert not any(control.on_overload(epoch) for _ in range(allowed))
    assert control.on_overload(epoch)
    assert control.limit == pytest.approx(64 * BACKOFF)
    # The rest of that window's calls were sent under the old limit: answered already.
    assert not any(control.on_overload(epoch) for _ in range(20))
    assert control.limit == pytest.approx(64 * BACKOFF)


@given(st.integers(1, round(1 / TOLERANCE) - 1))
def test_below_one_over_the_tolerance_every_fresh_overload_cuts(ceiling: int) -> None:
    control = AdaptiveLimit(ceiling)
    for _ in range(10):
        before = control.limit
        assert control.on_overload(control.cuts)
        assert control.limit == pytest.approx(max(1.0, before * BACKOFF))


def test_a_window_ends_after_a_limits_worth_of_outcomes_and_forgets_its_refusals() -> None:
    control = AdaptiveLimit(40)  # two refusals a window are tolerated
    for _ in range(2):
        control.on_overload(control.cuts)
    for _ in range(38):
        control.on_success()  # the window's 40 outcomes: the next one starts afresh
    assert not control.on_overload(control.cuts)
    assert not control.on_overload(control.cuts)
    assert control.on_overload(control.cuts)
