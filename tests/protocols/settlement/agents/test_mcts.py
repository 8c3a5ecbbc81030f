"""UCB selection, incremental-mean backup and the root decision on hand-built trees, and
a search on a toy game whose best move is known."""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Hashable
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from disputelab.protocols.settlement.agents.mcts import (
    Edge,
    Node,
    Settings,
    Ties,
    backup,
    best_action,
    search,
    select,
    ucb,
)


def test_ucb_adds_an_exploration_bonus_that_shrinks_with_visits() -> None:
    assert ucb(0.5, 10, 2, 1.0, 1e-6) == pytest.approx(0.5 + math.sqrt(math.log(10) / 2))
    assert ucb(0.5, 10, 8, 1.0, 1e-6) < ucb(0.5, 10, 2, 1.0, 1e-6)
    assert ucb(0.5, 10, 2, 0.0, 1e-6) == 0.5  # c = 0: pure exploitation


def ties(seed: int = 0) -> Ties:
    return Ties(random.Random(seed))


def test_select_tries_every_action_once_then_maximises_ucb() -> None:
    node = Node("s", ("a", "b", "c"))
    node.edges["a"] = Edge(visits=1, q=0.9)
    assert select(node, 1.0, 1e-6, ties()) == "b"  # b is untried
    node.edges["b"] = Edge(visits=5, q=0.6)
    node.edges["c"] = Edge(visits=1, q=0.1)
    node.visits = 7
    # a: 0.9 + sqrt(ln7/1) = 2.295; b: 0.6 + sqrt(ln7/5) = 1.224; c: 0.1 + 1.395 = 1.495
    t = ties()
    assert select(node, 1.0, 1e-6, t) == "a"
    assert select(node, 0.0, 1e-6, t) == "a"
    assert t.broken == 0  # a clear maximum is no tie


def test_backup_updates_counts_and_the_incremental_mean_along_the_path() -> None:
    root, child = Node("r", ("x", "y")), Node("c", ("u",))
    path = [(root, "x"), (child, "u")]
    backup(path, 1.0)
    backup(path, 0.0)
    backup(path, 0.5)
    assert root.visits == 3 and root.edges["x"].visits == 3
    assert root.edges["x"].q == pytest.approx(0.5)
    assert child.edges["u"].q == pytest.approx(0.5)
    assert root.edges["y"].visits == 0


def test_the_root_decision_is_the_highest_value_not_the_most_visited() -> None:
    root = Node("r", ("a", "b"))
    root.edges["a"] = Edge(visits=9, q=0.6)
    root.edges["b"] = Edge(visits=2, q=0.7)
    assert best_action(root, ties()) == "b"
    assert best_action(Node("r", ("only",)), ties()) == "only"


def test_equal_q_at_the_root_is_settled_at_random_not_by_list_order_and_counted() -> None:
    def decide(seed: int) -> tuple[Hashable, int]:
        root = Node("r", ("a", "b", "c"))
        root.edges["a"] = Edge(visits=4, q=0.7)
        root.edges["b"] = Edge(visits=2, q=0.7)
        root.edges["c"] = Edge(visits=3, q=0.2)
        t = ties(seed)
        return best_action(root, t), t.broken

    picks = {decide(seed)[0] for seed in range(40)}
    assert picks == {"a", "b"}  # both tied actions win under some seed, c never
    assert all(decide(seed)[1] == 1 for seed in range(5))
    assert decide(7) == decide(7)  # the same seed breaks the tie the same way


def test_equal_ucb_scores_are_settled_at_random() -> None:
    node = Node("s", ("a", "b"), visits=4)
    node.edges["a"] = Edge(visits=2, q=0.5)
    node.edges["b"] = Edge(visits=2, q=0.5)
    t = ties(3)
    picks = {select(node, 1.0, 1e-6, t) for _ in range(30)}
    assert picks == {"a", "b"} and t.broken == 30


