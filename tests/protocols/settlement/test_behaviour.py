"""The settlement counsel read their eagerness from the behaviour table: the shipped table
holds the numbers the counsel had before they moved there, a run's `behaviour`
parameter reaches the counsel it seats, and each parameter world moves them."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from disputelab.agents.registry import build_agent, build_parties
from disputelab.agents.settings import AgentSettings
from disputelab.episode import Episode
from disputelab.protocols.agent_params import agent_settings
from disputelab.protocols.base import ParamsError, get_protocol
from disputelab.protocols.play import play
from disputelab.protocols.settlement.agents.counsel import RuleCounsel, strategy_eagerness
from disputelab.protocols.settlement.agents.planner import PlanningCounsel
from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR, Behaviour, world_overrides
from disputelab.scenario.library import builtin_scenarios
from disputelab.scenario.schema import STRATEGIES

# The counsel's EAGERNESS table as it stood in agents/counsel.py before it became rows of
# the behaviour table (main at f2a2a72): the shipped world must play exactly these.
BEFORE = {
    "competing": 0.35,
    "avoiding": 0.6,
    "compromising": 1.0,
    "collaborating": 1.3,
    "accommodating": 2.5,
}


def _episode(
    sid: str, counsel: str, parties: str, seed: int, behaviour: dict[str, float] | None = None
) -> tuple[Episode, dict[str, Any]]:
    sc = builtin_scenarios()[sid].model_copy(deep=True)
    settings = AgentSettings(behaviour=Behaviour.of(behaviour))
    seated: dict[str, Any] = {
        "counsel": build_agent(
            "settlement-counsel", counsel, sc, seed, role="counsel", settings=settings
        ),
        "mediator": build_agent("settlement-mediator", "rule", sc, seed),
    }
    agents = build_parties(sc, parties, seed, None, "settlement-party", settings=settings)
    params = {"behaviour": behaviour} if behaviour else {}
    return asyncio.run(play("settlement", sc, agents, seated, params)), seated


def test_the_shipped_table_holds_the_eagerness_the_counsel_had_before() -> None:
    assert {m: strategy_eagerness(m) for m in STRATEGIES} == BEFORE
    assert strategy_eagerness("not-a-mode") == 1.0  # linear, as EAGERNESS.get(..., 1.0)


@pytest.mark.parametrize(
    ("sid", "counsel", "parties", "seed", "amount", "turns"),
    [
        # Recorded from runs of main at f2a2a72, before the move: the same seed plays
        # the same episode with the constants in the table.
        ("settle-unpaid-overtime", "mcts", "rule", 0, 23216.0, 19),
        ("settle-gym-slip", "direct", "rule", 0, 11520.0, 19),
        ("settle-dog-bite-courier", "mcts", "conceder", 1, 7554.24, 16),
    ],
)
def test_a_fixed_seed_episode_settles_where_it_did_before_the_move(
    sid: str, counsel: str, parties: str, seed: int, amount: float, turns: int
) -> None:
    ep, _ = _episode(sid, counsel, parties, seed)
    assert ep.outcome is not None and ep.outcome.amounts == {"amount": amount}
    assert len(ep.turns) == turns


def test_a_behaviour_override_reaches_the_rule_counsel_and_the_planner() -> None:
    sid = "settle-unpaid-overtime"
    sc = builtin_scenarios()[sid]
    plaintiff, defendant = (p.persona.strategy for p in sc.parties)
    override = {
        f"settlement.eagerness.{defendant}": 3.5,
        f"settlement.eagerness.{plaintiff}": 0.25,
    }
    ep, seated = _episode(sid, "mcts", "rule", 0, override)
    planner = seated["counsel"]
    assert isinstance(planner, PlanningCounsel) and planner.eagerness == 0.25
    shipped, _ = _episode(sid, "mcts", "rule", 0)
    assert ep.outcome != shipped.outcome or ep.turns != shipped.turns


def test_the_protocol_parameter_becomes_the_agents_table() -> None:
    params = get_protocol("settlement").params({"behaviour": {"settlement.eagerness.avoiding": 2}})
    settings = agent_settings(params)
    sc = builtin_scenarios()["settle-gym-slip"]
    (counsel, _) = build_parties(sc, "rule", 0, None, "settlement-party", settings=settings)
    assert isinstance(counsel, RuleCounsel)
    assert counsel.behaviour["settlement.eagerness.avoiding"] == 2.0


def test_an_unknown_or_out_of_range_parameter_is_one_line() -> None:
    with pytest.raises(ParamsError) as caught:
        get_protocol("settlement").params({"behaviour": {"settlement.eagerness.avoid": 2}})
    assert "did you mean settlement.eagerness.avoiding" in str(caught.value)
    with pytest.raises(ParamsError, match=r"takes values from 0\.01 to 100"):
        get_protocol("settlement").params({"behaviour": {"settlement.eagerness.avoiding": 0}})


def test_each_world_moves_the_counsel_eagerness_as_its_row_says() -> None:
    neutral = Behaviour.of(world_overrides("neutral", {}))
    mirrored = Behaviour.of(world_overrides("mirrored", {}))
    for mode in STRATEGIES:
        assert strategy_eagerness(mode, neutral) == 1.0  # everyone concedes linearly
        assert strategy_eagerness(mode, mirrored) == pytest.approx(1 / BEFORE[mode])
    assert (
        strategy_eagerness("competing", DEFAULT_BEHAVIOUR)
        < 1
        < strategy_eagerness("competing", mirrored)
    )
