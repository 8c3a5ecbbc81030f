"""Rule parties' motivation to speak, and the rule turn-taking predictor."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import strategies as st

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext
from disputelab.agents.parties.rule import RuleParty
from disputelab.agents.parties.rule_thinking import (
    CLOSE_MOTIVATION,
    motivation,
)
from disputelab.episode import Signal, Stance
from disputelab.protocols.roundtable.agents.predictors import ANYONE, RulePredictor
from tests.helpers import scenario

unit = st.floats(0.0, 1.0)


@given(unit, unit, unit)
def test_motivation_stays_on_the_scale_and_rises_with_each_driver(
    gap: float, stake: float, agitation: float
) -> None:
    m = motivation(gap, stake, agitation)
    assert 1.0 <= m <= 5.0
    assert motivation(min(1.0, gap + 0.2), stake, agitation) >= m
    assert motivation(gap, min(1.0, stake + 0.2), agitation) >= m
    assert motivation(gap, stake, min(1.0, agitation + 0.2)) >= m


def test_motivation_at_the_extremes() -> None:
    assert motivation(0.0, 0.0, 0.0) == 1.0  # nothing at stake: listen
    assert motivation(1.0, 1.0, 1.0) == 5.0


def _turn(i: int, speaker: str, text: str, stances: dict[str, Stance]) -> PublicTurn:
    return PublicTurn(i, i + 1, speaker, "party", text, stances)


def _think(party: RuleParty, dialogue: list[PublicTurn], k: int = 2) -> list:  # type: ignore[type-arg]
    return asyncio.run(party.think(dialogue, TurnContext(len(dialogue), 40, 3), k))


def test_a_party_is_keener_on_the_topics_that_weigh_most_for_it() -> None:
    s = scenario("workplace")
    me = s.parties[0]
    party = RuleParty(s, me.id, seed=0)
    others = [p for p in s.parties if p.id != me.id]
    # Everyone else backs the options this party likes least, on every topic.
    worst = {
        t.id: Stance(me.preferences[t.id].ranking[-1], (me.preferences[t.id].ranking[-1],))
        for t in s.topics
    }
    dialogue = [_turn(i, p.id, "my view", worst) for i, p in enumerate(others)]
    thoughts = _think(party, dialogue, k=len(s.topics))
    ratings = [t.rating for t in thoughts]
    assert ratings == sorted(ratings, reverse=True)
    heaviest = max(me.weights, key=lambda t: me.weights[t])
    assert f"MEM#pref:{heaviest}" in thoughts[0].stimuli
    assert all(t.rating == t.raw for t in thoughts)  # the protocol applies the boost


def test_a_party_that_can_accept_the_table_wants_to_say_so() -> None:
    s = scenario("workplace")
    me = s.parties[0]
    party = RuleParty(s, me.id, seed=0)
    mine = party.hidden_stances()
    dialogue = [_turn(i, p.id, "agreed", mine) for i, p in enumerate(s.parties[1:])]
    (first, *_) = _think(party, dialogue)
    assert first.rating == CLOSE_MOTIVATION


def test_the_wish_to_close_comes_exactly_when_the_next_move_accepts() -> None:
    s = scenario("workplace")
    me, ally, rival = s.parties
    mine = RuleParty(s, me.id, seed=0).hidden_stances()
    theirs = {
        t.id: Stance(rival.preferences[t.id].ranking[0], (rival.preferences[t.id].ranking[0],))
        for t in s.topics
    }
    # One other party backs its package and the other its own: the table leans its way,
    # but not everyone backs one package, so its policy would not accept yet.
    split = [_turn(0, ally.id, "agreed", mine), _turn(1, rival.id, "no", theirs)]
    united = [_turn(0, ally.id, "agreed", mine), _turn(1, rival.id, "agreed", mine)]
    for dialogue, closes in ((split, False), (united, True)):
        party = RuleParty(s, me.id, seed=0)
        thoughts = _think(party, dialogue)
        wants_to_close = any(t.rating == CLOSE_MOTIVATION for t in thoughts)
        action = asyncio.run(party.articulate(dialogue, TurnContext(2, 40, 3), thoughts[0]))
        assert wants_to_close is closes
        assert (action.signal is Signal.CONSENSUS) is closes


def test_thinking_does_not_swallow_a_mediator_proposal_the_party_has_yet_to_answer() -> None:
    s = scenario("workplace")
    me = s.parties[0]
    # Its favourite everywhere but on its lightest topic, where it gets its second choice.
    light = min(me.weights, key=lambda t: me.weights[t])
    proposal = {t.id: me.preferences[t.id].ranking[0] for t in s.topics}
    proposal[light] = me.preferences[light].ranking[1]
    heard = [PublicTurn(0, 0, "mediator", "mediator", "How about this?", proposal=proposal)]
    ctx = TurnContext(0, 3, 3)  # a short horizon, so the proposal is worth taking
    plain = RuleParty(s, me.id, seed=0).decide(heard, ctx)
    assert plain.package() == proposal, "precondition: the party takes the proposal"
    thinker = RuleParty(s, me.id, seed=0)
    _think(thinker, heard)
    assert thinker.decide(heard, ctx).package() == proposal


def test_the_rule_predictor_expects_a_named_party_then_the_most_opposed() -> None:
    s = scenario("workplace")
    public = PublicScenario.of(s)
    a, b, c = (p.id for p in s.parties)
    predictor = RulePredictor(public)
    t = s.topics[0]
    o1, o2 = t.option_ids()[:2]
    named = s.parties[2].name
    assert predictor.rule_prediction([]) == ANYONE
    said = [_turn(0, a, f"What do you think, {named}?", {t.id: Stance(o1)})]
    assert predictor.rule_prediction(said) == c
    opposed = [
        _turn(0, b, "I back the first", {t.id: Stance(o1)}),
        _turn(1, c, "I back the second", {t.id: Stance(o2)}),
        _turn(2, a, "I back the first too", {t.id: Stance(o1)}),
    ]
    assert predictor.rule_prediction(opposed) == c
    agreed = [_turn(0, b, "first", {t.id: Stance(o1)}), _turn(1, a, "first", {t.id: Stance(o1)})]
    assert predictor.rule_prediction(agreed) == ANYONE


def test_the_most_salient_thought_may_be_an_earlier_one_closer_to_the_event() -> None:
    from disputelab.agents.thinking import Mind
    from disputelab.episode import Thought
    from disputelab.llm.embedding import Embedder

    mind = Mind(["I want parking for residents."], Embedder(semantic=False))
    mind.attend("We need more parking spaces near the centre")
    old = Thought("a:0:0", "a", "parking spaces for residents first", 3.0, 3.0)
    mind.keep([old])
    mind.attend("Parking spaces again: who gets them?")
    mind.keep([Thought("a:1:0", "a", "the weather is lovely today", 3.0, 3.0)])
    assert mind.most_salient() is old
