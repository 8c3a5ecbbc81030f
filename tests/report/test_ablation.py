"""The ablation table's arithmetic and its reading of each pair of effects."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from disputelab.evaluation.metrics import consensus_gain
from disputelab.protocols.roundtable.evaluation import socrates
from disputelab.report.ablation import effects, grid_values, reading
from disputelab.scenario.conditions import condition_parameters
from tests.report.pages import store_with_gains

OWN = condition_parameters("posture:competing")


@pytest.mark.parametrize(
    ("condition", "ablated", "full", "after", "expected"),
    [
        ("posture:competing", OWN, -1, -1, "emergent"),
        ("posture:competing", OWN, -1, 0, "assumption"),
        ("posture:competing", OWN, -1, 1, "assumption (reverses)"),
        ("posture:competing", OWN, 0, -1, "no significant effect"),
        ("posture:competing", ("mediator.calming",), -1, 0, "lost (other parameters ablated)"),
        ("posture:competing", ("mediator.calming",), -1, -1, "survives"),
        ("parties:+1", OWN, 1, 1, "structural (acts through no parameter)"),
    ],
)
def test_reading(
    condition: str, ablated: tuple[str, ...], full: int, after: int, expected: str
) -> None:
    assert reading(condition, ablated, full, after) == expected


def test_an_effect_is_the_mean_over_scenarios_of_paired_differences() -> None:
    # Scenario a: replicates differ by +1 and +3 (mean +2); scenario b by -1 (one pair).
    values = {
        ("general", "rule", "m"): {("a", 0): 0.0, ("a", 1): 0.0, ("b", 0): 5.0},
        ("x", "rule", "m"): {("a", 0): 1.0, ("a", 1): 3.0, ("b", 0): 4.0, ("c", 0): 9.0},
    }
    (e,) = effects(values, "general", ())
    assert (e.condition, e.mediator, e.metric) == ("x", "rule", "m")
    assert e.delta == pytest.approx((2.0 + -1.0) / 2)
    assert e.test.n == 2  # scenario c has no reference pair


def test_no_pair_gives_an_undefined_effect() -> None:
    values = {("general", "rule", "m"): {("a", 0): 1.0}, ("x", "rule", "m"): {("b", 0): 2.0}}
    (e,) = effects(values, "general", ())
    assert math.isnan(e.delta) and math.isnan(e.test.p_value)


def test_effects_leave_out_raw_changes_as_the_tables_do(tmp_path: Path) -> None:
    # Mediated episodes take the gains in episode-id order: boundary-wall, tenancy, then
    # workplace, whose twin had already reached consensus, so its gain is a raw change
    # on another scale: the tables leave it out, and so must the effects beside them.
    gains = [consensus_gain(0.75, 0.5), consensus_gain(0.85, 0.5), consensus_gain(0.95, 1.0)]
    store = store_with_gains(tmp_path, gains)
    values = grid_values(store, "g", (f"{socrates.EVALUATOR}:consensus_gain",))
    (cell,) = values.values()
    assert sorted(cell) == [("boundary-wall", 0), ("tenancy", 0), ("workplace", 0)]
    by_scenario = {sid: v for (sid, _), v in cell.items()}
    assert by_scenario["boundary-wall"] == pytest.approx(50.0)
    assert by_scenario["tenancy"] == pytest.approx(70.0)
    assert math.isnan(by_scenario["workplace"])
