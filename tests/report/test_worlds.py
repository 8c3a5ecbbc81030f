"""The worlds table: each effect measured in the shipped, neutral and mirrored worlds,
and its label (emergent, assumed, fragile, no effect) from the three."""

from __future__ import annotations

import asyncio
import math
import re
from pathlib import Path
from statistics import mean
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.evaluation.stats import Estimate, TestResult
from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import ExperimentPlan, plan_experiment
from disputelab.protocols.base import get_protocol
from disputelab.report.worlds import (
    ASSUMED,
    EMERGENT,
    FRAGILE,
    INCOMPLETE,
    NO_EFFECT,
    WorldEffect,
    effect_label,
    emergent_p,
    holm,
    significant_sign,
    world_effects,
    world_label,
    world_rows,
    worlds_markdown,
)
from disputelab.scenario.behaviour import WORLDS
from disputelab.store.sqlite import Store

SIGN = st.sampled_from([-1, 0, 1])


@pytest.mark.parametrize(
    ("shipped", "neutral", "mirrored", "label"),
    [
        (1, 1, 1, EMERGENT),
        (-1, -1, -1, EMERGENT),
        (1, 1, -1, ASSUMED),  # follows the table's signs
        (1, 0, 1, ASSUMED),  # needs the table's values
        (-1, 0, 0, ASSUMED),
        (1, 1, 0, FRAGILE),
        (1, -1, 1, FRAGILE),
        (1, -1, 0, FRAGILE),
        (0, 1, 1, NO_EFFECT),
        (0, 0, -1, NO_EFFECT),
    ],
)
def test_the_label_of_an_effect_from_its_sign_in_each_world(
    shipped: int, neutral: int, mirrored: int, label: str
) -> None:
    assert world_label({"shipped": shipped, "neutral": neutral, "mirrored": mirrored}) == label


@given(SIGN, SIGN, SIGN)
def test_a_label_does_not_depend_on_which_way_the_effect_points(s: int, n: int, m: int) -> None:
    signs = {"shipped": s, "neutral": n, "mirrored": m}
    flipped = {w: -x for w, x in signs.items()}
    assert world_label(signs) == world_label(flipped)


@given(SIGN, SIGN, SIGN)
def test_emergent_and_assumed_never_overlap(s: int, n: int, m: int) -> None:
    label = world_label({"shipped": s, "neutral": n, "mirrored": m})
    emergent = s != 0 and n == s and m == s
    assumed = s != 0 and (m == -s or n == 0)
    assert (label == EMERGENT) == emergent
    assert (label == ASSUMED) == (assumed and not emergent)


def test_without_all_three_worlds_only_no_effect_can_be_said() -> None:
    assert world_label({"shipped": 1, "mirrored": -1}) == INCOMPLETE
    assert world_label({"shipped": 0, "mirrored": -1}) == NO_EFFECT
    assert world_label({"neutral": 1}) == INCOMPLETE


def test_significance_is_an_adjusted_p_below_alpha_and_a_nonzero_mean() -> None:
    assert significant_sign(-0.2, 0.01) == -1
    assert significant_sign(0.2, 0.05) == 0
    assert significant_sign(0.0, 0.0) == 0
    assert significant_sign(0.2, math.nan) == 0


def _effect(world: str, mean_: float, p: float, testable: bool = True) -> WorldEffect:
    estimate = Estimate(mean_, mean_ - 1, mean_ + 1, 10, "t", 10)
    return WorldEffect("c", "rule", "m", world, estimate, TestResult(0.0, p, "w", 10), testable)


def test_emergent_is_the_largest_p_of_three_worlds_that_agree() -> None:
    cells = {
        ("a", "rule", "m"): {
            w: _effect(w, 2.0, p) for w, p in zip(WORLDS, (1e-4, 0.01, 0.004), strict=True)
        },
        ("b", "rule", "m"): {w: _effect(w, 2.0, 1e-6) for w in WORLDS},
    }
    found = emergent_p(cells)
    # two effects in the family: Holm doubles the smaller IUT p, keeps the larger's
    assert found[("b", "rule", "m")] == pytest.approx(2e-6)
    assert found[("a", "rule", "m")] == pytest.approx(0.01)


def test_an_effect_that_changes_sign_or_cannot_be_tested_in_a_world_is_never_emergent() -> None:
    flips = {w: _effect(w, -1.0 if w == "mirrored" else 1.0, 1e-6) for w in WORLDS}
    zero = {w: _effect(w, 1.0, 1e-6, testable=w != "neutral") for w in WORLDS}
    found = emergent_p({("flip", "rule", "m"): flips, ("zero", "rule", "m"): zero})
    assert found == {}


def test_a_test_that_cannot_reject_is_left_out_of_the_family() -> None:
    tested = [_effect("shipped", 1.0, 0.01), _effect("mirrored", 1.0, 0.02)]
    untestable = [_effect("neutral", 0.0, 1.0, testable=False) for _ in range(50)]
    adjusted = holm([*tested, *untestable])
    assert adjusted[:2] == pytest.approx([0.02, 0.02])  # a family of two, not of 52
    assert all(math.isnan(p) for p in adjusted[2:])


