"""The statistics of judge validation, on examples computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from disputelab.evaluation.trackers import Trajectory
from disputelab.evaluation.validation import (
    align,
    calibration_error,
    correlation,
    fit_tracker,
    level_of,
    mean_absolute_error,
    median_monotone_fit,
    monotone_fit,
    ordinal_alpha,
    weighted_kappa,
)

NAN = math.nan


@pytest.mark.parametrize(
    ("value", "level"),
    [
        *[(0.0, 0), (0.12, 0), (0.125, 1), (0.25, 1), (0.5, 2), (0.75, 3), (1.0, 4)],
        *[(1 / 6, 1), (2 / 6, 1), (4 / 6, 3), (5 / 6, 3)],  # four parties' sixths
    ],
)
def test_values_round_to_the_nearest_of_five_levels(value: float, level: int) -> None:
    assert level_of(value) == level


def test_pearson_and_spearman_match_a_hand_computation() -> None:
    xs, ys = [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 5.0]
    # dx = -1.5 -.5 .5 1.5, dy = -1.75 -.75 .25 2.25: 6.5 / sqrt(5 * 8.75)
    r = correlation(xs, ys, [0, 0, 0, 0], "pearson")
    assert r.value == pytest.approx(6.5 / math.sqrt(5 * 8.75))
    assert math.isnan(r.low) and "one episode" in r.why  # one cluster: no interval
    assert correlation(xs, ys, [0, 0, 0, 0], "spearman").value == pytest.approx(1.0)


def test_a_correlation_is_nan_with_its_reason_never_zero() -> None:
    few = correlation([0.1, 0.2], [0.1, 0.3], [0, 1])
    assert math.isnan(few.value) and "at least 3" in few.why
    flat = correlation([0.1, 0.2, 0.3], [0.5, 0.5, 0.5], [0, 1, 2])
    assert math.isnan(flat.value) and "oracle is constant" in flat.why
    flat = correlation([0.5, 0.5, 0.5], [0.1, 0.2, 0.3], [0, 1, 2])
    assert math.isnan(flat.value) and "tracker is constant" in flat.why


def test_the_interval_resamples_episodes_not_points() -> None:
    # Two episodes: in each the tracker rises with the oracle. A resample of one episode
    # twice still has r = 1, so every resample gives 1: [1, 1].
    xs = [0.0, 0.5, 1.0, 0.0, 0.5, 1.0]
    ys = [0.0, 0.25, 0.5, 0.0, 0.25, 0.5]
    r = correlation(xs, ys, [0, 0, 0, 1, 1, 1], resamples=200)
    assert r.value == pytest.approx(1.0) and r.low == pytest.approx(1.0) and not r.why
    # Episodes that disagree widen the interval; the same seed gives the same interval.
    ys2 = [0.0, 0.25, 0.5, 0.5, 0.25, 0.0]
    a = correlation(xs, ys2, [0, 0, 0, 1, 1, 1], resamples=200)
    b = correlation(xs, ys2, [0, 0, 0, 1, 1, 1], resamples=200)
    assert a == b and a.low < a.value < a.high


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0, 1), st.floats(0, 1), st.integers(0, 4)), min_size=3, max_size=30
    )
)
def test_an_interval_lies_in_minus_one_to_one_around_its_r(
    rows: list[tuple[float, float, int]],
) -> None:
    xs, ys, cs = (list(c) for c in zip(*rows, strict=True))
    r = correlation(xs, ys, cs, resamples=100)
    if math.isnan(r.value):
        assert r.why
        return
    assert -1.0 - 1e-9 <= r.value <= 1.0 + 1e-9
    if not math.isnan(r.low):
        assert -1.0 - 1e-9 <= r.low <= r.high <= 1.0 + 1e-9
    else:
        assert r.why


def test_quadratic_kappa_matches_a_hand_computation() -> None:
    # Oracle levels 0 1 2, tracker levels 0 2 2. Observed weighted disagreement
    # (i-j)^2: (0 + 1 + 0) / 3. Expected from the marginals (1/3 1/3 1/3 and 1/3 0 2/3):
    # 4*2/9 + 1/9 + 2/9 + 4/9 = 15/9. kappa = 1 - (1/3) / (15/9) = 0.8.
    k = weighted_kappa([0.0, 0.5, 0.5], [0.0, 0.25, 0.5])
    assert k.value == pytest.approx(0.8)
    assert weighted_kappa([0.0, 0.5, 1.0], [0.0, 0.5, 1.0]).value == pytest.approx(1.0)


def test_kappa_and_alpha_are_nan_with_a_reason_when_undefined() -> None:
    same = weighted_kappa([0.5, 0.5], [0.5, 0.5])
    assert math.isnan(same.value) and "one and the same level" in same.why
    assert "no aligned points" in weighted_kappa([], []).why
    one = ordinal_alpha([0.5, 0.5], [0.5, 0.5])
    assert math.isnan(one.value) and "one level" in one.why


def test_ordinal_alpha_is_one_on_agreement_and_below_on_disagreement() -> None:
    assert ordinal_alpha([0.0, 0.5, 1.0], [0.0, 0.5, 1.0]).value == pytest.approx(1.0)
    assert ordinal_alpha([1.0, 0.5, 0.0], [0.0, 0.5, 1.0]).value < 0


_grid = st.integers(0, 20).map(lambda i: i / 20)  # values a rescaling keeps apart


def test_the_monotone_fit_pools_violators_and_shares_ties() -> None:
    # Tracker 0 1 2, oracle 0 2 1: the last two violate order and pool to 1.5.
    assert monotone_fit([0, 1, 2], [0, 2, 1]).tolist() == pytest.approx([0, 1.5, 1.5])
    assert calibration_error([0, 1, 2], [0, 2, 1]).value == pytest.approx(1 / 3)
    # Equal tracker values get one fitted value: x=1 -> mean 0.5 (weight 2), x=2 -> 0;
    # they violate order and pool to (0.5*2 + 0) / 3 = 1/3 everywhere.
    assert monotone_fit([1, 1, 2], [0, 1, 0]).tolist() == pytest.approx([1 / 3] * 3)
    # In absolute error the fit is the median, not the mean: x=1 -> median(0, 1) = 0
    # (the lower one), x=2 -> 0; no violation; MAE 1/3, below the least-squares map's 4/9.
    assert median_monotone_fit([1, 1, 2], [0, 1, 0]).tolist() == pytest.approx([0, 0, 0])
    assert calibration_error([1, 1, 2], [0, 1, 0]).value == pytest.approx(1 / 3)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_grid, _grid), min_size=1, max_size=40))
def test_calibrated_mae_never_exceeds_the_raw_mae_nor_the_least_squares_maps(
    pairs: list[tuple[float, float]],
) -> None:
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    y = np.asarray(ys)
    fitted = median_monotone_fit(xs, ys)
    order = np.argsort(xs, kind="stable")
    assert np.all(np.diff(fitted[order]) >= -1e-12)  # monotone in x
    err = calibration_error(xs, ys).value
    # The identity and the least-squares monotone map are monotone maps too.
    assert err <= mean_absolute_error(xs, ys).value + 1e-12
    assert err <= float(np.mean(np.abs(y - monotone_fit(xs, ys)))) + 1e-12


def test_calibration_forgives_a_scale_that_mean_absolute_error_does_not() -> None:
    xs = [0.0, 0.1, 0.2, 0.3]  # the right order, a squeezed scale
    ys = [0.0, 0.25, 0.5, 0.75]
    assert mean_absolute_error(xs, ys).value == pytest.approx((0 + 0.15 + 0.3 + 0.45) / 4)
    assert calibration_error(xs, ys).value == pytest.approx(0.0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(_grid, _grid), min_size=1, max_size=40))
def test_the_monotone_fit_is_invariant_to_rescaling_and_beats_a_constant(
    pairs: list[tuple[float, float]],
) -> None:
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    err = calibration_error(xs, ys).value
    fitted = monotone_fit(xs, ys)
    # A constant is a monotone map, so the least-squares monotone fit is no worse than
    # the best constant, the mean, in squared error.
    y = np.asarray(ys)
    assert err >= 0.0 and np.sum((y - fitted) ** 2) <= np.sum((y - y.mean()) ** 2) + 1e-9
    assert calibration_error([3 * x + 1 for x in xs], ys).value == pytest.approx(err)
    order = np.argsort(xs, kind="stable")
    assert np.all(np.diff(fitted[order]) >= -1e-12)


def _traj(values: dict[str, list[float]], failure: str | None = None, calls: int = 0) -> Trajectory:
    return Trajectory(values, calls=calls, input_tokens=10 * calls, failure=failure)


def test_align_keeps_the_points_every_tracker_defines_and_counts_why_the_rest_went() -> None:
    truth = [_traj({"a": [0.0, 0.5, 1.0]}), _traj({"a": [0.0, 0.0, 0.5]})]
    tracked = {
        "self-report": [_traj({"a": [NAN, NAN, 1.0]}), _traj({"a": [NAN, 0.0, 0.5]})],
        "judge": [_traj({"a": [0.0, 0.25, 0.75]}, calls=2), _traj({"a": [NAN] * 3}, "boom", 1)],
    }
    aligned = align(truth, tracked)
    # Index 0 is never a point: 2 episodes x 2 turns considered.
    assert aligned.considered == 4
    assert [(p.episode, p.turn, p.final) for p in aligned.points] == [(0, 2, True)]
    assert aligned.oracle == [1.0]
    assert aligned.tracked == {"self-report": [1.0], "judge": [0.75]}
    assert aligned.dropped == {
        "self-report: undefined until every party has spoken": 1,
        "judge: boom": 2,
    }
    fit = fit_tracker("judge", "m", False, aligned, tracked["judge"])
    assert fit.points == 1 and fit.episodes == 1
    assert fit.calls_per_episode == 1.5 and fit.tokens_per_episode == 15
    assert fit.failures == ("boom",)
    assert math.isnan(fit.pearson.value) and "at least 3" in fit.pearson.why
    assert fit.mae.value == pytest.approx(0.25)


def test_every_tracker_is_scored_on_the_same_points() -> None:
    truth = [_traj({"a": [0.0, 0.25, 0.5, 0.75, 1.0]}) for _ in range(3)]
    tracked = {
        "x": [_traj({"a": [0.0, 0.0, 0.5, 0.5, 1.0]}) for _ in range(3)],
        "y": [_traj({"a": [0.0, NAN, 0.25, 0.75, 1.0]}) for _ in range(3)],
    }
    aligned = align(truth, tracked)
    fx = fit_tracker("x", "-", False, aligned, tracked["x"], resamples=100)
    fy = fit_tracker("y", "-", False, aligned, tracked["y"], resamples=100)
    assert fx.points == fy.points == 9  # turn 1 of each episode dropped for y
    assert aligned.dropped == {"y: undefined": 3}
    # Three episodes with the same dialogue: every resample has the same r.
    assert fx.pearson.low == pytest.approx(fx.pearson.value)
