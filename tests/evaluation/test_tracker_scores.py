"""SoCRATES's timeliness and effectiveness on a tracker that is undefined at first (the
self-report tracker has no value until every party has spoken): the undefined states are
dropped, never counted as zero consensus."""

from __future__ import annotations

import math

from disputelab.episode import Episode, Turn
from disputelab.evaluation.evaluators import tracker_scores
from disputelab.evaluation.metrics import intervention_effectiveness
from disputelab.evaluation.trackers import Trajectory

NAN = math.nan


def _episode(mediator_after: list[int], party_turns: int) -> Episode:
    ep = Episode("s", "roundtable", 0, {"mediator": "rule"})
    i = 0
    for k in range(1, party_turns + 1):
        ep.turns.append(Turn(i, k, "a" if k % 2 else "b", "party", "..."))
        i += 1
        if k in mediator_after:
            ep.turns.append(Turn(i, k, "mediator", "mediator", "..."))
            i += 1
    return ep


def test_an_intervention_before_the_tracker_had_a_value_is_left_out_not_scored_from_zero() -> None:
    # S_0..S_1 undefined (one party has not spoken), then defined.
    states = [NAN, NAN, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.8, 0.8]
    traj = Trajectory({"t": states})
    ep = _episode(mediator_after=[1, 3], party_turns=9)
    ie = tracker_scores(traj, ep, None)["intervention_effectiveness"]
    # Only the intervention after party turn 3 counts, measured on the defined states.
    assert ie.value == intervention_effectiveness(states[2:], [1]).value
    assert ie.detail["left_out"] == [1] and ie.detail["dropped"] == 2
    assert "undefined and dropped" in ie.explanation
    # With the old 0-fill the early one scored as if consensus had risen from nothing.
    filled = intervention_effectiveness([0.0 if v != v else v for v in states], [1, 3]).value
    assert filled > ie.value


def test_a_fully_defined_trajectory_scores_as_before() -> None:
    states = [0.5, 0.5, 0.4, 0.3, 0.5, 0.6, 0.7, 0.8]
    ep = _episode(mediator_after=[3], party_turns=7)
    scores = tracker_scores(Trajectory({"t": states}), ep, None)
    assert (
        scores["intervention_effectiveness"].value == intervention_effectiveness(states, [3]).value
    )
    assert "dropped" not in scores["intervention_effectiveness"].detail


def test_a_value_lost_mid_dialogue_leaves_both_undefined_with_the_reason() -> None:
    states = [0.5, 0.5, NAN, 0.5]
    scores = tracker_scores(Trajectory({"t": states}), _episode([1], 3), None)
    for m in ("intervention_timeliness", "intervention_effectiveness"):
        assert math.isnan(scores[m].value) and "mid-dialogue" in scores[m].explanation


def test_no_consensus_to_score_says_whether_the_case_had_no_topics_or_no_dialogue() -> None:
    # A bilateral deal has no topics: its dialogue is not empty, and is not called so.
    no_topics = tracker_scores(Trajectory({}), _episode([], 4), None)["final_consensus"]
    assert math.isnan(no_topics.value) and "no topics" in no_topics.explanation
    silent = tracker_scores(Trajectory({"t": []}), _episode([], 0), None)["final_consensus"]
    assert math.isnan(silent.value) and "empty dialogue" in silent.explanation
    failed = Trajectory({"t": []}, failure="judge failed: timeout")
    assert (
        "judge failed"
        in tracker_scores(failed, _episode([], 4), None)["final_consensus"].explanation
    )