def test_the_label_takes_emergent_from_the_intersection_union_test_alone() -> None:
    agree = {"shipped": 1, "neutral": 1, "mirrored": 1}
    assert effect_label(agree, 0.01) == EMERGENT
    assert effect_label(agree, 0.2) == FRAGILE  # the cells agree, the IUT does not reject
    assert effect_label({"shipped": 1, "neutral": 0, "mirrored": 1}, 0.01) == EMERGENT
    assert effect_label({"shipped": 1, "neutral": 0, "mirrored": 1}, math.nan) == ASSUMED


def _played(tmp_path: Path, **fields: Any) -> tuple[Store, ExperimentPlan]:
    spec = {
        "name": "w",
        "scenarios": ["builtin:*"],
        "limit_scenarios": 4,
        "conditions": ["general", "posture:accommodating"],
        "mediators": ["none"],
        "replicates": 1,
        "budget": 30,
        **fields,
    }
    spec = {k: v for k, v in spec.items() if v is not None}
    plan = plan_experiment(spec, profiles={})
    store = Store(tmp_path)
    asyncio.run(run_experiment(store, plan, ModelHub(None)))
    return store, plan


def _mean_target(store: Store, episode_id: str) -> float:
    """The mean concession target the rule parties state over the first 12 turns."""
    turns = store.load_episode(episode_id).episode.turns[:12]
    found = [re.search(r"target ([0-9.]+)", t.action.thought) for t in turns if t.action]
    return mean(float(m.group(1)) for m in found if m)


def test_the_mirrored_world_reverses_an_effect_that_is_a_sign_of_the_table(
    tmp_path: Path,
) -> None:
    # Accommodating parties concede fastest of all modes in the shipped table (exponent
    # 3), so their targets fall below the scenario's own mix of modes; mirrored, 1/3 is
    # the slowest, and the same cells' targets sit above it. Machinery, not a finding.
    store, plan = _played(tmp_path, worlds=["shipped", "neutral", "mirrored"])
    target = {(e.world, e.condition, e.scenario_id): e.episode_id for e in plan.episodes}

    def effect(world: str, sid: str) -> float:
        accommodating = _mean_target(store, target[(world, "posture:accommodating", sid)])
        return accommodating - _mean_target(store, target[(world, "general", sid)])

    for sid in plan.scenarios:
        assert effect("shipped", sid) < 0 < effect("mirrored", sid)
        assert effect("neutral", sid) == 0  # every mode plays alike at neutral


def test_the_report_gives_every_effect_in_each_world_with_one_family(tmp_path: Path) -> None:
    store, plan = _played(tmp_path, worlds=["shipped", "neutral", "mirrored"])
    rows = world_rows(store, "w", plan.config)
    assert rows and all(set(r.cells) == {"shipped", "neutral", "mirrored"} for r in rows)
    text = worlds_markdown(store, "w", plan.config)
    header = "| condition | mediator | metric | shipped | neutral | mirrored | emergent p | label |"
    assert header in text
    tests = sum(1 for r in rows for _, p in r.cells.values() if not math.isnan(p))
    assert f"adjustment across the {tests} cell tests of this table that can reject" in text
    untested = sum(1 for r in rows for e, _ in r.cells.values() if not e.testable)
    assert f"{untested} cells whose paired differences are all exactly zero" in text
    assert "*emergent*, an emergent p below 0.05" in text


def test_a_run_without_worlds_has_no_worlds_section(tmp_path: Path) -> None:
    store, plan = _played(tmp_path, limit_scenarios=1)
    assert "worlds" not in plan.config
    assert worlds_markdown(store, "w", plan.config) == ""


def test_a_method_is_measured_against_the_reference_method_in_each_world() -> None:
    # Two cases, one replicate: mcts gains 0.2 and 0.4 over direct in the shipped world.
    values = {
        ("general", "direct", "shipped", "s:surplus"): {("a", 0): 0.1, ("b", 0): 0.2},
        ("general", "mcts", "shipped", "s:surplus"): {("a", 0): 0.3, ("b", 0): 0.6},
    }
    (found,) = world_effects(values, "general", (), "direct")
    assert (found.condition, found.mediator, found.world) == ("general", "mcts − direct", "shipped")
    assert found.effect.mean == pytest.approx(0.3)
    assert world_effects(values, "general", ()) == []  # no condition to compare


def test_a_settlement_run_labels_the_planning_gain_in_every_world(tmp_path: Path) -> None:
    store, plan = _played(
        tmp_path,
        protocol="settlement",
        scenarios=["builtin:settle-*"],
        limit_scenarios=2,
        conditions=["general"],
        mediators=["direct", "mcts"],
        budget=None,
        worlds=["shipped", "neutral", "mirrored"],
    )
    rows = world_rows(store, "w", plan.config)
    assert {r.metric for r in rows} == {
        "settleagent:success",
        "settleagent:surplus",
        "settleagent:sr_acc20",
    }
    assert all(r.mediator == "mcts − direct" for r in rows)
    assert all(set(r.cells) == set(WORLDS) for r in rows)
    text = get_protocol("settlement").experiment_tables(store, "w", plan.config)
    for world in WORLDS:
        assert f"## Table 1 layout: negotiation performance ({world} world)" in text
        assert (
            f"## Planning against direct counsel (paired by case and replicate) ({world} world)"
            in text
        )
    assert "| general | mcts − direct | surplus |" in worlds_markdown(store, "w", plan.config)
