"""Small builders shared by tests: run rule episodes and tweak personas."""

from __future__ import annotations

import asyncio
from pathlib import Path

from disputelab.agents.registry import MEDIATOR, build_agent, build_parties
from disputelab.agents.settings import AgentSettings, Disclosure
from disputelab.episode import Episode
from disputelab.experiments.episodes import Cast, RunResult, run_single
from disputelab.protocols.play import play as play_protocol
from disputelab.scenario import Scenario, builtin_scenarios
from disputelab.scenario.schema import Strategy
from disputelab.store.sqlite import Store

# Real data nobody here wrote lies beside the project, never inside it; tests that read it
# skip, naming the missing file, where it is absent.
DATASETS = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"
AGENTMEDIATION_CASES = DATASETS / "agentmediation" / "cases.jsonl"
PROMEDIATE = DATASETS / "promediate"


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


def run_matched(
    store: Store, s: Scenario, mediator: str = "none", seed: int = 0, budget: int = 100
) -> RunResult:
    """One stored `disputelab run` of rule parties: the episode and its unmediated twin."""
    cast = Cast({"parties": "rule", "mediator": mediator})
    return asyncio.run(run_single(store, s, cast, seed, "roundtable", {"budget": budget}))


def play(
    s: Scenario,
    mediator: str = "none",
    seed: int = 0,
    budget: int = 100,
    disclosure: Disclosure = "negotiator",
) -> Episode:
    """A roundtable episode of rule parties; `disclosure: full` has them state their whole
    acceptable sets, as every rule episode did before issue 14."""
    ep = Episode(s.id, "roundtable", seed, {"parties": "rule", "mediator": mediator})
    settings = AgentSettings(disclosure=disclosure)
    med = None if mediator == "none" else build_agent(MEDIATOR, mediator, s, seed)
    parties = build_parties(s, "rule", seed, settings=settings)
    params = {"budget": budget, "disclosure": disclosure}
    return asyncio.run(play_protocol("roundtable", s, parties, {"mediator": med}, params, ep))
