"""The Thomas-Kilmann plane: the modes' points, the weights a point puts on them, and the
adaptive update, as pure functions."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.scenario.schema import STRATEGIES, Persona
from disputelab.scenario.tki import (
    MODE_POINTS,
    adapt,
    mode_of,
    mode_weights,
    shown_point,
)

coordinate = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)
points = st.tuples(coordinate, coordinate)
rates = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


def test_each_mode_sits_at_the_papers_level_on_both_scales() -> None:
    high, mid, low = (10.0,), (5.0,), (0.0,)
    levels = {
        "competing": high + low,
        "collaborating": high + high,
        "compromising": mid + mid,
        "avoiding": low + low,
        "accommodating": low + high,
    }
    assert levels == MODE_POINTS
    for mode, point in MODE_POINTS.items():
        assert mode_of(point) == mode
        assert mode_weights(point) == {mode: 1.0}


@pytest.mark.parametrize(
    ("point", "mode"),
    [
        ((7, 3), "competing"),
        ((6.9, 3), "compromising"),
        ((3, 7), "accommodating"),
        ((7, 7), "collaborating"),
        ((3, 3), "avoiding"),
        ((8, 5), "compromising"),
    ],
)
def test_a_point_is_named_by_the_thresholds_at_7_and_3(
    point: tuple[float, float], mode: str
) -> None:
    assert mode_of(point) == mode


@given(points)
def test_weights_are_a_distribution_over_at_most_three_modes(p: tuple[float, float]) -> None:
    w = mode_weights(p)
    assert set(w) <= set(STRATEGIES) and 1 <= len(w) <= 3
    assert all(v > 0 for v in w.values())
    assert math.isclose(sum(w.values()), 1.0, abs_tol=1e-9)


@given(points)
def test_the_weights_reproduce_the_point(p: tuple[float, float]) -> None:
    """Barycentric: the modes' points, weighted, give the point back."""
    w = mode_weights(p)
    back = [sum(v * MODE_POINTS[m][i] for m, v in w.items()) for i in (0, 1)]
    assert math.isclose(back[0], p[0], abs_tol=1e-6) and math.isclose(back[1], p[1], abs_tol=1e-6)


@given(points, st.floats(-0.01, 0.01), st.floats(-0.01, 0.01))
def test_weights_move_continuously_with_the_point(
    p: tuple[float, float], da: float, dc: float
) -> None:
    q = (min(10.0, max(0.0, p[0] + da)), min(10.0, max(0.0, p[1] + dc)))
    wp, wq = mode_weights(p), mode_weights(q)
    # Piecewise linear with slopes of at most 1/5 per unit on each scale.
    change = sum(abs(wp.get(m, 0.0) - wq.get(m, 0.0)) for m in STRATEGIES)
    assert change <= 0.81 * (abs(q[0] - p[0]) + abs(q[1] - p[1])) + 1e-9


@given(points, points, rates)
def test_the_adaptive_update_never_leaves_the_square(
    p: tuple[float, float], seen: tuple[float, float], rate: float
) -> None:
    a, c = adapt(p, seen, rate)
    assert 0.0 <= a <= 10.0 and 0.0 <= c <= 10.0


@given(points, rates)
def test_a_party_that_meets_its_own_behaviour_stays_put(
    p: tuple[float, float], rate: float
) -> None:
    assert adapt(p, p, rate) == p


@given(points, points)
def test_at_rate_0_every_point_is_fixed_and_at_rate_1_it_takes_what_it_saw(
    p: tuple[float, float], seen: tuple[float, float]
) -> None:
    assert adapt(p, seen, 0.0) == p
    assert adapt(p, seen, 1.0) == pytest.approx(seen)


@given(points, points, rates)
def test_the_update_closes_the_gap_to_what_it_saw_by_the_rate(
    p: tuple[float, float], seen: tuple[float, float], rate: float
) -> None:
    q = adapt(p, seen, rate)
    before, after = math.dist(p, seen), math.dist(q, seen)
    assert after == pytest.approx((1 - rate) * before, abs=1e-9)


def test_a_rate_off_0_to_1_is_refused() -> None:
    with pytest.raises(ValueError, match="from 0 to 1"):
        adapt((5, 5), (0, 0), 1.5)


@pytest.mark.parametrize("signal", ["continue", "consensus", "walk_away"])
@pytest.mark.parametrize("tone", ["hostile", "neutral", "warm"])
@pytest.mark.parametrize("moved", [True, False])
def test_what_a_turn_shows_is_a_point_on_the_square(signal: str, tone: str, moved: bool) -> None:
    a, c = shown_point(signal, tone, moved)
    assert 0 <= a <= 10 and 0 <= c <= 10


def test_walking_away_shows_the_most_assertive_least_cooperative_turn() -> None:
    assert shown_point("walk_away", "warm", True) == (10.0, 0.0)
    held, moved = (
        shown_point("continue", "neutral", False),
        shown_point("continue", "neutral", True),
    )
    assert held[0] > moved[0]
    agreed, hostile = (
        shown_point("consensus", "neutral", True),
        shown_point("continue", "hostile", True),
    )
    assert agreed[1] > hostile[1]


def test_a_persona_given_a_point_is_named_by_its_mode_and_keeps_the_point() -> None:
    p = Persona.model_validate({"assertiveness": 8, "cooperativeness": 2.5})
    assert p.strategy == "competing" and p.point == (8.0, 2.5)
    assert Persona.model_validate(p.model_dump()) == p
    assert Persona(strategy="avoiding").point == (0.0, 0.0)
    assert "assertiveness" not in Persona().model_dump(), "a mode-only persona dumps as before"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"assertiveness": 8}, "give both assertiveness and cooperativeness"),
        ({"strategy": "avoiding", "assertiveness": 8, "cooperativeness": 2}, "does not name"),
        ({"assertiveness": 11, "cooperativeness": 2}, "less than or equal to 10"),
    ],
)
def test_a_bad_point_is_refused_with_its_reason(data: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Persona.model_validate(data)
