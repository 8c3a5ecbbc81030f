"""Synthetic negotiation tasks: variants of the three built-in price scenarios.

The paper has its agents "randomly synthesize a new business negotiation task" for each
value-impact rollout. Offline we draw variants of a built-in scenario: the reservations
move within the opening gap and the buyer's reactivity (hence its offence sensitivity)
is drawn, so each variant is a different negotiation. Variants are the clusters of the
selection comparison's intervals.
"""

from __future__ import annotations

import random

from disputelab.protocols.bilateral.agents.market import Market
from disputelab.scenario.library import builtin_scenario
from disputelab.scenario.schema import Scenario

TOPICS = ("product-sale", "housing-rent", "salary")
# ASSUMPTION: the spread of a variant's buyer reactivity (offence sensitivity / 2).
REACTIVITY_RANGE = (0.3, 0.7)


def variant(base: Scenario, index: int) -> Scenario:
    """The `index`-th variant of `base` (index 0 is `base` itself, under a new id)."""
    out = base.model_copy(deep=True)
    out.id = f"{base.id}-v{index}"
    if index == 0:
        return out
    rng = random.Random(f"variant:{base.id}:{index}")
    m = Market.of(base)
    term = out.terms[0]
    gap = m.span
    term.reservations[m.buyer] = m.buyer_start + gap * rng.uniform(0.6, 0.9)
    term.reservations[m.seller] = min(
        m.seller_floor + gap * rng.uniform(0.0, 0.3), term.reservations[m.buyer]
    )
    buyer = out.party(m.buyer)
    buyer.persona.reactivity = round(rng.uniform(*REACTIVITY_RANGE), 3)
    return out


def tasks(per_topic: int, topics: tuple[str, ...] = TOPICS, start: int = 0) -> list[Scenario]:
    """`per_topic` variants of each topic, numbered from `start`, topic by topic."""
    return [
        variant(builtin_scenario(t), i) for t in topics for i in range(start, start + per_topic)
    ]
