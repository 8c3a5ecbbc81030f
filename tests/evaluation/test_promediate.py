"""ProMediate's metrics on hand-worked trajectories, with the code's edge cases fixed."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.episode import Action, Episode, Intervention, Stance, Turn
from disputelab.evaluation.promediate import (
    PROMEDIATE_METRICS,
    consensus_change,
    episode_events,
    mediator_effectiveness,
    mediator_intelligence,
    on_dialogue_lines,
    promediate_scores,
    response_latency,
    topic_level_efficiency,
)
from disputelab.evaluation.trackers import Trajectory, oracle
from tests.helpers import play, scenario


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
    c = {"rent": [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}
    # 12 lines; t = 6: before (0.0 - 0.0)/5 = 0, after (0.5 - 0.0)/5 = 0.1 -> 10 points
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


unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


# ---- the end boundary of ME, as the released code draws it --------------------------
def _ramp(lines: int) -> dict[str, list[float]]:
    return {"rent": [i / lines for i in range(lines + 1)]}


def test_an_intervention_five_lines_before_the_end_is_not_scored() -> None:
    # 20 lines, 21 states: the released code skips t >= 20 - 5, though C[20] exists.
    r = mediator_effectiveness(_ramp(20), [(15, ["rent"])])
    assert math.isnan(r.value)
    assert "too near an end" in r.detail["skipped"][0]


def test_an_intervention_six_lines_before_the_end_is_scored() -> None:
    c = {"rent": [0.0] * 21}  # 20 lines
    c["rent"][19] = 0.5
    # t = 14: before (C[14] - C[9]) / 5 = 0, after (C[19] - C[14]) / 5 = 0.1 -> 10 points
    assert mediator_effectiveness(c, [(14, ["rent"])]).value == pytest.approx(10.0)


def test_the_start_boundary_skips_line_five_and_scores_line_six() -> None:
    assert math.isnan(mediator_effectiveness(_ramp(20), [(5, ["rent"])]).value)
    assert mediator_effectiveness(_ramp(20), [(6, ["rent"])]).defined


@given(st.integers(min_value=1, max_value=40), st.data())
def test_an_intervention_is_scored_exactly_when_five_lines_lie_strictly_beyond_either_end(
    lines: int, data: st.DataObject
) -> None:
    t = data.draw(st.integers(min_value=0, max_value=lines))
    scored = mediator_effectiveness(_ramp(lines), [(t, ["rent"])]).defined
    assert scored == (5 < t < lines - 5)


# ---- undefined states are dropped, never filled -------------------------------------
def test_consensus_change_drops_undefined_states_instead_of_counting_them_as_zero() -> None:
    defined = [0.5] * 10 + [0.9] * 10
    r = consensus_change([math.nan] * 3 + defined)
    # Filled with 0, the first window would be 0.35 and CC 55; dropped, it is 40.
    assert r.value == pytest.approx(40.0)
    assert r.detail["undefined_dropped"] == 3


def test_consensus_change_needs_ten_defined_states() -> None:
    r = consensus_change([math.nan] * 5 + [0.5] * 9)
    assert math.isnan(r.value) and "9 defined states" in r.explanation


def test_a_mention_at_an_undefined_state_is_not_counted() -> None:
    series = {"rent": [math.nan, math.nan, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}
    r = topic_level_efficiency(series, {"rent": [1, 2, 3, 4, 5, 6, 7]})
    # the mention at line 1 is dropped: 6 mentions, k = 1: (0.6 - 0.1) / 6
    assert r.value == pytest.approx(100 * 0.5 / 6)
    assert r.detail["undefined_dropped"] == {"rent": 1}


def test_a_mention_outside_the_trajectory_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="line 9"):
        topic_level_efficiency({"rent": [0.0] * 5}, {"rent": [1, 9]})


def test_an_intervention_meeting_an_undefined_state_is_left_out_with_the_reason() -> None:
    c = {"rent": [0.0] * 8 + [math.nan] + [0.0] * 12}
    r = mediator_effectiveness(c, [(8, ["rent"])])
    assert math.isnan(r.value) and "undefined" in r.detail["skipped"][0]


@given(
    st.lists(unit, min_size=12, max_size=40),
    st.integers(min_value=1, max_value=6),
    st.data(),
)
def test_an_undefined_prefix_changes_no_metric_once_positions_are_shifted_by_it(
    series: list[float], n: int, data: st.DataObject
) -> None:
    padded = [math.nan] * n + series
    lines = len(series) - 1
    mediators = data.draw(st.lists(st.integers(1, lines), max_size=4, unique=True))
    mentions = data.draw(st.lists(st.integers(0, lines), min_size=5, max_size=15, unique=True))
    t = data.draw(st.integers(0, lines))

    def same(a: float, b: float) -> bool:
        return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b)

    assert same(consensus_change(padded).value, consensus_change(series).value)
    assert same(
        response_latency(padded, [m + n for m in mediators]).value,
        response_latency(series, mediators).value,
    )
    assert same(
        mediator_effectiveness({"x": padded}, [(t + n, ["x"])]).value,
        mediator_effectiveness({"x": series}, [(t, ["x"])]).value,
    )
    shifted = sorted(m + n for m in mentions)
    assert same(
        topic_level_efficiency({"x": padded}, {"x": shifted}).value,
        topic_level_efficiency({"x": series}, {"x": sorted(mentions)}).value,
    )


# ---- read from an episode: every dialogue line counts -------------------------------
def _dialogue() -> tuple[Episode, Trajectory]:
    """Twelve party turns of A and B, the mediator after party turns 3 and 6 proposing on
    rent; the consensus after party turn k is k/10, capped at 1."""
    ep = Episode("hand", "roundtable", 0, {"parties": "rule", "mediator": "rule"})
    for k in range(1, 13):
        speaker = "A" if k % 2 else "B"
        if speaker == "B":
            stance = Stance("y", ("y",))
        else:  # A widens what it accepts at party turn 7 and keeps to it
            stance = Stance("x", ("x", "y")) if k >= 7 else Stance("x", ("x",))
        action = Action("...", {"rent": stance})
        ep.turns.append(Turn(len(ep.turns), k, speaker, "party", "...", action=action))
        if k in (3, 6):
            move = Intervention("try x", {"rent": "x"})
            ep.turns.append(Turn(len(ep.turns), k, "med", "mediator", "...", intervention=move))
    return ep, Trajectory({"rent": [min(k / 10, 1.0) for k in range(13)]})


def test_metrics_are_indexed_by_dialogue_line_with_mediator_lines_included() -> None:
    ep, traj = _dialogue()
    # Lines 4 and 8 are the mediator's and repeat the state before them:
    # 0 .1 .2 .3 .3 .4 .5 .6 .6 .7 .8 .9 1 1 1
    scores = promediate_scores(traj, ep)
    # first ten sum 3.7, last ten 7.5
    assert scores["consensus_change"].value == pytest.approx(38.0)
    # 14 lines: only t = 7 (the line-8 intervention) lies strictly inside 5 < t < 9;
    # before (C[7] - C[2]) / 5 = 0.08, after (C[12] - C[7]) / 5 = 0.08
    me = scores["mediator_effectiveness"]
    assert me.value == pytest.approx(0.0) and me.detail["per_intervention"] == [pytest.approx(0)]


def test_the_party_turn_clock_is_an_explicit_option_that_leaves_mediator_lines_out() -> None:
    ep, traj = _dialogue()
    scores = promediate_scores(traj, ep, index_by="party-turn")
    # 0 .1 ... 1 1 1: first ten 4.5, last ten 7.2
    assert scores["consensus_change"].value == pytest.approx(27.0)
    # 12 party turns: t = 6 is scored; before (.6 - .1) / 5, after (1 - .6) / 5
    assert scores["mediator_effectiveness"].value == pytest.approx(100 * (0.08 - 0.1))
    with pytest.raises(ValueError, match="index_by"):
        promediate_scores(traj, ep, index_by="turn")  # type: ignore[arg-type]


def test_events_sit_on_the_chosen_clock() -> None:
    ep, _ = _dialogue()
    lines = episode_events(ep, ["rent"], "dialogue-line")
    assert lines.mediator_lines == [4, 8]
    assert lines.interventions == [(3, ["rent"]), (7, ["rent"])]
    # A and B state rent at lines 1 and 2, the mediator proposes at 4 and 8, A moves at
    # party turn 7 (line 9)
    assert lines.mentions == {"rent": [1, 2, 4, 8, 9]}
    turns = episode_events(ep, ["rent"], "party-turn")
    assert turns.mediator_lines == [4, 7]
    assert turns.interventions == [(3, ["rent"]), (6, ["rent"])]
    assert turns.mentions == {"rent": [1, 2, 3, 6, 7]}


def test_undefined_states_of_a_tracker_are_dropped_before_scoring() -> None:
    ep, traj = _dialogue()
    traj.by_topic["rent"][:2] = [math.nan, math.nan]  # as self-report before B spoke
    cc = promediate_scores(traj, ep)["consensus_change"]
    # the line series without its first two states: .2 .3 .3 .4 .5 .6 .6 .7 .8 .9 | 1 1 1
    assert cc.value == pytest.approx(100 * (7.5 / 10 - 5.3 / 10))
    assert cc.detail["undefined_dropped"] == 2


def test_a_trajectory_of_the_wrong_length_is_refused() -> None:
    ep, traj = _dialogue()
    traj.by_topic["rent"].append(1.0)
    with pytest.raises(ValueError, match="14 states"):
        on_dialogue_lines(traj.by_topic["rent"], ep)


def test_a_tracker_failure_leaves_every_metric_undefined_with_its_reason() -> None:
    ep, traj = _dialogue()
    traj.failure = "judge failed: timeout"
    scores = promediate_scores(traj, ep)
    assert set(scores) == set(PROMEDIATE_METRICS)
    assert all("judge failed" in r.explanation and not r.defined for r in scores.values())


def test_on_a_played_episode_the_line_series_follows_the_recorded_consensus() -> None:
    s = scenario("workplace")
    ep = play(s, "rule", seed=0, budget=40)
    assert ep.intervention_positions(), "the rule mediator should speak in 40 turns"
    line_series = on_dialogue_lines(oracle(ep, s).overall(), ep)
    assert ep.initial_consensus is not None
    expected = [sum(ep.initial_consensus.values()) / len(ep.initial_consensus)]
    for turn in ep.turns:  # a mediator line carries the parties' state unchanged
        c = turn.consensus
        expected.append(sum(c.values()) / len(c) if c is not None else expected[-1])
    assert line_series == pytest.approx(expected)
    mentions = episode_events(ep, [t.id for t in s.topics], "dialogue-line").mentions
    # Every party states every topic on its first turn, so lines 1-3 mention them all.
    assert all(m[:3] == [1, 2, 3] for m in mentions.values())
    scores = promediate_scores(oracle(ep, s), ep)
    assert scores["consensus_change"].defined and scores["topic_level_efficiency"].defined
