"""Small builders shared by tests: run rule episodes and tweak personas."""

from __future__ import annotations

import asyncio

from disputelab.agents.registry import make_mediator, make_parties
from disputelab.episode import Episode
from disputelab.protocols.roundtable import RoundTable
from disputelab.scenario import Scenario, builtin_scenarios
from disputelab.scenario.schema import Strategy


def scenario(sid: str = "tenancy") -> Scenario:
    return builtin_scenarios()[sid].model_copy(deep=True)


def with_personas(
    s: Scenario, strategy: Strategy | None = None, reactivity: float | None = None
) -> Scenario:
    s = s.model_copy(deep=True)
    for p in s.parties:
        if strategy is not None:
            p.persona.strategy = strategy
        if reactivity is not None:
            p.persona.reactivity = reactivity
    return s


def play(s: Scenario, mediator: str = "none", seed: int = 0, budget: int = 100) -> Episode:
    ep = Episode(s.id, "roundtable", seed, {"parties": "rule", "mediator": mediator})
    return asyncio.run(
        RoundTable(budget).run(s, make_parties(s, "rule", seed), make_mediator(s, mediator), ep)
    )
