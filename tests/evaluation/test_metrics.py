"""Specification tests for the SoCRATES-style mediation metrics.

Trajectories are indexed by party turns: ``trajectory[0]`` is the consensus before anyone
speaks and ``trajectory[t]`` the consensus after party turn ``t``. An intervention at position
``k`` happens after party turn ``k``.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.evaluation.metrics import (
    TOLERANCE,
    MetricResult,
    consensus_gain,
    consensus_score,
    drop_events,
    intervention_effectiveness,
    intervention_timeliness,
    mean_defined,
)

scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
trajectories = st.lists(scores, min_size=0, max_size=30)


@st.composite
def runs(draw: st.DrawFn, min_points: int = 1) -> tuple[list[float], list[int]]:
    """A trajectory plus a valid (possibly empty, possibly repeated) list of positions."""
    trajectory = draw(st.lists(scores, min_size=min_points, max_size=30))
    if not trajectory:
        return trajectory, []
    positions = draw(st.lists(st.integers(min_value=0, max_value=len(trajectory) - 1), max_size=10))
    return trajectory, positions


# --------------------------------------------------------------------------- MetricResult


def test_metric_result_is_defined_exactly_when_value_is_not_nan() -> None:
    assert MetricResult(0.0, "zero").defined
    assert MetricResult(-50.0, "negative").defined
    assert not MetricResult(math.nan, "undefined").defined


def test_metric_result_is_immutable() -> None:
    result = MetricResult(1.0, "one")
    with pytest.raises(AttributeError):
        result.value = 2.0  # type: ignore[misc]


# --------------------------------------------------------------------------- consensus score


def test_consensus_score_is_the_unweighted_mean_over_topics() -> None:
    # (0.2 + 0.4 + 0.9) / 3 = 1.5 / 3 = 0.5
    assert consensus_score([0.2, 0.4, 0.9]) == pytest.approx(0.5)


def test_consensus_score_of_no_topics_is_nan() -> None:
    assert math.isnan(consensus_score([]))


@given(st.lists(scores, min_size=1, max_size=20))
def test_consensus_score_stays_within_the_topic_range(values: list[float]) -> None:
    assert min(values) - 1e-12 <= consensus_score(values) <= max(values) + 1e-12


# --------------------------------------------------------------------------- consensus gain


def test_consensus_gain_is_the_share_of_the_remaining_gap_closed() -> None:
    # (0.7 - 0.4) / (1 - 0.4) * 100 = 0.3 / 0.6 * 100 = 50
    result = consensus_gain(0.7, 0.4)
    assert result.value == pytest.approx(50.0)
    assert result.detail["rule"] == "normalised"


def test_consensus_gain_is_negative_when_mediation_hurts() -> None:
    # (0.2 - 0.6) / (1 - 0.6) * 100 = -0.4 / 0.4 * 100 = -100
    assert consensus_gain(0.2, 0.6).value == pytest.approx(-100.0)


def test_consensus_gain_reports_raw_change_when_unmediated_score_is_one() -> None:
    # 1 - S_unmed = 0 so normalising is impossible: (0.8 - 1.0) * 100 = -20
    result = consensus_gain(0.8, 1.0)
    assert result.value == pytest.approx(-20.0)
    assert result.detail["rule"] == "raw_change"
    assert "raw change" in result.explanation


def test_consensus_gain_treats_unmediated_score_within_tolerance_of_one_as_one() -> None:
    result = consensus_gain(1.0, 1.0 - 1e-12)
    assert result.detail["rule"] == "raw_change"
    assert result.value == pytest.approx(0.0, abs=1e-8)


def test_consensus_gain_is_zero_when_both_runs_reach_full_consensus() -> None:
    assert consensus_gain(1.0, 1.0).value == 0.0


@pytest.mark.parametrize(("s_med", "s_unmed"), [(math.nan, 0.5), (0.5, math.nan)])
def test_consensus_gain_is_nan_when_a_terminal_score_is_missing(
    s_med: float, s_unmed: float
) -> None:
    result = consensus_gain(s_med, s_unmed)
    assert not result.defined
    assert "NaN" in result.explanation


def test_consensus_gain_rejects_scores_outside_the_unit_interval() -> None:
    with pytest.raises(ValueError):
        consensus_gain(1.5, 0.5)


@given(st.floats(min_value=0.0, max_value=1.0 - 1e-8))
def test_consensus_gain_is_100_when_mediated_run_reaches_full_consensus(s_unmed: float) -> None:
    assert consensus_gain(1.0, s_unmed).value == pytest.approx(100.0)


@given(scores)
def test_consensus_gain_is_zero_when_mediation_changes_nothing(s: float) -> None:
    assert consensus_gain(s, s).value == 0.0


@given(scores, scores)
def test_consensus_gain_never_exceeds_100(s_med: float, s_unmed: float) -> None:
    assert consensus_gain(s_med, s_unmed).value <= 100.0 + 1e-9


# --------------------------------------------------------------------------- drop events


def test_drop_events_are_turns_where_consensus_falls_by_at_least_tau() -> None:
    # diffs: t1 +0.1, t2 -0.2 (drop), t3 +0.05, t4 -0.25 (drop), t5 +0.1, t6 0
    assert drop_events([0.5, 0.6, 0.4, 0.45, 0.2, 0.3, 0.3]) == [2, 4]


def test_a_fall_of_exactly_tau_is_a_drop_despite_float_rounding() -> None:
    # 0.4 - 0.5 == -0.09999999999999998 in binary floating point
    assert drop_events([0.5, 0.4], tau=0.1) == [1]


def test_a_fall_just_short_of_tau_is_not_a_drop() -> None:
    assert drop_events([0.5, 0.401], tau=0.1) == []


def test_drop_events_of_empty_or_single_point_trajectory_are_empty() -> None:
    assert drop_events([]) == []
    assert drop_events([0.3]) == []


def test_drop_events_rejects_non_positive_tau_and_out_of_range_scores() -> None:
    with pytest.raises(ValueError):
        drop_events([0.5, 0.1], tau=0.0)
    with pytest.raises(ValueError):
        drop_events([0.5, 1.2])
    with pytest.raises(ValueError):
        drop_events([0.5, math.nan])


@given(trajectories)
def test_drop_events_of_a_non_decreasing_trajectory_is_empty(values: list[float]) -> None:
    assert drop_events(sorted(values)) == []


@given(trajectories, st.floats(min_value=0.01, max_value=1.0))
def test_every_drop_event_is_a_valid_party_turn(values: list[float], tau: float) -> None:
    for t in drop_events(values, tau):
        assert 1 <= t < len(values)
        assert values[t] - values[t - 1] <= -tau + 1e-9


# --------------------------------------------------------------------------- timeliness

# Drops at party turns 2 and 4 (see test_drop_events_are_turns_where_...).
TWO_DROPS = [0.5, 0.6, 0.4, 0.45, 0.2, 0.3, 0.3]


def test_timeliness_scores_each_drop_by_response_delay_and_unanswered_drops_zero() -> None:
    # drop 2 -> first k in [2, 12] is 3: (1 - 1/10) * 100 = 90
    # drop 4 -> k = 3 came before the drop and nothing follows: 0
    # IT = (90 + 0) / 2 = 45
    result = intervention_timeliness(TWO_DROPS, [3])
    assert result.value == pytest.approx(45.0)
    assert result.detail["events"] == [
        {"drop_turn": 2, "response_position": 3, "score": pytest.approx(90.0)},
        {"drop_turn": 4, "response_position": None, "score": 0.0},
    ]


def test_timeliness_is_100_for_an_intervention_right_after_the_drop_turn() -> None:
    # k == t for both drops: (1 - 0/10) * 100 = 100 each
    assert intervention_timeliness(TWO_DROPS, [2, 4]).value == pytest.approx(100.0)


def test_one_intervention_answers_every_drop_whose_window_it_falls_in() -> None:
    # Overlapping windows [2, 12] and [4, 14] both contain k = 5:
    # drop 2: (1 - 3/10) * 100 = 70; drop 4: (1 - 1/10) * 100 = 90; IT = (70 + 90) / 2 = 80
    result = intervention_timeliness(TWO_DROPS, [5])
    assert result.value == pytest.approx(80.0)
    assert [e["response_position"] for e in result.detail["events"]] == [5, 5]


def test_timeliness_uses_the_earliest_intervention_in_the_window() -> None:
    # Positions arrive unsorted; for drop 2 the earliest in-window one is 3, for drop 4 it is 6.
    # drop 2: (1 - 1/10) * 100 = 90; drop 4: (1 - 2/10) * 100 = 80; IT = 85
    result = intervention_timeliness(TWO_DROPS, [6, 3])
    assert result.value == pytest.approx(85.0)
    assert [e["response_position"] for e in result.detail["events"]] == [3, 6]


def test_timeliness_window_edges_are_inclusive_and_the_far_edge_scores_zero() -> None:
    trajectory = [0.8, 0.8, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]  # single drop at turn 2
    # window 4: k = 6 is t + window -> (1 - 4/4) * 100 = 0 but still counted as the response
    at_edge = intervention_timeliness(trajectory, [6], window=4)
    assert at_edge.value == 0.0
    assert at_edge.detail["events"][0]["response_position"] == 6
    # k = 7 lies beyond the window -> no response
    beyond = intervention_timeliness(trajectory, [7], window=4)
    assert beyond.detail["events"][0]["response_position"] is None
    # k = 3 with window 4 -> (1 - 1/4) * 100 = 75
    assert intervention_timeliness(trajectory, [3], window=4).value == pytest.approx(75.0)


def test_timeliness_ignores_interventions_before_the_drop() -> None:
    trajectory = [0.8, 0.8, 0.5]  # drop at turn 2
    assert intervention_timeliness(trajectory, [0, 1]).value == 0.0


def test_timeliness_is_nan_when_there_are_no_drop_events() -> None:
    # Nothing to respond to: the run is excluded from averages, not scored 0 or 100.
    result = intervention_timeliness([0.2, 0.3, 0.25, 0.4], [1, 2])
    assert not result.defined
    assert "no drop events" in result.explanation


def test_timeliness_scores_zero_per_drop_for_a_mediated_run_without_interventions() -> None:
    result = intervention_timeliness(TWO_DROPS, [])
    assert result.value == 0.0
    assert [e["score"] for e in result.detail["events"]] == [0.0, 0.0]


def test_timeliness_of_an_empty_dialogue_is_nan() -> None:
    result = intervention_timeliness([], [])
    assert not result.defined
    assert "empty dialogue" in result.explanation


def test_timeliness_rejects_positions_outside_the_trajectory() -> None:
    with pytest.raises(ValueError):
        intervention_timeliness(TWO_DROPS, [len(TWO_DROPS)])
    with pytest.raises(ValueError):
        intervention_timeliness(TWO_DROPS, [-1])


def test_timeliness_rejects_a_non_positive_window() -> None:
    with pytest.raises(ValueError):
        intervention_timeliness(TWO_DROPS, [2], window=0)


@given(runs(min_points=0), st.integers(min_value=1, max_value=15))
def test_timeliness_is_within_0_and_100_or_nan(
    run: tuple[list[float], list[int]], window: int
) -> None:
    trajectory, positions = run
    result = intervention_timeliness(trajectory, positions, window=window)
    assert not result.defined or 0.0 <= result.value <= 100.0
    assert result.defined == bool(drop_events(trajectory))


@given(trajectories)
def test_intervening_at_every_drop_turn_gives_perfect_timeliness(values: list[float]) -> None:
    drops = drop_events(values)
    result = intervention_timeliness(values, drops)
    assert not result.defined or result.value == pytest.approx(100.0)


# --------------------------------------------------------------------------- effectiveness

# 9 points = 8 party turns; the last index is 8.
RECOVERY = [0.0, 0.2, 0.4, 0.4, 0.5, 0.6, 0.8, 0.7, 0.7]


def test_effectiveness_is_the_share_of_the_gap_closed_after_the_horizon() -> None:
    # k = 1: base 0.2, after = trajectory[6] = 0.8 -> (0.8 - 0.2) / (1 - 0.2) * 100 = 75
    result = intervention_effectiveness(RECOVERY, [1])
    assert result.value == pytest.approx(75.0)
    assert result.detail["events"][0]["after_turn"] == 6


def test_an_intervention_in_the_last_five_turns_uses_the_terminal_score() -> None:
    # k = 6: 6 + 5 = 11 > 8, so after = trajectory[8] = 0.7 (the trajectory is frozen)
    # (0.7 - 0.8) / (1 - 0.8) * 100 = -0.1 / 0.2 * 100 = -50
    result = intervention_effectiveness(RECOVERY, [6])
    assert result.value == pytest.approx(-50.0)
    event = result.detail["events"][0]
    assert event["after_turn"] == 8
    assert event["truncated"] is True


def test_effectiveness_averages_over_interventions() -> None:
    # (75 + -50) / 2 = 12.5
    assert intervention_effectiveness(RECOVERY, [1, 6]).value == pytest.approx(12.5)


def test_an_intervention_after_the_last_party_turn_scores_zero() -> None:
    # k = 8 is the terminal point: base = after = 0.7 -> 0
    assert intervention_effectiveness(RECOVERY, [8]).value == 0.0


def test_effectiveness_skips_interventions_whose_base_is_already_one() -> None:
    # horizon 1: k = 1 has base 1.0 -> skipped; k = 2: (0.9 - 0.8) / (1 - 0.8) * 100 = 50
    result = intervention_effectiveness([0.5, 1.0, 0.8, 0.9], [1, 2], horizon=1)
    assert result.value == pytest.approx(50.0)
    skipped, scored = result.detail["events"]
    assert skipped["score"] is None
    assert "no room to improve" in skipped["skipped"]
    assert scored["skipped"] is None


def test_effectiveness_is_nan_when_every_intervention_is_skipped() -> None:
    result = intervention_effectiveness([1.0, 1.0, 0.9], [0, 1])
    assert not result.defined
    assert "no room to improve" in result.explanation
    assert len(result.detail["events"]) == 2


def test_effectiveness_is_nan_without_interventions() -> None:
    result = intervention_effectiveness(RECOVERY, [])
    assert not result.defined
    assert "no interventions" in result.explanation


def test_effectiveness_of_an_empty_dialogue_is_nan() -> None:
    result = intervention_effectiveness([], [])
    assert not result.defined
    assert "empty dialogue" in result.explanation


@pytest.mark.parametrize("position", [-1, len(RECOVERY)])
def test_effectiveness_rejects_positions_outside_the_trajectory(position: int) -> None:
    with pytest.raises(ValueError):
        intervention_effectiveness(RECOVERY, [position])


def test_effectiveness_rejects_a_non_positive_horizon() -> None:
    with pytest.raises(ValueError):
        intervention_effectiveness(RECOVERY, [1], horizon=0)


@given(runs(), st.integers(min_value=1, max_value=10))
def test_effectiveness_never_exceeds_100(run: tuple[list[float], list[int]], horizon: int) -> None:
    trajectory, positions = run
    result = intervention_effectiveness(trajectory, positions, horizon=horizon)
    assert not result.defined or result.value <= 100.0
    for event in result.detail.get("events", []):
        assert event["score"] is None or event["score"] <= 100.0


@given(runs())
def test_effectiveness_on_a_non_decreasing_trajectory_is_non_negative(
    run: tuple[list[float], list[int]],
) -> None:
    trajectory, positions = run
    result = intervention_effectiveness(sorted(trajectory), positions)
    assert not result.defined or result.value >= 0.0


@given(runs(), st.integers(min_value=1, max_value=10))
def test_effectiveness_keeps_its_documented_contract(
    run: tuple[list[float], list[int]], horizon: int
) -> None:
    # The docstring, event by event: base trajectory[k], outcome at min(k + horizon, T),
    # score (after - base) / (1 - base) * 100 unless base is 1 (skipped, with the reason);
    # the value is the mean of the scores, NaN when none was scored or none was given.
    trajectory, positions = run
    result = intervention_effectiveness(trajectory, positions, horizon=horizon)
    if not trajectory or not positions:
        assert not result.defined
        return
    last = len(trajectory) - 1
    events = result.detail["events"]
    assert result.detail["horizon"] == horizon
    assert [e["position"] for e in events] == positions
    for k, event in zip(positions, events, strict=True):
        after_turn = min(k + horizon, last)
        base, after = trajectory[k], trajectory[after_turn]
        assert (event["base"], event["after_turn"], event["after"]) == (base, after_turn, after)
        assert event["truncated"] is (k + horizon > last)
        if base >= 1.0 - TOLERANCE:
            assert event["score"] is None and "no room to improve" in event["skipped"]
        else:
            assert event["score"] == pytest.approx((after - base) / (1.0 - base) * 100.0)
            assert event["skipped"] is None
    scored = [e["score"] for e in events if e["score"] is not None]
    if scored:
        assert result.value == pytest.approx(math.fsum(scored) / len(scored))
    else:
        assert not result.defined and "no room to improve" in result.explanation


# --------------------------------------------------------------------------- aggregation


def test_mean_defined_averages_only_defined_runs() -> None:
    # NaN runs (e.g. IT without drops) are excluded: (45 + 80) / 2 = 62.5
    results = [
        MetricResult(45.0, "run a"),
        MetricResult(math.nan, "undefined: no drop events."),
        MetricResult(80.0, "run c"),
    ]
    aggregate = mean_defined(results)
    assert aggregate.value == pytest.approx(62.5)
    assert aggregate.detail["n_runs"] == 3
    assert aggregate.detail["n_defined"] == 2
    assert aggregate.detail["excluded"] == ["undefined: no drop events."]


def test_mean_defined_is_nan_when_no_run_is_defined() -> None:
    aggregate = mean_defined([MetricResult(math.nan, "undefined: no interventions.")])
    assert not aggregate.defined
    assert "none of the 1" in aggregate.explanation


def test_mean_defined_of_nothing_is_nan() -> None:
    aggregate = mean_defined([])
    assert not aggregate.defined
    assert "no results" in aggregate.explanation


def test_mean_defined_accepts_any_iterable() -> None:
    assert mean_defined(MetricResult(v, "r") for v in (10.0, 20.0)).value == pytest.approx(15.0)


# --------------------------------------------------------------------------- serialisation


@given(runs(min_points=0))
def test_every_result_detail_is_json_serialisable(run: tuple[list[float], list[int]]) -> None:
    trajectory, positions = run
    results = [
        intervention_timeliness(trajectory, positions),
        intervention_effectiveness(trajectory, positions),
        consensus_gain(trajectory[-1] if trajectory else math.nan, 0.5),
    ]
    results.append(mean_defined(results))
    for result in results:
        json.dumps(result.detail, allow_nan=False)
        assert result.explanation.strip()
