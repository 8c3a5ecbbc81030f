"""ProMediate's metrics on hand-worked trajectories, with the code's edge cases fixed."""

from __future__ import annotations

import math

import pytest

from disputelab.evaluation.promediate import (
    consensus_change,
    mediator_effectiveness,
    mediator_intelligence,
    response_latency,
    topic_level_efficiency,
)


def test_consensus_change_is_last_ten_minus_first_ten() -> None:
    c = [0.1] * 10 + [0.5] * 5 + [0.4] * 10
    # first 10: 0.1; last 10: 0.4 -> +30 points
    assert consensus_change(c).value == pytest.approx(30.0)
    assert math.isnan(consensus_change([0.5] * 9).value)


def test_topic_level_efficiency_uses_the_mentioning_lines() -> None:
    series = {"rent": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]}
    mentions = {"rent": [1, 3, 5, 7, 9]}  # values 0.1 .. 0.9, n = 5, k = 1
    # (0.9 - 0.1) / 5 = 0.16 -> 16 points
    r = topic_level_efficiency(series, mentions)
    assert r.value == pytest.approx(16.0)
    few = topic_level_efficiency(series, {"rent": [1, 2]})
    assert math.isnan(few.value) and "fewer than 5" in few.detail["skipped"]["rent"]


def test_response_latency_counts_lines_to_the_next_mediator_turn() -> None:
    c = [0.5] * 10 + [0.3] + [0.3] * 5
    # drop at i = 10 (0.5 - 0.3 = 0.2 > 0.1), also at 11..15 against 0.5 ten lines back
    r = response_latency(c, mediator_lines=[12])
    assert r.detail["drops"] == [10, 11, 12, 13, 14, 15]
    assert r.value == math.inf  # drops after line 12 are never answered
    answered = response_latency(c[:12], mediator_lines=[12, 13])
    assert answered.value == pytest.approx((2 + 1) / 2)
    assert math.isnan(response_latency([0.5] * 30, [3]).value)


def test_mediator_effectiveness_two_point_slopes() -> None:
    c = {"rent": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5]}
    # t = 6: before (0.0 - 0.0)/5 = 0, after (0.5 - 0.0)/5 = 0.1 -> 10 points
    r = mediator_effectiveness(c, [(6, ["rent"]), (2, ["rent"]), (6, ["unknown"])])
    assert r.value == pytest.approx(10.0)
    assert len(r.detail["skipped"]) == 2


def test_mediator_intelligence_skips_interventions_where_nothing_applies() -> None:
    ratings = [
        {
            "perception_alignment": 5,
            "emotional_dynamics": 3,
            "cognitive_challenges": -1,
            "communication_breakdowns": -1,
        },
        {
            d: -1
            for d in (
                "perception_alignment",
                "emotional_dynamics",
                "cognitive_challenges",
                "communication_breakdowns",
            )
        },
        {
            "perception_alignment": 2,
            "emotional_dynamics": 2,
            "cognitive_challenges": 2,
            "communication_breakdowns": 2,
        },
    ]
    r = mediator_intelligence(ratings)
    assert r.value == pytest.approx((4 + 2) / 2)
    assert r.detail["no_dimension_applied"] == 1


def test_the_promediate_evaluator_reads_mentions_from_the_structure() -> None:
    from disputelab.evaluation.evaluators import promediate_scores, topic_mentions
    from disputelab.evaluation.trackers import oracle
    from tests.helpers import play, scenario

    s = scenario("workplace")
    ep = play(s, "rule", seed=0, budget=40)
    mentions = topic_mentions(ep)
    # Every party states every topic on its first turn, so turns 1-3 mention them all.
    assert all(m[:3] == [1, 2, 3] for m in mentions.values())
    scores = promediate_scores(oracle(ep, s), ep)
    assert set(scores) == {
        "consensus_change",
        "topic_level_efficiency",
        "response_latency",
        "mediator_effectiveness",
    }
    assert scores["consensus_change"].defined and scores["topic_level_efficiency"].defined
