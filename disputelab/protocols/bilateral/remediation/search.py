"""Exemplar selection by value impact: stage 1 ranks single exemplars, stage 2 searches
for the best set by swapping members with lower-ranked candidates (spec section 6.4).

Both stages take the value of a set as an async function, so they are plain search code
that a test can drive with a toy value. Decisions on the paper's open points:

- the initial set is the top `k` of stage 1 (n = K);
- children of a node replace one member that was in the initial set by one candidate,
  in the position of the member it replaces (prompt order is stage-1 rank order);
- Δ compares a child with its parent; every child is enqueued, whatever its Δ;
- the negative streak counts consecutive negative Δ for one member and resets on a Δ of
  0 or more; at `patience` (M) consecutive negatives that member's replacements stop;
- sets already valued are not valued again (a set is its members, in any order);
- a global budget of set valuations bounds the search.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from disputelab.llm.concurrency import each

SetValue = Callable[[tuple[str, ...]], Awaitable[float]]


@dataclass
class Ranked:
    """Stage 1: candidates by individual value impact, best first."""

    order: list[str]
    value: dict[str, float]


async def rank_singles(candidates: Sequence[str], value: SetValue) -> Ranked:
    """Each candidate's value impact on its own, best first (ties by id)."""
    # Each candidate is valued on its own, over the same fixed rollouts: all together.
    singles = await each(lambda c: value((c,)), candidates)
    values = dict(zip(candidates, singles, strict=True))
    order = sorted(values, key=lambda c: (-values[c], c))
    return Ranked(order, values)


@dataclass
class SearchLog:
    best: tuple[str, ...]
    best_value: float
    initial_value: float
    evaluations: int = 0
    visited: int = 0
    pruned: int = 0  # members whose replacements stopped early
    trace: list[tuple[tuple[str, ...], float]] = field(default_factory=list)


async def search_set(
    ranked: Ranked, k: int, value: SetValue, patience: int = 2, budget: int = 200
) -> SearchLog:
    """Stage 2: breadth-first swaps from the top-`k` set with early pruning."""
    initial = tuple(ranked.order[:k])
    candidates = ranked.order[k:]
    seen: dict[frozenset[str], float] = {}

    async def valued(s: tuple[str, ...]) -> float:
        key = frozenset(s)
        if key not in seen:
            seen[key] = await value(s)
            log.evaluations += 1
            log.trace.append((s, seen[key]))
        return seen[key]

    log = SearchLog(initial, 0.0, 0.0)
    log.initial_value = log.best_value = await valued(initial)
    queue: deque[tuple[str, ...]] = deque([initial])
    while queue and log.evaluations < budget:
        node = queue.popleft()
        log.visited += 1
        parent = await valued(node)
        for pos, member in enumerate(node):
            if member not in initial:
                continue
            streak = 0
            for b in candidates:
                if b in node or log.evaluations >= budget:
                    continue
                child = (*node[:pos], b, *node[pos + 1 :])
                fresh = frozenset(child) not in seen
                delta = await valued(child) - parent
                if fresh:
                    queue.append(child)
                if seen[frozenset(child)] > log.best_value:
                    log.best, log.best_value = child, seen[frozenset(child)]
                streak = streak + 1 if delta < 0 else 0
                if streak >= patience:
                    log.pruned += 1
                    break
    return log
