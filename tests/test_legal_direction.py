"""Directions AgentMediation reports, reproduced by rule agents on the 308 real cases.

- competing@all settles less often and carries more litigation risk than compromising@all;
- collaborating@all reaches at least the consensus of collaborating@one (the paper's
  group-polarisation direction);
- a mediator that cites its retrieved legal bases recalls more of the gold bases the more
  it is given: ek-top10 >= ek-top3 >= none.

The cases come from ../shared/datasets (never copied into the project); the tests skip
with the reason when it is absent.
"""

from __future__ import annotations

import asyncio
import statistics
from functools import cache
from pathlib import Path

import pytest

from disputelab.agents.registry import STAGED_MEDIATOR, build_agent, build_parties
from disputelab.episode import Episode
from disputelab.evaluation.agentmediation import score_staged
from disputelab.legal.expertise import build_index, retrieve_for
from disputelab.protocols.play import play
from disputelab.scenario.conditions import apply_condition
from disputelab.scenario.importers.agentmediation import import_agentmediation
from disputelab.scenario.schema import Scenario

CASES = Path(__file__).resolve().parents[1].parent / "shared/datasets/agentmediation/cases.jsonl"
pytestmark = pytest.mark.skipif(
    not CASES.is_file(), reason=f"shared AgentMediation cases not found at {CASES}"
)


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


def test_all_308_cases_import() -> None:
    assert len(cases()) == 308


def test_competing_at_all_settles_less_and_risks_litigation_more_than_compromising() -> None:
    competing = condition_means("strategy:competing@all")
    compromising = condition_means("strategy:compromising@all")
    print(f"competing@all {competing}\ncompromising@all {compromising}")
    assert competing["success"] < compromising["success"]
    assert competing["litigation_risk"] > compromising["litigation_risk"]


def test_collaborating_at_all_reaches_at_least_the_consensus_of_collaborating_at_one() -> None:
    every = condition_means("strategy:collaborating@all")
    one = condition_means("strategy:collaborating@one")
    print(f"collaborating@all {every}\ncollaborating@one {one}")
    assert every["consensus"] >= one["consensus"]


def test_retrieved_bases_raise_the_mediators_legal_basis_recall() -> None:
    index = build_index(None, cases())

    async def recall(level: str) -> float:
        values = []
        for s in cases():
            sc = apply_condition(s, level)
            values.append((await _staged(sc, retrieve_for(index, sc)))["legal_basis_recall"])
        return statistics.fmean(values)

    got = {
        lv: asyncio.run(recall(lv))
        for lv in ("expertise:none", "expertise:ek-top3", "expertise:ek-top10")
    }
    print(f"mean legal-basis recall of the rule mediator over 308 cases: {got}")
    assert got["expertise:ek-top10"] >= got["expertise:ek-top3"] >= got["expertise:none"]
    assert got["expertise:ek-top10"] > got["expertise:none"]
