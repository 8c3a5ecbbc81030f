"""What a rule party says in the open and in caucus, under each disclosure setting (issue 14).

These tests check the mechanism (what is stated, to whom, and what the mediator can infer
from it), never that one setting settles more disputes than another.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext
from disputelab.agents.parties.rule import RuleParty
from disputelab.agents.registry import build_parties
from disputelab.agents.settings import AgentSettings, Disclosure
from disputelab.episode import Action, Episode, Stance
from disputelab.protocols.play import play
from disputelab.protocols.roundtable.agents.rule import RuleMediator
from disputelab.scenario.behaviour import Behaviour
from tests.helpers import scenario

SCENARIOS = ["tenancy", "workplace", "community-centre"]
SEEDS = range(4)


class _Spy:
    """Wraps a rule party: records, per turn, its public action and its hidden stances."""

    def __init__(self, party: RuleParty) -> None:
        self.party = party
        self.turns: list[tuple[Action, dict[str, Stance]]] = []
        self.heard: list[PublicTurn] = []
        act = party.act

        async def spying(dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
            action = await act(dialogue, ctx)
            self.turns.append((action, party.hidden_stances()))
            self.heard = list(dialogue)
            return action

        party.act = spying  # type: ignore[method-assign]


class _SpyMediator(RuleMediator):
    """The rule mediator, keeping the dialogue it was last given."""

    def decide(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Any:
        self.views = [list(dialogue)]
        return super().decide(dialogue, ctx)


def _play(
    sid: str,
    seed: int,
    disclosure: Disclosure,
    caucus: int = 0,
    behaviour: dict[str, float] | None = None,
    mediated: bool = True,
) -> tuple[Episode, list[_Spy], RuleMediator | None]:
    s = scenario(sid)
    settings = AgentSettings(disclosure=disclosure, behaviour=Behaviour.of(behaviour))
    parties = build_parties(s, "rule", seed, settings=settings)
    assert all(isinstance(p, RuleParty) for p in parties)
    spies = [_Spy(p) for p in parties]  # type: ignore[arg-type]
    med = _SpyMediator(PublicScenario.of(s)) if mediated else None
    params: dict[str, Any] = {"budget": 60, "disclosure": disclosure, "caucus": caucus}
    ep = Episode(s.id, "roundtable", seed, {})
    ep = asyncio.run(play("roundtable", s, parties, {"mediator": med}, params, ep))
    return ep, spies, med


@pytest.mark.parametrize("sid", SCENARIOS)
def test_a_negotiator_never_states_its_private_acceptable_set(sid: str) -> None:
    larger = 0
    for seed in SEEDS:
        _, spies, _ = _play(sid, seed, "negotiator")
        for spy in spies:
            backed: dict[str, set[str | None]] = {}
            for action, hidden in spy.turns:
                for topic, s in action.stances.items():
                    backed.setdefault(topic, set()).add(s.option)
                    # Every option it calls acceptable is one it has backed in the open
                    # (a concession made), and one it would still take.
                    assert set(s.acceptable) <= backed[topic], (sid, seed, topic)
                    assert set(s.acceptable) <= set(hidden[topic].acceptable)
                    assert s.option == hidden[topic].option
                    larger += len(hidden[topic].acceptable) > len(s.acceptable)
    assert larger > 0  # it did hold something back: the check above is not vacuous


@pytest.mark.parametrize("sid", SCENARIOS)
def test_full_disclosure_states_the_whole_acceptable_set_every_turn(sid: str) -> None:
    for seed in SEEDS:
        _, spies, _ = _play(sid, seed, "full")
        for spy in spies:
            assert spy.turns
            for action, hidden in spy.turns:
                assert action.stances == hidden


def test_a_negotiator_gives_a_reason_when_it_turns_down_an_option_it_cannot_accept() -> None:
    said = []
    for sid in SCENARIOS:
        for seed in SEEDS:
            ep, _, _ = _play(sid, seed, "negotiator")
            said += [t.text for t in ep.turns if t.role == "party" and "does not work" in t.text]
            said += [t.text for t in ep.turns if t.role == "party" and "can't take" in t.text]
    assert said


def test_caucus_share_zero_names_nothing_and_changes_no_move_at_the_table() -> None:
    zero = {"disclosure.caucus_share": 0.0}
    for sid in SCENARIOS:
        with_caucus, spies, _ = _play(sid, 1, "negotiator", caucus=1, behaviour=zero)
        without, _, _ = _play(sid, 1, "negotiator", behaviour=zero)
        private = [t for t in with_caucus.turns if t.stage == "caucus"]
        assert private
        assert all(not s.acceptable for t in private if t.action for s in t.action.stances.values())
        for spy in spies:
            assert all(not s.acceptable for s in spy.party.caucus().stances.values())

        def party(ep: Episode) -> list[tuple[str, str]]:
            return [(t.speaker, t.text) for t in ep.turns if t.role == "party"]

        assert party(with_caucus) == party(without)


def _named(share: float, truth: float) -> list[tuple[set[str], set[str], set[str]]]:
    """(named, truly acceptable, every option) per party and topic, mid-negotiation."""
    out = []
    b = {"disclosure.caucus_share": share, "disclosure.caucus_truthfulness": truth}
    for sid in SCENARIOS:
        for seed in SEEDS:
            _, spies, _ = _play(sid, seed, "negotiator", behaviour=b, mediated=False)
            for spy in spies:
                p = spy.party
                for j, (topic, s) in enumerate(p.caucus().stances.items()):
                    true = set(p.hidden_stances()[topic].acceptable)
                    out.append((set(s.acceptable), true, set(p.table.option_ids[j])))
    return out


def test_truthfulness_one_names_only_options_the_party_would_take() -> None:
    named = _named(1.0, 1.0)
    assert any(n for n, _, _ in named)
    for n, true, _ in named:
        assert n <= true


def test_share_one_truthful_names_every_acceptable_option_held_back() -> None:
    b = {"disclosure.caucus_share": 1.0, "disclosure.caucus_truthfulness": 1.0}
    _, spies, _ = _play("tenancy", 0, "negotiator", behaviour=b, mediated=False)
    for spy in spies:
        p = spy.party
        open_ = p.public_stances()
        for topic, s in p.caucus().stances.items():
            hidden = set(p.hidden_stances()[topic].acceptable)
            assert set(s.acceptable) == hidden - set(open_[topic].acceptable)


def test_truthfulness_zero_bluffs_where_there_is_an_option_to_bluff_with() -> None:
    named = _named(1.0, 0.0)
    bluffs = [(n, true, every) for n, true, every in named if every - true and n]
    assert bluffs
    for n, true, _ in bluffs:
        assert n - true  # at least one named option is one it would not take


def test_caucus_reaches_the_mediator_and_never_another_party() -> None:
    for sid in SCENARIOS:
        ep, spies, med = _play(sid, 2, "negotiator", caucus=1)
        assert med is not None
        private = [t for t in ep.turns if t.stage == "caucus"]
        assert private
        assert {t.speaker for t in private} == {spy.party.party_id for spy in spies}
        assert all(t.role == "system" for t in private)
        private_index = {t.index: t.speaker for t in private}
        for spy in spies:
            pid = spy.party.party_id
            seen = {t.turn_index for t in spy.heard}
            # Its own caucuses reach it; the others' never do.
            assert not {i for i, who in private_index.items() if who != pid} & seen
        # The mediator read every caucus held before its last look at the table.
        read = {t.turn_index: t for t in med_views[-1]} if (med_views := _views(med)) else {}
        before = [t for t in private if t.index < max(read, default=-1)]
        assert before
        for t in before:
            assert t.index in read and read[t.index].speaker == t.speaker
            assert t.action is not None
            assert dict(read[t.index].stances) == t.action.stances


def _views(med: RuleMediator) -> list[Sequence[PublicTurn]]:
    return getattr(med, "views", [])


def test_the_mediators_inferred_zone_is_within_what_it_heard() -> None:
    bluffing = {"disclosure.caucus_truthfulness": 0.3}
    for sid in SCENARIOS:
        for disclosure in ("negotiator", "full"):
            _, _, med = _play(sid, 3, disclosure, caucus=2, behaviour=bluffing)
            assert med is not None
            heard = med.heard()
            believed = med.inferred_acceptable()
            for party, topics in believed.items():
                for topic, options in topics.items():
                    assert options <= heard[party][topic]
            for topic, zone in med.inferred_zone().items():
                for party in heard:
                    assert zone <= heard[party][topic]


def test_the_mediator_can_be_misled_by_a_bluff() -> None:
    liars = {"disclosure.caucus_share": 1.0, "disclosure.caucus_truthfulness": 0.0}
    wrong = 0
    for sid in SCENARIOS:
        for seed in SEEDS:
            _, spies, med = _play(sid, seed, "negotiator", caucus=1, behaviour=liars)
            assert med is not None
            for spy in spies:
                truth = spy.party.hidden_stances()
                believed = med.inferred_acceptable().get(spy.party.party_id, {})
                wrong += sum(
                    bool(options - set(truth[topic].acceptable))
                    for topic, options in believed.items()
                )
    assert wrong > 0


def test_disclosure_is_a_protocol_parameter_that_rejects_unknown_values() -> None:
    from disputelab.protocols.agent_params import agent_settings
    from disputelab.protocols.base import get_protocol

    for name in ("roundtable", "staged"):
        proto = get_protocol(name)
        assert agent_settings(proto.params({})).disclosure == "negotiator"
        assert agent_settings(proto.params({"disclosure": "full"})).disclosure == "full"
        with pytest.raises(ValueError):
            proto.params({"disclosure": "everything"})
    with pytest.raises(ValueError):
        get_protocol("roundtable").params({"caucus": -1})
