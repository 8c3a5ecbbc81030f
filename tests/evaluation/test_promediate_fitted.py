"""ProMediate's ME with least-squares slopes (the paper's wording) beside the two-point
slopes of its released code."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.evaluation.promediate import (
    fitted_slope,
    mediator_effectiveness,
    mediator_effectiveness_fitted,
)

unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
coef = st.floats(min_value=-2.0, max_value=2.0, allow_nan=False)


def test_fitted_slope_by_hand() -> None:
    # x = 0..5 (mean 2.5, Sxx = 17.5); y = 0, .5, .5, .5, .5, .5: Sxy = 1.25
    assert fitted_slope([0.0, 0.5, 0.5, 0.5, 0.5, 0.5]) == pytest.approx(1.25 / 17.5)
    assert math.isnan(fitted_slope([0.3]))
    assert math.isnan(fitted_slope([]))


def test_a_jump_right_after_the_intervention_counts_less_than_with_two_points() -> None:
    c = {"rent": [0.0] * 7 + [0.5] * 6}  # 12 lines; t = 6 meets 0.0, then a jump to 0.5
    two = mediator_effectiveness(c, [(6, ["rent"])])
    fitted = mediator_effectiveness_fitted(c, [(6, ["rent"])])
    assert two.value == pytest.approx(10.0)  # (0.5 - 0) / 5
    assert fitted.value == pytest.approx(100 * 1.25 / 17.5)  # 7.14: the fit sees the plateau


@given(coef, coef, st.integers(min_value=2, max_value=30))
def test_the_fitted_slope_of_a_straight_line_is_its_slope(a: float, b: float, n: int) -> None:
    assert fitted_slope([a + b * i for i in range(n)]) == pytest.approx(b, abs=1e-9)


@given(st.lists(unit, min_size=2, max_size=30), coef, coef)
def test_the_fitted_slope_is_linear_in_the_values(
    values: list[float], shift: float, scale: float
) -> None:
    moved = [shift + scale * v for v in values]
    assert fitted_slope(moved) == pytest.approx(scale * fitted_slope(values), abs=1e-9)


@given(
    st.integers(min_value=6, max_value=20),
    st.integers(min_value=6, max_value=20),
    unit,
    coef,
    coef,
    st.lists(unit, max_size=5),
    st.lists(unit, max_size=5),
)
def test_on_straight_windows_both_slopes_agree(
    before: int,
    after: int,
    level: float,
    b_in: float,
    b_out: float,
    head: list[float],
    tail: list[float],
) -> None:
    """A trajectory straight on each side of t gives the same ME either way, whatever
    lies outside the two windows."""
    left = [level - b_in * (before - i) / 10 for i in range(before)]
    right = [level + b_out * i / 10 for i in range(after)]
    series = head + left + right + tail
    t = len(head) + before
    c = {"x": series}
    two = mediator_effectiveness(c, [(t, ["x"])])
    fitted = mediator_effectiveness_fitted(c, [(t, ["x"])])
    assert two.defined == fitted.defined
    if two.defined:
        assert fitted.value == pytest.approx(two.value, abs=1e-6)
        assert fitted.value == pytest.approx(100 * (b_out - b_in) / 10, abs=1e-6)


@given(st.lists(unit, min_size=1, max_size=40), st.data())
def test_both_score_the_same_interventions(series: list[float], data: st.DataObject) -> None:
    lines = len(series) - 1
    ts = data.draw(st.lists(st.integers(0, lines), max_size=4))
    c = {"x": series}
    two = mediator_effectiveness(c, [(t, ["x"]) for t in ts])
    fitted = mediator_effectiveness_fitted(c, [(t, ["x"]) for t in ts])
    assert two.defined == fitted.defined
    assert two.detail.get("skipped") == fitted.detail.get("skipped")
    if fitted.defined:
        assert -100 * 2 <= fitted.value <= 100 * 2  # slopes of values in [0, 1] over 1 step
