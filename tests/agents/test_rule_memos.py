"""The rule agents' memos belong to a run and change no result: an episode played with
every memo cold is the episode played again with them warm, or with memos that keep
forgetting; one run's memos are not another's; and the memoised helpers return what they
stand for."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from disputelab.agents.base import PublicScenario
from disputelab.agents.memos import AgentMemos
from disputelab.agents.parties.rule import RuleParty
from disputelab.agents.parties.rule_memos import ReadMemo, RuleMemos
from disputelab.agents.registry import build_agent, build_parties
from disputelab.episode import Episode, Stance
from disputelab.protocols.play import play as play_protocol
from disputelab.protocols.roundtable.agents import MEDIATOR
from tests.helpers import play, scenario


def _played(ep: Episode) -> list[dict[str, Any]]:
    turns = [t.to_dict() for t in ep.turns]
    for t in turns:
        t.pop("latency_s")
    return turns


def _same(a: Episode, b: Episode) -> None:
    assert _played(a) == _played(b)
    assert a.outcome == b.outcome
    assert a.initial_consensus == b.initial_consensus


@pytest.mark.parametrize("disclosure", ["negotiator", "full"])
@pytest.mark.parametrize("sid", ["tenancy", "workplace", "community-centre"])
def test_an_episode_played_with_cold_memos_is_the_one_played_with_warm_ones(
    sid: str, disclosure: str
) -> None:
    s = scenario(sid)
    # Cold: every episode with memos of its own. Warm: one run's memos for all of them,
    # filled by a first pass and read by a second.
    cold = [play(s, "rule", seed, 60, disclosure) for seed in range(4)]  # type: ignore[arg-type]
    run = AgentMemos()
    for seed in range(4):
        play(s, "rule", seed, 60, disclosure, run)  # type: ignore[arg-type]
    warm = [play(s, "rule", seed, 60, disclosure, run) for seed in range(4)]  # type: ignore[arg-type]
    for a, b in zip(cold, warm, strict=True):
        _same(a, b)


@pytest.mark.parametrize("limit", [1, 2, 7])
def test_memos_that_keep_forgetting_play_the_same_episodes_and_stay_within_their_limit(
    limit: int,
) -> None:
    s = scenario("workplace")
    roomy = [play(s, "rule", seed, 60) for seed in range(3)]
    forgetful = RuleMemos(limit=limit)
    run = AgentMemos(forgetful)
    small = [play(s, "rule", seed, 60, memos=run) for seed in range(3)]
    for a, b in zip(roomy, small, strict=True):
        _same(a, b)
    sizes = forgetful.sizes()
    assert all(n <= limit for n in sizes.values()), sizes
    assert any(n for n in sizes.values())  # they were used


def test_the_parties_of_one_run_share_its_memos_and_another_run_has_its_own() -> None:
    s = scenario("tenancy")
    run, other = AgentMemos(), AgentMemos()
    a = build_parties(s, "rule", 0, memos=run)
    b = build_parties(s, "rule", 1, memos=run)
    c = build_parties(s, "rule", 0, memos=other)
    assert isinstance(a[0], RuleParty) and isinstance(b[0], RuleParty)
    assert isinstance(c[0], RuleParty)
    assert a[0].choice.cand is b[0].choice.cand  # one profile, one run: one set of memos
    assert a[0].choice.cand is not c[0].choice.cand
    assert run.of(RuleMemos) is run.of(RuleMemos) is not other.of(RuleMemos)


def test_a_party_built_without_memos_gets_its_own() -> None:
    s = scenario("tenancy")
    one, two = RuleParty(s, "tenant", 0), RuleParty(s, "tenant", 0)
    assert one.choice.cand is not two.choice.cand
    assert one.hidden_stances() == two.hidden_stances()


@pytest.mark.parametrize("worth", [0.0, -0.0, 0.5, 1 / 3, 0.99995, 1.0, 0.123456789])
def test_worth_words_are_the_four_decimal_format(worth: float) -> None:
    memos = RuleMemos()
    for _ in range(2):  # the second call reads the memo
        assert memos.worth_words(worth) == f"{worth:.4f}"


def test_pooled_stances_are_equal_to_the_stance_asked_for() -> None:
    memos = RuleMemos()
    a = memos.shared_stance(Stance("A", ("A", "B")))
    b = memos.shared_stance(Stance("A", ("A", "B")))
    assert a is b
    assert a == Stance("A", ("A", "B"))
    assert memos.shared_stance(Stance("A", ("A",))) != a


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        RuleMemos(limit=0)


@pytest.mark.parametrize("sid", ["workplace", "community-centre"])
def test_parties_with_memos_of_their_own_may_share_an_episodes_readings(sid: str) -> None:
    """A reading's id names it whichever memos made it: parties built one by one share
    the episode's readings but not their memos, and play what a run's parties play."""
    s = scenario(sid)
    public = PublicScenario.of(s)
    for seed in range(3):
        reads: ReadMemo = {}
        apart = [RuleParty(s, p.id, seed, public, reads) for p in s.parties]
        together = build_parties(s, "rule", seed)
        played = []
        for parties in (apart, together):
            ep = Episode(s.id, "roundtable", seed, {})
            med = build_agent(MEDIATOR, "rule", s, seed)
            asyncio.run(play_protocol("roundtable", s, parties, {"mediator": med}, {}, ep))
            played.append(ep)
        _same(*played)
