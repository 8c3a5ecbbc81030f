"""The roundtable protocol owns turn order and stopping, and every stop is reachable."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext, UsageReporter
from disputelab.agents.parties.rule import RuleParty
from disputelab.episode import Action, Episode, Intervention, Signal, Stance, Status
from disputelab.protocols.base import get_protocol
from disputelab.protocols.play import play as play_protocol
from disputelab.protocols.roundtable.agents.rule import RuleMediator
from tests.helpers import play, scenario, with_personas


def test_parties_speak_in_fixed_cyclic_order() -> None:
    s = scenario("community-centre")
    ep = play(s, "none", seed=1, budget=12)
    speakers = [t.speaker for t in ep.turns if t.role == "party"]
    order = [p.id for p in s.parties]
    assert speakers == [order[i % 4] for i in range(len(speakers))]


def test_all_parties_signalling_consensus_resolves_with_the_agreed_package() -> None:
    ep = play(with_personas(scenario("tenancy"), "accommodating"), "none", seed=0)
    assert ep.outcome is not None and ep.outcome.status is Status.RESOLVED
    assert "signalled consensus" in ep.outcome.stop_reason
    assert all(v is not None for v in ep.outcome.agreement.values())
    last = [t.action for t in ep.turns if t.action is not None][-2:]
    assert all(a.signal is Signal.CONSENSUS for a in last)


def test_a_walk_away_ends_the_episode_in_impasse() -> None:
    s = with_personas(scenario("community-centre"), "competing", reactivity=1.0)
    ep = play(s, "none", seed=0)
    assert ep.outcome is not None and ep.outcome.status is Status.IMPASSE
    assert "walked away" in ep.outcome.stop_reason
    assert ep.turns[-1].action is not None
    assert ep.turns[-1].action.signal is Signal.WALK_AWAY


def test_the_budget_stops_an_unresolved_episode() -> None:
    ep = play(scenario("workplace"), "none", seed=0, budget=9)
    assert ep.outcome is not None and ep.outcome.status is Status.BUDGET
    assert ep.party_turns == 9
    assert "budget of 9" in ep.outcome.stop_reason


def test_mediator_turns_do_not_consume_the_party_turn_budget() -> None:
    ep = play(scenario("workplace"), "rule", seed=0, budget=30)
    assert ep.intervention_positions(), "the rule mediator should intervene in 30 turns"
    assert len(ep.turns) == ep.party_turns + len(ep.intervention_positions())


def test_the_mediator_never_speaks_after_the_last_party_turn() -> None:
    ep = play(scenario("workplace"), "rule", seed=2, budget=25)
    assert ep.turns[-1].role == "party"


def test_same_seed_same_episode_and_other_seeds_may_differ() -> None:
    a = play(scenario("community-centre"), "rule", seed=5)
    b = play(scenario("community-centre"), "rule", seed=5)
    assert [t.to_dict() | {"latency_s": 0} for t in a.turns] == [
        t.to_dict() | {"latency_s": 0} for t in b.turns
    ]
    texts = {
        tuple(t.text for t in play(scenario("tenancy"), "rule", seed=k).turns) for k in range(6)
    }
    assert len(texts) > 1


def test_oracle_consensus_is_recorded_on_every_turn() -> None:
    ep = play(scenario("tenancy"), "rule", seed=0)
    assert ep.initial_consensus is not None
    assert all(t.consensus is not None for t in ep.turns)
    assert all(0.0 <= v <= 1.0 for t in ep.turns for v in (t.consensus or {}).values())


def test_the_rule_mediator_is_built_from_public_information_only() -> None:
    s = scenario("tenancy")
    public = PublicScenario.of(s)
    dumped = repr(public)
    for party in s.parties:
        assert party.objective not in dumped
        assert party.private_notes not in dumped
        assert party.fallback.description not in dumped


def test_the_rule_mediator_proposes_options_every_party_said_it_would_accept() -> None:
    s = scenario("tenancy")
    med = RuleMediator(PublicScenario.of(s))
    stances = {
        "tenant": {t.id: Stance("A", ("A", "B")) for t in s.topics},
        "landlord": {t.id: Stance("C", ("B", "C")) for t in s.topics},
    }
    turns = [
        PublicTurn(i, i + 1, pid, "party", "...", st, Signal.CONTINUE, "hostile")
        for i, (pid, st) in enumerate(stances.items())
    ]
    move = med.decide(turns, TurnContext(2, 100, 2))
    assert isinstance(move, Intervention)
    assert move.proposal == {t.id: "B" for t in s.topics}


class _Scripted(UsageReporter):
    """A party agent that replays fixed signals: a true boundary double for the protocol."""

    def __init__(self, party_id: str, signals: Sequence[Signal]) -> None:
        self.party_id = party_id
        self.signals = list(signals)

    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        sig = self.signals.pop(0) if self.signals else Signal.CONTINUE
        return Action("...", {"repairs": Stance("B", ("B",))}, sig)


def test_consensus_must_come_from_every_partys_latest_signal() -> None:
    s = scenario("tenancy")
    parties = [
        _Scripted("tenant", [Signal.CONSENSUS, Signal.CONTINUE, Signal.CONSENSUS]),
        _Scripted("landlord", [Signal.CONTINUE, Signal.CONSENSUS, Signal.CONSENSUS]),
    ]
    ep = asyncio.run(
        play_protocol(
            "roundtable", s, parties, {}, {"budget": 20}, Episode(s.id, "roundtable", 0, {})
        )
    )
    assert ep.outcome is not None and ep.outcome.status is Status.RESOLVED
    assert ep.party_turns == 5
    assert ep.initial_consensus is None  # scripted agents have no hidden state: no oracle


def test_agents_that_do_not_match_the_scenarios_parties_are_rejected() -> None:
    s = scenario("tenancy")
    with pytest.raises(ValueError, match="do not match"):
        asyncio.run(
            play_protocol(
                "roundtable",
                s,
                [RuleParty(s, "tenant", 0)],
                {},
                {"budget": 5},
                Episode(s.id, "roundtable", 0, {}),
            )
        )


def test_a_budget_below_one_is_rejected() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        get_protocol("roundtable").params({"budget": 0})
