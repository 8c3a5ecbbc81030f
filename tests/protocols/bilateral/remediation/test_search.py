"""Stage 1 ranks single exemplars by value; stage 2 swaps members of the top-k set for
lower-ranked candidates, keeps the best set it values, and prunes a member's swaps after
M consecutive losses. Driven by toy value functions computed by hand."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from disputelab.protocols.bilateral.remediation.search import Ranked, rank_singles, search_set

WEIGHTS = {"a": 5.0, "b": 4.0, "c": 3.0, "d": 2.0, "e": 1.0}


class Counted:
    """An async set value that counts how often it is asked."""

    def __init__(self, fn: object) -> None:
        self.fn = fn
        self.calls: list[tuple[str, ...]] = []

    async def __call__(self, ids: tuple[str, ...]) -> float:
        self.calls.append(ids)
        return self.fn(ids)  # type: ignore[operator,no-any-return]


def additive(ids: tuple[str, ...]) -> float:
    return sum(WEIGHTS[i] for i in ids)


def test_stage_one_ranks_by_single_value_ties_by_id() -> None:
    value = Counted(lambda ids: {"a": 1.0, "b": 2.0, "c": 2.0}[ids[0]])
    ranked = asyncio.run(rank_singles(["a", "c", "b"], value))
    assert ranked.order == ["b", "c", "a"]
    assert len(value.calls) == 3


def test_with_additive_values_the_top_k_stays_best_and_each_member_is_pruned_after_m() -> None:
    ranked = Ranked(list("abcde"), WEIGHTS)
    value = Counted(additive)
    log = asyncio.run(search_set(ranked, 2, value, patience=2, budget=100))
    assert log.best == ("a", "b") and log.best_value == 9.0
    # From (a, b): a -> c and a -> d both lose, so a's swaps stop before e; the same for b.
    assert value.calls[:5] == [("a", "b"), ("c", "b"), ("d", "b"), ("a", "c"), ("a", "d")]
    assert log.pruned >= 2


def test_patience_one_values_fewer_sets_than_patience_five() -> None:
    ranked = Ranked(list("abcde"), WEIGHTS)
    short = asyncio.run(search_set(ranked, 2, Counted(additive), patience=1, budget=1000))
    long = asyncio.run(search_set(ranked, 2, Counted(additive), patience=5, budget=1000))
    assert short.evaluations < long.evaluations
    assert short.best == long.best == ("a", "b")


def covering(ids: tuple[str, ...]) -> float:
    """Each category counts once, by its best member: a and b share category x."""
    category = {"a": "x", "b": "x", "c": "y", "d": "z", "e": "w"}
    best: dict[str, float] = {}
    for i in ids:
        best[category[i]] = max(best.get(category[i], 0.0), WEIGHTS[i])
    return sum(best.values())


def test_the_swap_search_finds_a_set_better_than_the_stage_one_top_k() -> None:
    ranked = Ranked(list("abcde"), WEIGHTS)
    log = asyncio.run(search_set(ranked, 2, Counted(covering), patience=2, budget=100))
    assert log.initial_value == 5.0  # (a, b) covers x only
    assert log.best == ("a", "c") and log.best_value == 8.0


def test_the_budget_caps_valuations_and_no_set_is_valued_twice() -> None:
    ranked = Ranked(list("abcdefgh"), dict.fromkeys("abcdefgh", 1.0))
    value = Counted(lambda ids: 0.0)
    log = asyncio.run(search_set(ranked, 3, value, patience=10, budget=7))
    assert log.evaluations == len(value.calls) <= 7
    assert len({frozenset(c) for c in value.calls}) == len(value.calls)


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from("abcdefg"), st.floats(-5, 5, allow_nan=False), min_size=4, max_size=7
    ),
    st.integers(1, 3),
    st.integers(1, 4),
)
def test_the_best_set_is_never_worse_than_the_initial_one_and_has_k_distinct_members(
    weights: dict[str, float], k: int, patience: int
) -> None:
    order = sorted(weights, key=lambda i: (-weights[i], i))
    ranked = Ranked(order, weights)
    log = asyncio.run(
        search_set(ranked, k, Counted(lambda ids: sum(weights[i] for i in ids)), patience)
    )
    assert log.best_value >= log.initial_value
    assert len(set(log.best)) == len(log.best) == min(k, len(order))
    assert log.best_value == pytest.approx(sum(weights[i] for i in log.best))
