"""Global sensitivity analysis: the design, its points' grids, resume, and the analysis.

These check the machinery (a parameter that cannot reach a metric gets no effect, one
that can gets some), not any paper's direction."""

from __future__ import annotations

import asyncio
import math
import threading
from pathlib import Path

import numpy as np
import pytest
import yaml

from disputelab.evaluation.metrics import consensus_gain
from disputelab.experiments.sensitivity import (
    MORRIS,
    SOBOL,
    Design,
    Evaluation,
    Factor,
    Hooks,
    Means,
    SensitivityError,
    check_protocol,
    complete_trajectories,
    default_parameters,
    evaluate_points,
    first_order_above_total,
    grid_size,
    make_design,
    outputs,
    parse_factor,
    parse_factors,
    point_means,
    point_spec,
    point_specs,
    problem,
    rank,
    rankings,
    stored_points,
)
from disputelab.llm.models import ModelHub
from disputelab.plan.spec import ExperimentSpec, load_spec
from disputelab.protocols.base import behaviour_rows
from disputelab.protocols.roundtable.evaluation import socrates
from disputelab.scenario.behaviour import PARAMETERS
from disputelab.scenario.conditions import condition_parameters
from disputelab.store.sqlite import Store
from tests.report.pages import store_with_gains

GAIN = "socrates-oracle:consensus_gain"
TURNS = "socrates-oracle:party_turns"


def _spec(tmp_path: Path, **fields: object) -> ExperimentSpec:
    data = {
        "name": "sens",
        "scenarios": ["tenancy"],
        "conditions": ["posture:competing"],
        "mediators": ["rule"],
        "replicates": 1,
        "budget": 40,
        **fields,
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_spec(path)


def test_a_factor_takes_the_tables_range_or_its_own() -> None:
    p = PARAMETERS["beta.competing"]
    assert parse_factor("beta.competing") == Factor("beta.competing", p.low, p.high)
    assert parse_factor("mediator.calming=0.1:0.9") == Factor("mediator.calming", 0.1, 0.9)
    assert parse_factor(" mediator.calming = 0 : 1 ") == Factor("mediator.calming", 0.0, 1.0)
    # Down to -1: the mirrored world's calming stirs resentment instead.
    with pytest.raises(SensitivityError, match="takes values from -1 to 1, not -2"):
        parse_factor("mediator.calming=-2:0.5")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("beta.compting", "did you mean beta.competing"),
        ("beta.competing=3:1", "must be below"),
        ("beta.competing=2:2", "must be below"),
        ("beta.competing=a:b", "LOW:HIGH"),
        ("beta.competing=1", "LOW:HIGH"),
        ("beta.competing=0:nan", "finite"),
        ("beta.competing=-inf:1", "finite"),
    ],
)
def test_a_bad_factor_is_refused_in_one_line(text: str, match: str) -> None:
    with pytest.raises(SensitivityError, match=match) as info:
        parse_factor(text)
    assert "\n" not in str(info.value)


def test_a_parameter_named_twice_is_refused() -> None:
    with pytest.raises(SensitivityError, match="more than once"):
        parse_factors(["beta.competing", "beta.competing=1:2"])


def test_the_problem_is_salibs_description_of_the_space() -> None:
    factors = parse_factors(["beta.competing", "mediator.calming=0.2:0.8"])
    assert problem(factors) == {
        "num_vars": 2,
        "names": ["beta.competing", "mediator.calming"],
        "bounds": [[0.2, 4.0], [0.2, 0.8]],
    }


def test_designs_have_salibs_sizes_and_stay_in_bounds() -> None:
    factors = parse_factors(["beta.competing", "mediator.calming=0.2:0.8", "resentment.hurt"])
    m = make_design(factors, MORRIS, 3, seed=1)
    assert m.X.shape == (3 * (3 + 1), 3)  # trajectories x (parameters + 1)
    s = make_design(factors, SOBOL, 4, seed=1)
    assert s.X.shape == (4 * (3 + 2), 3)  # Saltelli without second-order terms
    for d in (m, s):
        for j, f in enumerate(factors):
            assert f.low <= d.X[:, j].min() and d.X[:, j].max() <= f.high
    again = make_design(factors, MORRIS, 3, seed=1)
    assert np.array_equal(m.X, again.X)  # the same seed, the same design


@pytest.mark.parametrize(
    ("method", "samples", "match"),
    [("fast", 4, "unknown method"), (MORRIS, 0, "between 1"), (SOBOL, 6, "power of 2")],
)
def test_a_bad_design_is_refused(method: str, samples: int, match: str) -> None:
    with pytest.raises(SensitivityError, match=match):
        make_design(parse_factors(["beta.competing"]), method, samples, 0)


