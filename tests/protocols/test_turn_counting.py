"""ProMediate's turn counting on the roundtable: a budget of 4·N·M dialogue lines that the
mediator's turns use up too, no early stop on consensus; and the default counting
(party turns only, the mediator free) left as it was."""

from __future__ import annotations

import asyncio

import pytest

from disputelab.agents.registry import build_agent, build_parties
from disputelab.episode import Episode, Status
from disputelab.protocols.base import ParamsError, get_protocol
from disputelab.protocols.play import play
from disputelab.protocols.roundtable.agents import MEDIATOR
from disputelab.scenario.schema import Scenario
from tests.helpers import scenario, with_personas


def run(s: Scenario, params: dict[str, object], mediator: str = "rule", seed: int = 0) -> Episode:
    med = build_agent(MEDIATOR, mediator, s, seed) if mediator != "none" else None
    ep = Episode(s.id, "roundtable", seed, {"parties": "rule", "mediator": mediator})
    parties = build_parties(s, "rule", seed)
    return asyncio.run(play("roundtable", s, parties, {"mediator": med}, params, ep))


def lines(ep: Episode) -> int:
    return sum(1 for t in ep.turns if t.role in ("party", "mediator"))


def test_by_default_mediator_turns_do_not_use_the_party_turn_budget() -> None:
    s = with_personas(scenario(), "competing")
    ep = run(s, {"budget": 30})
    assert ep.intervention_positions(), "the rule mediator steps in on this scenario"
    assert ep.party_turns == 30 or ep.outcome.status is not Status.BUDGET
    assert lines(ep) > ep.party_turns


def test_dialogue_counting_charges_mediator_turns_to_the_budget() -> None:
    s = with_personas(scenario(), "competing")
    ep = run(s, {"budget": 30, "turn_counting": "dialogue", "stop_on_consensus": False})
    assert ep.intervention_positions()
    assert lines(ep) == 30 and ep.party_turns < 30
    assert "30 dialogue lines" in ep.outcome.stop_reason or ep.outcome.status is Status.IMPASSE


def test_the_budget_can_be_four_turns_per_party_per_topic() -> None:
    s = with_personas(scenario(), "competing")
    n, m = len(s.parties), len(s.topics)
    ep = run(
        s,
        {"budget_per_party_topic": 4, "turn_counting": "dialogue", "stop_on_consensus": False},
    )
    if ep.outcome.status is not Status.IMPASSE:
        assert lines(ep) == 4 * n * m
    assert f"budget of {4 * n * m}" in ep.outcome.stop_reason or "walked" in ep.outcome.stop_reason


def test_without_the_early_stop_the_talk_runs_past_consensus() -> None:
    s = with_personas(scenario(), "accommodating")
    stopped = run(s, {"budget": 60}, mediator="none")
    assert stopped.outcome.status is Status.RESOLVED and stopped.party_turns < 60
    ran_on = run(s, {"budget": 60, "stop_on_consensus": False}, mediator="none")
    assert ran_on.party_turns == 60
    assert ran_on.outcome.status in (Status.RESOLVED, Status.BUDGET)
    # The first part of the talk is the same episode: same seed, same moves.
    k = stopped.party_turns
    assert [t.text for t in ran_on.turns[:k]] == [t.text for t in stopped.turns[:k]]


def test_a_negative_per_topic_budget_is_refused() -> None:
    with pytest.raises(ParamsError):
        get_protocol("roundtable").params({"budget_per_party_topic": -1})
