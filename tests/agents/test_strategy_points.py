"""A rule party's behaviour at a point of the TKI plane comes from the behaviour table:
exactly a mode's parameters at that mode's point, blended in between, and moved by the
parameter worlds as the table's own values are."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.agents.utility import (
    engage_every,
    logrolling,
    self_weight,
    strategy_beta,
    tone_switches,
)
from disputelab.scenario.behaviour import PARAMETERS, Behaviour, world_overrides
from disputelab.scenario.schema import STRATEGIES
from disputelab.scenario.tki import MODE_POINTS

coordinate = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)
points = st.tuples(coordinate, coordinate)
WORLDS = {w: Behaviour.of(world_overrides(w, {})) for w in ("shipped", "neutral", "mirrored")}


@pytest.mark.parametrize("world", list(WORLDS))
@pytest.mark.parametrize("mode", STRATEGIES)
def test_at_a_modes_own_point_every_number_is_the_modes(world: str, mode: str) -> None:
    b, point = WORLDS[world], MODE_POINTS[mode]
    assert strategy_beta(point, b) == b[f"beta.{mode}"]  # to the bit
    assert self_weight(point, b) == b[f"self_weight.{mode}"]
    assert logrolling(point, b) == (b["logrolling.collaborating"] if mode == "collaborating" else 0)
    assert engage_every(point, b) == (
        max(1, round(b["avoiding.engage_every"])) if mode == "avoiding" else 1
    )
    assert tone_switches(point, b) == tone_switches(mode, b)  # type: ignore[arg-type]


@given(points)
def test_the_neutral_world_makes_every_point_a_linear_unweighted_conceder(
    p: tuple[float, float],
) -> None:
    b = WORLDS["neutral"]
    assert strategy_beta(p, b) == pytest.approx(1.0)
    assert self_weight(p, b) == pytest.approx(1.0)
    assert logrolling(p, b) == 0.0
    assert engage_every(p, b) == 1
    assert tone_switches(p, b) == (False, False)


@given(points)
def test_the_mirrored_world_inverts_a_points_exponent_and_weight(p: tuple[float, float]) -> None:
    shipped, mirrored = WORLDS["shipped"], WORLDS["mirrored"]
    assert strategy_beta(p, mirrored) == pytest.approx(1 / strategy_beta(p, shipped))
    assert self_weight(p, mirrored) == pytest.approx(1 / self_weight(p, shipped))
    assert logrolling(p, mirrored) == pytest.approx(-logrolling(p, shipped))


@given(points)
def test_a_points_exponent_lies_between_the_modes_exponents(p: tuple[float, float]) -> None:
    b = WORLDS["shipped"]
    betas = [b[f"beta.{m}"] for m in STRATEGIES]
    assert min(betas) - 1e-12 <= strategy_beta(p, b) <= max(betas) + 1e-12


def test_half_way_from_competing_to_collaborating_concedes_at_their_geometric_mean() -> None:
    b = WORLDS["shipped"]
    expected = math.sqrt(b["beta.competing"] * b["beta.collaborating"])
    assert strategy_beta((10.0, 5.0), b) == pytest.approx(expected)
    assert tone_switches((10.0, 5.0), b) == (False, False)  # neither switch past half-way
    assert tone_switches((10.0, 2.0), b)[0], "mostly competing: it can flare"


def test_the_adaptive_rate_is_a_table_parameter_whose_neutral_keeps_points_static() -> None:
    rate = PARAMETERS["adaptive.rate"]
    assert rate.neutral == 0.0 and 0.0 < rate.default <= 1.0
