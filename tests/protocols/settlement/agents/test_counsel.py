"""Rule counsel concede along their curve between target and walk-away and accept what
beats their next offer; the planning counsel chooses among the same curve's candidates by
look-ahead, and its memory changes what it considers."""

from __future__ import annotations

import asyncio

from disputelab.agents.base import PublicTurn, TurnContext
from disputelab.episode import Signal
from disputelab.protocols.settlement.agents.brief import Brief, read, with_terms
from disputelab.protocols.settlement.agents.counsel import BOULWARE, CONCEDER, RuleCounsel
from disputelab.protocols.settlement.agents.memory import Entry, MemoryBank
from disputelab.protocols.settlement.agents.model import Batna
from disputelab.protocols.settlement.agents.planner import PlanConfig, PlanningCounsel

BATNA = Batna(100_000, 0.8, 8_000, 8_000)
BRIEF = Brief(
    side="plaintiff",
    party_id="p",
    opponent_id="d",
    term_id="amount",
    target=130_000,
    reservation=75_000,
    batna=BATNA,
    rounds=12,
    opens=True,
    dispute_type="labour",
)


def their(amount: float, i: int) -> PublicTurn:
    return PublicTurn(
        i, i, "d", "party", with_terms("offer", ("deadline: 30 days",)), offer={"amount": amount}
    )


def mine(amount: float, i: int) -> PublicTurn:
    return PublicTurn(i, i, "p", "party", "offer", offer={"amount": amount})


def history(n: int) -> list[PublicTurn]:
    out: list[PublicTurn] = []
    for i in range(n):
        out += [mine(130_000, 2 * i), their(40_000, 2 * i + 1)]
    return out


def move(agent: RuleCounsel, dialogue: list[PublicTurn]) -> float:
    return asyncio.run(agent.act(dialogue, TurnContext(len(dialogue), 12, 2))).offer["amount"]


def test_a_boulware_counsel_holds_out_longer_than_a_conceder() -> None:
    boulware, conceder = RuleCounsel(eagerness=BOULWARE), RuleCounsel(eagerness=CONCEDER)
    boulware.prepare(BRIEF)
    conceder.prepare(BRIEF)
    dialogue = history(3)
    assert move(boulware, dialogue) > move(conceder, dialogue)
    assert move(boulware, []) == move(conceder, []) == 130_000  # both open at the target


def test_rule_counsel_never_offer_past_their_walk_away() -> None:
    counsel = RuleCounsel(eagerness=CONCEDER)
    counsel.prepare(BRIEF)
    assert move(counsel, history(8)) >= 75_000


def test_a_counsel_accepts_a_standing_offer_that_beats_its_next_one() -> None:
    counsel = RuleCounsel(eagerness=1.0)
    counsel.prepare(BRIEF)
    dialogue = [*history(1), mine(120_000, 2), their(125_000, 3)]
    action = asyncio.run(counsel.act(dialogue, TurnContext(4, 12, 2)))
    assert action.signal is Signal.CONSENSUS and action.offer == {"amount": 125_000}


def test_legal_aid_raises_the_floor_a_counsel_will_sign_at() -> None:
    counsel = RuleCounsel(eagerness=1.0)
    counsel.prepare(BRIEF)
    assert counsel.confirm(76_000)
    counsel.heed(BATNA.reservation("plaintiff"))  # 72,000: lower than its own walk-away
    assert counsel.confirm(76_000)
    counsel.heed(78_000)
    assert not counsel.confirm(76_000)


def test_the_clauses_of_a_proposal_are_heard_by_the_other_side() -> None:
    counsel = RuleCounsel(eagerness=1.0)
    counsel.prepare(BRIEF)
    action = asyncio.run(counsel.act([], TurnContext(0, 12, 2)))
    heard = PublicTurn(0, 1, "p", "party", action.utterance, offer=action.offer)
    other = Brief(**{**BRIEF.__dict__, "side": "defendant", "party_id": "d", "opponent_id": "p"})
    assert read([heard], other).their_clauses == action.clauses


def planner(memory: MemoryBank | None, seed: int = 0) -> PlanningCounsel:
    agent = PlanningCounsel(seed)
    agent.prepare(BRIEF, scenario_id="case-b")
    agent.configure(PlanConfig(simulations=12), memory)
    return agent


def test_the_planner_considers_the_curve_step_and_plays_a_searched_candidate() -> None:
    agent = planner(None)
    action = asyncio.run(agent.act(history(2), TurnContext(4, 12, 2)))
    sources = [s for s, _, _ in agent.last_plan]
    assert sources[0] == "curve" and len(sources) >= 3
    assert all(n > 0 for _, _, n in agent.last_plan)  # every root candidate was tried
    best = max(agent.last_plan, key=lambda x: x[1])
    assert action.thought.startswith(f"plan: {best[0]}")


def test_the_planner_is_deterministic_for_a_seed() -> None:
    a = asyncio.run(planner(None, 3).act(history(2), TurnContext(4, 12, 2)))
    b = asyncio.run(planner(None, 3).act(history(2), TurnContext(4, 12, 2)))
    assert a.offer == b.offer and a.thought == b.thought


def test_memory_adds_candidates_and_learns_from_each_search() -> None:
    card = Entry(
        "C", "plaintiff", "labour", "settled near 95%", {"amount_share": 0.95}, 0.9, "case-a"
    )
    bank = MemoryBank([card])
    agent = planner(bank)
    asyncio.run(agent.act(history(2), TurnContext(4, 12, 2)))
    assert "memory-C" in [s for s, _, _ in agent.last_plan]
    assert len(bank.entries) > 1  # RoT wrote what the tree taught
    forgetful = planner(None)  # the no-memory ablation considers the curve's candidates only
    asyncio.run(forgetful.act(history(2), TurnContext(4, 12, 2)))
    assert not any(s.startswith("memory") for s, _, _ in forgetful.last_plan)