class Bandit:
    """A one-step game: each action ends it with a noisy value around a known mean."""

    means: ClassVar[dict[str, float]] = {"low": 0.2, "mid": 0.5, "high": 0.8}

    def actions(self, state: Any) -> tuple[Hashable, ...]:
        return tuple(self.means) if state == "start" else ()

    def step(self, state: Any, action: Hashable, rng: random.Random) -> tuple[Hashable, Any]:
        return "end", ("end", action, rng.uniform(-0.1, 0.1))

    def terminal(self, state: Any) -> bool:
        return state != "start"

    async def rollout(self, state: Any, rng: random.Random) -> Any:
        return state

    def value(self, final: Any) -> float:
        _, action, noise = final
        return self.means[action] + noise


def test_search_finds_the_best_action_and_reports_one_leaf_per_simulation() -> None:
    root, leaves = asyncio.run(search(Bandit(), "start", Settings(30), random.Random(0), ties()))
    assert best_action(root, ties()) == "high"
    assert len(leaves) == 30
    assert root.visits == 30
    assert {leaf.first_action for leaf in leaves} == {"low", "mid", "high"}
    # UCB spends most simulations on the best arm.
    assert root.edges["high"].visits > root.edges["low"].visits


def test_search_tries_every_root_action_even_with_fewer_simulations() -> None:
    root, leaves = asyncio.run(search(Bandit(), "start", Settings(1), random.Random(0), ties()))
    assert all(root.edges[a].visits == 1 for a in root.actions)
    assert len(leaves) == 3


class Needle:
    """A deterministic tree `len(needle)` moves deep with `branching` moves per node: every
    leaf is worth 0 but the one the needle path reaches, worth 1, and the rollout stays
    where it is, so only a search that reaches the bottom can see the needle."""

    def __init__(self, branching: int, needle: tuple[int, ...]) -> None:
        self.branching, self.needle = branching, needle

    def actions(self, state: Any) -> tuple[Hashable, ...]:
        return tuple(range(self.branching)) if len(state) < len(self.needle) else ()

    def step(self, state: Any, action: Hashable, rng: random.Random) -> tuple[Hashable, Any]:
        return action, (*state, action)

    def terminal(self, state: Any) -> bool:
        return len(state) == len(self.needle)

    async def rollout(self, state: Any, rng: random.Random) -> Any:
        return state

    def value(self, final: Any) -> float:
        return 1.0 if final == self.needle else 0.0

    def exhausting(self) -> int:
        """Simulations that visit every path: each new node costs one (its expansion),
        so b + b^2 + ... + b^D."""
        return sum(self.branching**k for k in range(1, len(self.needle) + 1))


def decide(game: Needle, depth: int, c: float, seed: int) -> tuple[Hashable, Ties, Node]:
    settings = Settings(game.exhausting(), c, 1e-6, depth)
    t = ties(seed)
    root, _ = asyncio.run(search(game, (), settings, random.Random(seed), t))
    return best_action(root, t), t, root


@settings(max_examples=60, deadline=None)
@given(
    branching=st.integers(2, 3),
    needle=st.tuples(*[st.integers(0, 2)] * 4),
    shallow=st.integers(1, 3),
    deep=st.integers(4, 6),
    c=st.floats(0.1, 3.0),
    seed=st.integers(0, 2**16),
)
def test_a_deeper_search_never_scores_worse_when_it_reaches_the_only_reward(
    branching: int, needle: tuple[int, ...], shallow: int, deep: int, c: float, seed: int
) -> None:
    """Holds when the game is deterministic, every value is >= 0 and only the needle's
    leaf is positive, the rollout does not move, c > 0 and the simulations number at least
    b + ... + b^D (D = 4, the needle's depth). Until the needle is found every Q is 0, so
    UCB visits the least-visited move and the search exhausts the tree; once found, the
    needle's first move is the only root move with Q > 0. A search shallower than D sees
    only zeros and picks among tied moves at random. The score of a decision is the best
    value still reachable after it (1 on the needle's path, else 0)."""
    game = Needle(branching, tuple(x % branching for x in needle))
    blind, blind_ties, blind_root = decide(game, shallow, c, seed)
    seen, _, _ = decide(game, deep, c, seed)

    def score(first: Hashable) -> float:
        return 1.0 if first == game.needle[0] else 0.0

    assert score(seen) >= score(blind)
    assert score(seen) == 1.0  # the deeper search finds the optimum
    # The shallow search was genuinely blind: all Q equal, the decision a tie.
    assert {e.q for e in blind_root.edges.values()} == {0.0}
    assert blind_ties.broken >= 1