def test_default_parameters_are_those_the_conditions_act_through(tmp_path: Path) -> None:
    spec = _spec(tmp_path, conditions=["general", "posture:competing", "parties:+1"])
    # The roundtable's agents read no settlement or bilateral row: none is varied.
    assert default_parameters(spec) == behaviour_rows(
        "roundtable", condition_parameters("posture:competing")
    )
    assert not any(n.startswith(("settlement.", "bilateral.")) for n in default_parameters(spec))
    assert {"beta.competing", "self_weight.competing", "tone.competing_flare"} <= set(
        default_parameters(spec)
    )
    assert default_parameters(_spec(tmp_path, conditions=["general"])) == ()


def test_a_protocol_without_behaviour_parameters_is_refused(tmp_path: Path, toy: object) -> None:
    toy_spec = {"name": "toy", "protocol": "show-of-hands", "scenarios": ["tenancy"]}
    (tmp_path / "toy.yaml").write_text(yaml.safe_dump({**toy_spec, "mediators": ["counter"]}))
    spec = load_spec(tmp_path / "toy.yaml")
    with pytest.raises(SensitivityError, match="no behaviour parameters"):
        check_protocol(spec)
    check_protocol(_spec(tmp_path))  # the default protocol has them
    settlement = load_spec(Path(__file__).resolve().parents[2] / "examples" / "settlement.yaml")
    check_protocol(settlement)  # its rule counsel read settlement.eagerness.MODE


def test_a_point_is_the_grid_with_its_values_named_by_what_decides_it(tmp_path: Path) -> None:
    spec = _spec(tmp_path, behaviour={"mediator.calming": 0.3})
    a = point_spec(spec, {"beta.competing": 2.0})
    assert a.params["behaviour"] == {"mediator.calming": 0.3, "beta.competing": 2.0}
    assert (a.base_seed, a.replicates, a.scenarios) == (spec.base_seed, 1, spec.scenarios)
    assert a.name.startswith("sens.sensitivity.")
    assert point_spec(spec, {"beta.competing": 2.0}).name == a.name
    assert point_spec(spec, {"beta.competing": 2.5}).name != a.name
    other = _spec(tmp_path, budget=41)
    assert point_spec(other, {"beta.competing": 2.0}).name != a.name


def _evaluate(
    store: Store, specs: list[ExperimentSpec], tmp_path: Path, size: int, hooks: Hooks | None = None
) -> Evaluation:
    hub = ModelHub(store.root / "cache.sqlite")
    return asyncio.run(evaluate_points(store, specs, tmp_path, hub, size, hooks))


def test_a_parameter_that_cannot_reach_a_metric_has_no_effect(tmp_path: Path) -> None:
    """No cause condition in the grid: cause.legal.reactivity reaches nothing."""
    spec = _spec(tmp_path, scenarios=["tenancy", "workplace"])
    design = make_design(
        parse_factors(["beta.competing", "cause.legal.reactivity"]), MORRIS, 2, seed=0
    )
    store = Store(tmp_path / "runs")
    specs = point_specs(spec, design)
    size = grid_size(spec, tmp_path, None)
    assert size == 4  # 2 scenarios x (the rule mediator + its unmediated twin)
    found = _evaluate(store, specs, tmp_path, size)
    means = [m for m in found.means if m is not None]
    assert len(means) == len(design.X)
    ranked = {r.output: r for r in rankings(design, outputs(means))}
    for r in ranked.values():
        values = dict(r.rows)
        if r.rows:
            assert values["cause.legal.reactivity"]["mu_star"] == 0.0, r.output
    turns = dict(ranked[("rule", TURNS)].rows)
    assert turns["beta.competing"]["mu_star"] > 0
    assert ranked[("rule", TURNS)].rows[0][0] == "beta.competing"


