"""A small Monte Carlo tree search with UCB selection and incremental-mean backup.

SettleAgent's Eqs. 7-9: at a node s with action statistics N(s, a) and Q(s, a),

    select  a* = argmax_a Q(s, a) + c * sqrt(ln N(s) / (N(s, a) + eps))
    backup  N(s) += 1; N(s, a) += 1; Q(s, a) += (V - Q(s, a)) / N(s, a)

and the root decision is argmax_a Q(root, a) (highest value, not most visits). Every
root action is tried once before UCB applies (spec 4.2). A `Game` supplies the actions,
the (possibly stochastic) transition, the rollout and the value; the tree knows nothing
about negotiation.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence
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


def select(node: Node, c: float, eps: float) -> Hashable:
    """The action to follow: the first untried one, else the UCB maximiser (ties go to
    the earlier action, so search is deterministic given its random draws)."""
    for a in node.actions:
        if node.edges[a].visits == 0:
            return a
    return max(
        node.actions, key=lambda a: ucb(node.edges[a].q, node.visits, node.edges[a].visits, c, eps)
    )


def backup(path: Sequence[tuple[Node, Hashable]], v: float) -> None:
    """Add one trajectory's value along its path (Eqs. 7-8)."""
    for node, a in path:
        node.visits += 1
        edge = node.edges[a]
        edge.visits += 1
        edge.q += (v - edge.q) / edge.visits


def best_action(root: Node) -> Hashable:
    """argmax_a Q(root, a) over tried actions; the first action when none was tried."""
    tried = [a for a in root.actions if root.edges[a].visits > 0]
    if not tried:
        return root.actions[0]
    return max(tried, key=lambda a: root.edges[a].q)


class Game(Protocol):
    def actions(self, state: Any) -> tuple[Hashable, ...]: ...

    def step(self, state: Any, action: Hashable, rng: random.Random) -> tuple[Hashable, Any]:
        """The next state after `action` (and any chance reply), with a key for it."""
        ...

    def terminal(self, state: Any) -> bool: ...

    def rollout(self, state: Any, rng: random.Random) -> Any:
        """Play on from `state` with default policies; return the final state."""
        ...

    def value(self, final: Any) -> float: ...


@dataclass(frozen=True)
class Leaf:
    """One simulation's end: the final state reached and its value (for RoT)."""

    first_action: Hashable
    final: Any
    value: float


def search(
    game: Game,
    root_state: Any,
    simulations: int,
    rng: random.Random,
    c: float = 1.0,
    eps: float = 1e-6,
    max_depth: int = 2,
) -> tuple[Node, list[Leaf]]:
    """Run `simulations` selections, expansions, rollouts and backups from the root."""
    root = Node(root_state, game.actions(root_state))
    leaves: list[Leaf] = []
    for _ in range(max(simulations, len(root.actions))):
        node, path, depth = root, [], 0
        state = root_state
        while True:
            a = select(node, c, eps)
            path.append((node, a))
            key, state = game.step(node.state, a, rng)
            depth += 1
            edge = node.edges[a]
            child = edge.children.get(key)
            if child is None or depth >= max_depth or game.terminal(state):
                if child is None and not game.terminal(state) and depth < max_depth:
                    edge.children[key] = Node(state, game.actions(state))
                break
            node = child
        final = state if game.terminal(state) else game.rollout(state, rng)
        v = game.value(final)
        backup(path, v)
        leaves.append(Leaf(path[0][1], final, v))
    return root, leaves
