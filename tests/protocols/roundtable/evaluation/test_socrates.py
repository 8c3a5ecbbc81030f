"""Scoring an episode: the oracle trajectory and the three SoCRATES metrics on top of it."""

from __future__ import annotations

import math

from disputelab.consensus import consensus_by_topic, consensus_score, topic_consensus
from disputelab.episode import Episode, Stance
from disputelab.protocols.roundtable.evaluation.socrates import oracle_trajectory, score_episode
from tests.helpers import play, scenario


def test_topic_consensus_levels_for_two_and_three_parties() -> None:
    apart = [Stance("A", ("A",)), Stance("B", ("B",))]
    could = [Stance("A", ("A", "B")), Stance("B", ("B",))]
    same = [Stance("B", ("B",)), Stance("B", ("A", "B"))]
    assert [topic_consensus(x) for x in (apart, could, same)] == [0.0, 0.5, 1.0]
    three = [Stance("A", ("A", "C")), Stance("B", ("B", "C")), Stance("C", ("C",))]
    # all three would accept C (1.0), no two back the same option (0.0): (1.0 + 0.0) / 2
    assert topic_consensus(three) == 0.5


def test_a_party_with_no_stated_stance_agrees_with_nobody() -> None:
    assert topic_consensus([Stance("A", ("A",)), None]) == 0.0
    assert topic_consensus([Stance("A", ("A",)), Stance(None, ())]) == 0.0
    assert topic_consensus([]) == 0.0


def test_oracle_trajectory_has_one_point_per_party_turn_plus_the_start() -> None:
    ep = play(scenario("workplace"), "rule", seed=1)
    traj = oracle_trajectory(ep)
    assert traj is not None
    assert len(traj) == ep.party_turns + 1
    assert traj[0] == consensus_score(ep.initial_consensus or {})


def test_self_reported_stances_of_rule_parties_reproduce_the_oracle() -> None:
    # Only under full disclosure do rule parties state their hidden stances; as
    # negotiators (the default) they keep their acceptable sets private (issue 14).
    s = scenario("community-centre")
    ep = play(s, "rule", seed=2, disclosure="full")
    latest: dict[str, dict[str, Stance]] = {}
    for t in ep.turns:
        if t.action is None:
            continue
        latest[t.speaker] = t.action.stances
        if len(latest) == len(s.parties):
            stated = consensus_by_topic([x.id for x in s.topics], list(latest.values()))
            assert stated == t.consensus


def test_a_mediated_episode_gets_gain_timeliness_and_effectiveness() -> None:
    med = play(scenario("workplace"), "rule", seed=0)
    base = play(scenario("workplace"), "none", seed=0)
    scores = score_episode(med, base)
    for name in ("consensus_gain", "intervention_timeliness", "intervention_effectiveness"):
        assert name in scores
    assert scores["consensus_gain"].defined
    assert scores["interventions"].value == len(med.intervention_positions())


def test_without_a_matched_baseline_consensus_gain_is_nan_with_a_reason() -> None:
    med = play(scenario("workplace"), "rule", seed=0)
    r = score_episode(med, None)["consensus_gain"]
    assert math.isnan(r.value) and "no matched unmediated episode" in r.explanation


def test_an_unmediated_episode_gets_no_mediator_metrics() -> None:
    scores = score_episode(play(scenario("tenancy"), "none", seed=0), None)
    assert "consensus_gain" not in scores and scores["final_consensus"].defined


def test_an_empty_episode_without_oracle_scores_nan_not_zero() -> None:
    ep = Episode("tenancy", "roundtable", 0, {"mediator": "rule"})
    assert oracle_trajectory(ep) is None
    assert math.isnan(score_episode(ep, None)["final_consensus"].value)
