"""The whole selection: a random subset S' of the pool, stage 1 on it, stage 2 from its
top k, and the chosen set with a record of how it was chosen and what it cost."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from disputelab.llm.base import ChatModel
from disputelab.protocols.bilateral.agents.exemplars import ExemplarFile
from disputelab.protocols.bilateral.remediation.search import rank_singles, search_set
from disputelab.protocols.bilateral.remediation.simulate import Cast
from disputelab.protocols.bilateral.remediation.value import ValueImpact, build_rollouts


@dataclass(frozen=True)
class Budget:
    """The sizes the paper leaves open (spec section 14.3), with our defaults."""

    k: int = 8  # exemplars in the set (K)
    candidates: int = 50  # |S'|, drawn from the pool
    rollouts: int = 20  # |D_s|, dialogues with one remediation point
    patience: int = 2  # M
    evaluations: int = 120  # set valuations stage 2 may make


async def select_exemplars(
    pool: ExemplarFile,
    name: str,
    seed: int,
    cast: Cast,
    budget: Budget = Budget(),
    judges: Sequence[ChatModel] = (),
) -> ExemplarFile:
    """Choose a set of `budget.k` exemplars from `pool` by value impact."""
    rng = random.Random(f"select:{seed}")
    ids = [e.id for e in pool.exemplars]
    subset = sorted(rng.sample(ids, min(budget.candidates, len(ids))))
    rollouts = await build_rollouts(budget.rollouts, seed, cast, judges)
    if not rollouts.items:
        raise ValueError("no dialogue reached a violation; raise violation_prob or max_rounds")
    value = ValueImpact(pool.exemplars, rollouts, cast, judges)
    ranked = await rank_singles(subset, value)
    log = await search_set(ranked, budget.k, value, budget.patience, budget.evaluations)
    by_id = {e.id: e for e in pool.exemplars}
    meta = {
        "method": "value-impact",
        "pool": pool.name,
        "seed": seed,
        "k": budget.k,
        "candidates": len(subset),
        "rollouts": len(rollouts.items),
        "rollouts_screened": rollouts.screened,
        "patience": budget.patience,
        "evaluation_budget": budget.evaluations,
        "single_value_impact": {i: ranked.value[i] for i in ranked.order},
        "top_vi": list(ranked.order[: budget.k]),
        "initial_value_impact": log.initial_value,
        "value_impact": log.best_value,
        "set_evaluations": log.evaluations,
        "nodes_visited": log.visited,
        "branches_pruned": log.pruned,
        "episodes_played": value.episodes + rollouts.screened,
        "model_calls": dict(cast.calls),
        "judge": ", ".join(j.name for j in judges) or "rule buyer's hidden state",
    }
    return ExemplarFile(name, "set", tuple(by_id[i] for i in log.best), meta)
