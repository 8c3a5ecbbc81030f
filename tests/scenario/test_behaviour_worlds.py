"""The parameter worlds of the behaviour table: `neutral` sets every effect to nothing,
`mirrored` reverses every direction, defined once per table entry (`Parameter.mirror`)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.protocols.base import behaviour_rows
from disputelab.scenario.behaviour import (
    CURVES,
    HOFSTEDE,
    PARAMETERS,
    TABLE6,
    WORLDS,
    BehaviourError,
    check_in_domain,
    domain,
    mirrored_value,
    world_overrides,
    world_values,
)
from disputelab.scenario.conditions import condition_parameters

SHIPPED = {n: p.default for n, p in PARAMETERS.items()}


def test_mirroring_the_mirrored_table_gives_back_the_shipped_one() -> None:
    mirrored = world_values("mirrored", SHIPPED)
    assert mirrored != SHIPPED
    again = world_values("mirrored", mirrored)
    assert again == pytest.approx(SHIPPED)


def test_the_neutral_table_is_a_fixed_point_of_mirroring() -> None:
    neutral = world_values("neutral", SHIPPED)
    assert world_values("mirrored", neutral) == neutral


def test_every_world_of_the_shipped_table_lies_in_each_parameter_domain() -> None:
    for world in WORLDS:
        for name, value in world_values(world, SHIPPED).items():
            check_in_domain(name, value)  # raises if not


def test_every_direction_a_paper_gave_is_reversed_in_the_mirrored_world() -> None:
    # The curve family, Hofstede's dimensions and Table 6 give the table its signs: a
    # mirrored world that kept one of them would not test it.
    signed = [p for p in PARAMETERS.values() if p.source in (CURVES, HOFSTEDE, TABLE6)]
    assert signed and all(p.mirror != "keep" for p in signed)
    assert all(p.mirror == "keep" for p in PARAMETERS.values() if p.neutral is None)


@pytest.mark.parametrize(
    ("name", "shipped", "mirrored"),
    [
        ("beta.competing", 0.3, 1 / 0.3),
        ("self_weight.accommodating", 0.3, 1 / 0.3),
        ("culture.masculinity", -0.4, 0.4),
        ("cause.resource.top_topic_points", 10.0, -10.0),
        ("mediator.calming", 0.6, -0.6),
        ("resentment.walk_away", 1.4, 1.4),  # a level
        ("avoiding.engage_every", 3.0, 3.0),  # no opposite to play
    ],
)
def test_each_kind_of_entry_mirrors_as_its_table_row_says(
    name: str, shipped: float, mirrored: float
) -> None:
    assert mirrored_value(PARAMETERS[name], shipped) == pytest.approx(mirrored)


@given(st.sampled_from(sorted(PARAMETERS)), st.floats(0.0, 1.0))
def test_mirroring_is_its_own_inverse_within_the_domain(name: str, at: float) -> None:
    p = PARAMETERS[name]
    low, high = domain(name)
    value = max(low, 1e-3) + at * (min(high, 1e3) - max(low, 1e-3))
    once = mirrored_value(p, value)
    if low < once < high:  # not clipped at the domain's edge
        assert mirrored_value(p, once) == pytest.approx(value)


def test_world_overrides_keep_the_spec_own_in_the_shipped_world() -> None:
    assert world_overrides("shipped", {"mediator.calming": 0.3}) == {"mediator.calming": 0.3}
    assert world_overrides("mirrored", {})["beta.competing"] == pytest.approx(1 / 0.3)
    assert "beta.compromising" not in world_overrides("mirrored", {})  # 1 mirrors to 1


def test_an_unknown_world_is_refused() -> None:
    with pytest.raises(BehaviourError, match="unknown world 'flat'"):
        world_values("flat", SHIPPED)


def test_a_protocol_s_own_rows_stay_out_of_every_other_protocol_s_world() -> None:
    roundtable = world_overrides("mirrored", {}, behaviour_rows("roundtable", PARAMETERS))
    assert roundtable and not any(n.startswith(("settlement.", "bilateral.")) for n in roundtable)
    settlement = world_overrides("mirrored", {}, behaviour_rows("settlement", PARAMETERS))
    assert settlement["settlement.eagerness.competing"] == pytest.approx(1 / 0.35)
    assert not any(n.startswith("bilateral.") for n in settlement)
    # A row the experiment set itself is moved by the world, whoever reads it.
    rows = behaviour_rows("roundtable", PARAMETERS)
    own = world_overrides("neutral", {"bilateral.hardening": 0.2}, rows)
    assert own["bilateral.hardening"] == 0.0


def test_a_condition_acts_through_the_rows_of_the_protocol_it_is_played_in() -> None:
    everywhere = condition_parameters("posture:competing")
    assert {"beta.competing", "settlement.eagerness.competing"} <= set(everywhere)
    assert "settlement.eagerness.competing" not in behaviour_rows("roundtable", everywhere)
    assert "settlement.eagerness.competing" in behaviour_rows("settlement", everywhere)
    reactive = condition_parameters("reactivity:react-react")
    assert "bilateral.offence_per_reactivity" in behaviour_rows("bilateral", reactive)
    assert "bilateral.offence_per_reactivity" not in behaviour_rows("staged", reactive)
