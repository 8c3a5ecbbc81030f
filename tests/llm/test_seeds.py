"""Every model call of a turn takes its seed and cache sample index from one helper."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from disputelab.llm.base import ChatRequest, Message
from disputelab.llm.cache import request_key
from disputelab.llm.seeds import TURNS_PER_SEED, turn_sampling


def test_the_first_call_of_a_turn_keeps_the_seed_runs_have_always_used() -> None:
    assert turn_sampling(3, 7) == (3 * 1000 + 7, 0)


@given(
    st.integers(0, 10_000),
    st.integers(0, TURNS_PER_SEED - 1),
    st.integers(0, 10_000),
    st.integers(0, TURNS_PER_SEED - 1),
)
def test_different_episodes_and_turns_never_share_a_seed(a: int, t: int, b: int, u: int) -> None:
    if (a, t) != (b, u):
        assert turn_sampling(a, t).seed != turn_sampling(b, u).seed


def test_repeated_calls_get_their_own_cache_entries() -> None:
    def request(repeat: int) -> ChatRequest:
        s = turn_sampling(1, 4, repeat)
        return ChatRequest((Message("user", "same prompt"),), 0.7, **s._asdict())

    keys = {request_key("m", request(r)) for r in range(3)}
    assert len(keys) == 3
    assert request_key("m", request(1)) == request_key("m", request(1))
