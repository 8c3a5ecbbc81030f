"""The AgentMediation conditions on the real cases, as machinery.

No test here asserts a paper's direction (that competing settles less, that more
retrieved bases raise recall): with rule agents those follow from their parameters and
from a mediator that cites whatever it is given, so pinning them would pin assumptions
(issue 14). These tests check that every case imports and plays, that the strategy
condition reaches the parties it names, and that the expertise condition hands the
mediator the retrieved bases it claims to.

The cases are the public dataset, found as tests/data_location.py says (never copied into
the project); the tests skip, naming the command that fetches it, when it is absent.
"""

from __future__ import annotations

import asyncio
import math
import statistics
from functools import cache

import pytest

from disputelab.agents.registry import build_agent, build_parties
from disputelab.episode import Episode
from disputelab.legal.expertise import build_index, retrieve_for
from disputelab.protocols.play import play
from disputelab.protocols.staged.agents import STAGED_MEDIATOR
from disputelab.protocols.staged.evaluation.agentmediation import proposals, score_staged
from disputelab.scenario.conditions import apply_condition
from disputelab.scenario.importers.agentmediation import import_agentmediation
from disputelab.scenario.schema import Scenario
from tests.data_location import agentmediation_records
from tests.helpers import AGENTMEDIATION_CASES

CASES = AGENTMEDIATION_CASES
# Slow: every real case is played, under each condition.
pytestmark = [pytest.mark.data("agentmediation"), pytest.mark.slow]


@cache
def cases() -> tuple[Scenario, ...]:
    result = import_agentmediation(CASES)
    assert not result.problems
    return tuple(result.scenarios)


async def _staged(s: Scenario, retrieved: tuple[str, ...] = ()) -> dict[str, float]:
    ep = Episode(s.id, "staged", 0, {})
    mediator = build_agent(STAGED_MEDIATOR, "rule", s, retrieved=retrieved)
    await play("staged", s, build_parties(s, "rule", 0), {"mediator": mediator}, None, ep)
    return {k: r.value for k, r in score_staged(ep, s).items()}


@cache
def condition_means(condition: str) -> dict[str, float]:
    async def run() -> list[dict[str, float]]:
        return [await _staged(apply_condition(s, condition)) for s in cases()]

    rows = asyncio.run(run())
    return {m: statistics.fmean(r[m] for r in rows) for m in rows[0]}


def test_every_case_imports() -> None:
    assert len(cases()) == len(agentmediation_records(CASES))


@pytest.mark.parametrize("mode", ["competing", "compromising", "collaborating"])
def test_the_strategy_condition_reaches_all_parties_or_exactly_one(mode: str) -> None:
    for s in cases():
        every = apply_condition(s, f"strategy:{mode}@all")
        one = apply_condition(s, f"strategy:{mode}@one")
        assert all(p.persona.strategy == mode for p in every.parties), s.id
        changed = [p for p, q in zip(one.parties, s.parties, strict=True) if p.persona != q.persona]
        assert len(changed) <= 1 and all(p.persona.strategy == mode for p in changed), s.id


def test_every_case_plays_and_is_scored_under_a_strategy_condition() -> None:
    means = condition_means("strategy:competing@all")
    for metric in ("success", "litigation_risk", "consensus"):
        assert not math.isnan(means[metric]), metric


def test_the_expertise_condition_hands_the_mediator_the_top_k_bases_it_retrieved() -> None:
    """The rule mediator cites what the case itself names plus every basis it was handed,
    so the condition's only effect on its citations is the retrieved list."""
    index = build_index(None, cases())
    levels = (("expertise:none", 0), ("expertise:ek-top3", 3), ("expertise:ek-top10", 10))
    for s in cases()[:40]:
        retrieved, cited = {}, {}
        for level, k in levels:
            sc = apply_condition(s, level)
            retrieved[level] = retrieve_for(index, sc)
            assert len(retrieved[level]) <= k, (s.id, level)
            ep = Episode(sc.id, "staged", 0, {})
            mediator = build_agent(STAGED_MEDIATOR, "rule", sc, retrieved=retrieved[level])
            parties = build_parties(sc, "rule", 0)
            asyncio.run(play("staged", sc, parties, {"mediator": mediator}, None, ep))
            cited[level] = {b for m in proposals(ep) for b in m.bases}
        assert retrieved["expertise:none"] == ()
        for level, _ in levels[1:]:
            assert cited[level] == cited["expertise:none"] | set(retrieved[level]), (s.id, level)
        # A deeper retrieval extends a shallower one: top-3 is the head of top-10.
        top3 = retrieved["expertise:ek-top3"]
        assert retrieved["expertise:ek-top10"][: len(top3)] == top3, s.id


def test_with_legal_cite_retrieved_at_neutral_the_mediator_cites_only_its_own_bases() -> None:
    """The expertise condition acts through `legal.cite_retrieved`: at its neutral value
    the mediator cites what the case names and none of what it was handed, so ablating
    the condition removes its effect on recall."""
    from disputelab.agents.settings import AgentSettings
    from disputelab.scenario.behaviour import Behaviour, neutral_overrides
    from disputelab.scenario.conditions import condition_parameters

    names = condition_parameters("expertise:ek-top10")
    assert names == ("legal.cite_retrieved",)
    ablated = AgentSettings(behaviour=Behaviour.of(neutral_overrides(names)))
    index = build_index(None, cases())
    for s in cases()[:20]:
        sc = apply_condition(s, "expertise:ek-top10")
        retrieved = retrieve_for(index, sc)
        cited = {}
        for label, settings, handed in (
            ("none", AgentSettings(), ()),
            ("ablated", ablated, retrieved),
        ):
            ep = Episode(sc.id, "staged", 0, {})
            mediator = build_agent(STAGED_MEDIATOR, "rule", sc, retrieved=handed, settings=settings)
            parties = build_parties(sc, "rule", 0)
            asyncio.run(play("staged", sc, parties, {"mediator": mediator}, None, ep))
            cited[label] = {b for m in proposals(ep) for b in m.bases}
        assert cited["ablated"] == cited["none"], s.id