def test_resume_skips_finished_points(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    design = make_design(parse_factors(["beta.competing", "mediator.calming"]), MORRIS, 1, 0)
    specs = point_specs(spec, design)
    size = grid_size(spec, tmp_path, None)
    store = Store(tmp_path / "runs")
    stop = threading.Event()
    seen: list[str] = []

    def after_first(name: str, means: Means) -> None:
        seen.append(name)
        stop.set()  # as a signal would, once the first point is in

    hub = ModelHub(store.root / "cache.sqlite")
    first = asyncio.run(
        evaluate_points(store, specs, tmp_path, hub, size, Hooks(point=after_first), stop)
    )
    assert first.interrupted and first.run == 1 and first.reused == 0
    assert stored_points(store, specs) == [seen[0]]
    episodes = set(store.episode_ids(seen[0]))
    skipped: list[int] = []
    ran: list[str] = []
    hooks = Hooks(episode=lambda e, ep, err: ran.append(e), skipped=skipped.append)
    second = asyncio.run(evaluate_points(store, specs, tmp_path, hub, size, hooks))
    assert not second.interrupted
    assert second.reused == 1 and second.run == second.distinct - 1
    assert skipped == [size]  # the finished point was read back, not played again
    assert ran.count("done") == (second.distinct - 1) * size
    assert set(store.episode_ids(seen[0])) == episodes
    assert all(m is not None for m in second.means)


def test_a_metric_no_point_defines_is_not_ranked_and_a_flat_one_is_marked() -> None:
    design = make_design(parse_factors(["beta.competing", "mediator.calming"]), MORRIS, 2, 0)
    n = len(design.X)
    gap = rank(design, np.array([math.nan] + [1.0] * (n - 1)), ("rule", GAIN))
    assert gap.rows == [] and "undefined at 1 of" in gap.note
    assert "twin was already at full consensus" in gap.note  # a gain may fall back to a raw change
    other = rank(design, np.array([math.nan] + [1.0] * (n - 1)), ("rule", "judge:fairness"))
    assert other.note.endswith("(no episode of their grids defines it)")
    flat = rank(design, np.ones(n), ("rule", GAIN))
    assert flat.constant and all(v["mu_star"] == 0.0 for _, v in flat.rows)


def test_a_morris_trajectory_through_an_undefined_point_is_left_out_and_counted() -> None:
    factors = parse_factors(["beta.competing", "mediator.calming"])
    design = make_design(factors, MORRIS, 4, 0)
    y = 5.0 * design.X[:, 0]
    y[len(factors) + 1] = math.nan  # the first point of the second trajectory
    found = rank(design, y, ("rule", GAIN))
    assert found.note.startswith("1 of 4 trajectories left out, undefined at 1 of 12 points")
    kept, kept_y = complete_trajectories(design, y)
    assert kept.samples == 3 and len(kept.X) == 9 and not np.isnan(kept_y).any()
    assert found.rows == rank(kept, kept_y, ("rule", GAIN)).rows
    assert [name for name, _ in found.rows] == ["beta.competing", "mediator.calming"]


def test_a_sobol_sample_with_an_undefined_point_is_not_ranked() -> None:
    design = make_design(parse_factors(["beta.competing", "mediator.calming"]), SOBOL, 8, 0)
    y = design.X[:, 0].copy()
    y[3] = math.nan
    found = rank(design, y, ("rule", GAIN))
    assert found.rows == [] and found.note.startswith("undefined at 1 of 32 points")


@pytest.mark.parametrize("method", [MORRIS, SOBOL])
def test_the_intervals_are_the_same_on_every_run_of_a_seed(method: str) -> None:
    # Seed 0 included: SALib's Sobol analysis reads 0 as no seed at all.
    design = make_design(parse_factors(["beta.competing", "mediator.calming"]), method, 8, 0)
    y = np.sin(3.0 * design.X[:, 0]) + design.X[:, 1] ** 2
    assert rank(design, y, ("rule", GAIN)).rows == rank(design, y.copy(), ("rule", GAIN)).rows


def test_an_s1_estimate_above_its_st_is_flagged() -> None:
    rows = [
        ("a", {"S1": 0.974, "S1_conf": 0.1, "ST": 0.696, "ST_conf": 0.1}),
        ("b", {"S1": 0.5, "S1_conf": 0.9, "ST": 0.4, "ST_conf": 0.9}),
        ("c", {"S1": 0.2, "S1_conf": 0.1, "ST": 0.3, "ST_conf": 0.1}),
    ]
    warning = first_order_above_total(rows)
    assert "a (0.974 > 0.696, beyond the CIs)" in warning and "b (0.5 > 0.4)" in warning
    assert "c (" not in warning and first_order_above_total(rows[2:]) == ""


def test_the_ranking_follows_the_effect(tmp_path: Path) -> None:
    """On a known function: y = 5 * (first parameter), the second does nothing."""
    factors = parse_factors(["beta.competing", "mediator.calming"])
    for method, key in ((MORRIS, "mu_star"), (SOBOL, "ST")):
        design: Design = make_design(factors, method, 8, 3)
        found = rank(design, 5.0 * design.X[:, 0], ("rule", GAIN))
        assert [name for name, _ in found.rows] == ["beta.competing", "mediator.calming"]
        assert found.rows[0][1][key] > 0 and found.rows[1][1][key] == pytest.approx(0.0)


def test_outputs_keep_the_named_metrics_in_order() -> None:
    means: list[Means] = [
        {("none", TURNS): 1.0, ("rule", TURNS): 2.0, ("rule", GAIN): 3.0},
        {("none", TURNS): 1.5, ("rule", TURNS): 2.5},
    ]
    ys = outputs(means, (GAIN, TURNS))
    assert list(ys) == [("rule", GAIN), ("rule", TURNS), ("none", TURNS)]
    assert math.isnan(ys[("rule", GAIN)][1])


def test_a_points_mean_counts_the_episodes_the_report_tables_count(tmp_path: Path) -> None:
    # The third gain falls back to a raw change (its twin was at full consensus): the
    # tables leave it out of their means, and so does the analysis.
    gains = [consensus_gain(0.75, 0.5), consensus_gain(0.85, 0.5), consensus_gain(0.95, 1.0)]
    store = store_with_gains(tmp_path, gains)
    means = point_means(store, "g")
    assert means[("rule", f"{socrates.EVALUATOR}:consensus_gain")] == pytest.approx(60.0)
