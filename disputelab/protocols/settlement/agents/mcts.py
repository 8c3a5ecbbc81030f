"""A small Monte Carlo tree search with UCB selection and incremental-mean backup.

SettleAgent's Eqs. 7-9: at a node s with action statistics N(s, a) and Q(s, a),

    select  a* = argmax_a Q(s, a) + c * sqrt(ln N(s) / (N(s, a) + eps))
    backup  N(s) += 1; N(s, a) += 1; Q(s, a) += (V - Q(s, a)) / N(s, a)

and the root decision is argmax_a Q(root, a) (highest value, not most visits). Every
action of a node is tried once, in order, before UCB applies. Where several actions share
the highest score (UCB during the search, Q at the root decision), `Ties` picks one at
random with its own seeded generator and counts it, so no action wins by its place in the
list. The tree's own moves go `depth` levels deep (each a `Game.step`); a rollout plays on
from there. A `Game` supplies the actions, the (possibly stochastic) transition, the
rollout and the value; the tree knows nothing about negotiation.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


def ucb(q: float, parent_visits: int, visits: int, c: float, eps: float) -> float:
    """Eq. 9's score of one action."""
    return q + c * math.sqrt(math.log(max(parent_visits, 1)) / (visits + eps))


@dataclass
class Edge:
    visits: int = 0
    q: float = 0.0
    children: dict[Hashable, Node] = field(default_factory=dict)  # outcome -> next node


@dataclass
class Node:
    state: Any
    actions: tuple[Hashable, ...]
    visits: int = 0
    edges: dict[Hashable, Edge] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for a in self.actions:
            self.edges.setdefault(a, Edge())


# Scores closer than this are equal: the incremental mean reaches one value by different
# float paths.
TIE_TOLERANCE = 1e-12


@dataclass
class Ties:
    """Random choice among equally scored actions, with a count of the ties it broke."""

    rng: random.Random
    broken: int = 0

    def best(self, options: Sequence[Hashable], score: Callable[[Hashable], float]) -> Hashable:
        """A highest-scoring option; one drawn at random when several share the score."""
        scores = [score(a) for a in options]
        top = max(scores)
        tied = [a for a, s in zip(options, scores, strict=True) if s >= top - TIE_TOLERANCE]
        if len(tied) == 1:
            return tied[0]
        self.broken += 1
        return tied[self.rng.randrange(len(tied))]


def select(node: Node, c: float, eps: float, ties: Ties) -> Hashable:
    """The action to follow: the first untried one, else the UCB maximiser."""
    for a in node.actions:
        if node.edges[a].visits == 0:
            return a
    return ties.best(
        node.actions, lambda a: ucb(node.edges[a].q, node.visits, node.edges[a].visits, c, eps)
    )


def backup(path: Sequence[tuple[Node, Hashable]], v: float) -> None:
    """Add one trajectory's value along its path (Eqs. 7-8)."""
    for node, a in path:
        node.visits += 1
        edge = node.edges[a]
        edge.visits += 1
        edge.q += (v - edge.q) / edge.visits


def best_action(root: Node, ties: Ties) -> Hashable:
    """argmax_a Q(root, a) over tried actions; the first action when none was tried."""
    tried = [a for a in root.actions if root.edges[a].visits > 0]
    if not tried:
        return root.actions[0]
    return ties.best(tried, lambda a: root.edges[a].q)


class Game(Protocol):
    def actions(self, state: Any) -> tuple[Hashable, ...]: ...

    def step(self, state: Any, action: Hashable, rng: random.Random) -> tuple[Hashable, Any]:
        """The next state after `action` (and any chance reply), with a key for it."""
        ...

    def terminal(self, state: Any) -> bool: ...

    async def rollout(self, state: Any, rng: random.Random) -> Any:
        """Play on from `state` with default policies; return the final state (async: a
        rollout may ask a model)."""
        ...

    def value(self, final: Any) -> float: ...


@dataclass(frozen=True)
class Leaf:
    """One simulation's end: the final state reached and its value (for RoT)."""

    first_action: Hashable
    final: Any
    value: float


@dataclass(frozen=True)
class Settings:
    """How one search runs: simulations, UCB's c and epsilon, and the tree's depth."""

    simulations: int
    c: float = 1.0
    eps: float = 1e-6
    depth: int = 2  # tree moves (levels of UCB selection) before the rollout


async def search(
    game: Game, root_state: Any, settings: Settings, rng: random.Random, ties: Ties
) -> tuple[Node, list[Leaf]]:
    """Run the simulations' selections, expansions, rollouts and backups from the root;
    `rng` drives the game's chance, `ties` the choice among equal scores."""
    root = Node(root_state, game.actions(root_state))
    leaves: list[Leaf] = []
    for _ in range(max(settings.simulations, len(root.actions))):
        path, state = _descend(game, root, settings, rng, ties)
        final = state if game.terminal(state) else await game.rollout(state, rng)
        v = game.value(final)
        backup(path, v)
        leaves.append(Leaf(path[0][1], final, v))
    return root, leaves


def _descend(
    game: Game, root: Node, settings: Settings, rng: random.Random, ties: Ties
) -> tuple[list[tuple[Node, Hashable]], Any]:
    """Select down the tree for at most `settings.depth` moves, expanding the first new
    outcome met; return the path and the state it reached."""
    node, path = root, []
    while True:
        a = select(node, settings.c, settings.eps, ties)
        path.append((node, a))
        key, state = game.step(node.state, a, rng)
        edge = node.edges[a]
        child = edge.children.get(key)
        deep = len(path) >= settings.depth
        if child is None or deep or game.terminal(state):
            if child is None and not deep and not game.terminal(state):
                edge.children[key] = Node(state, game.actions(state))
            return path, state
        node = child
