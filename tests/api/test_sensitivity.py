"""`disputelab.api.sensitivity`: a design over behaviour parameters, played point by point
as stored grids, ranked, and written as a table, rows and a plot."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from disputelab import api
from disputelab.api import sensitivity as sa

SPEC = """name: probe
scenarios: [tenancy]
conditions: [posture:competing]
mediators: [rule]
replicates: 1
budget: 20
"""


@pytest.fixture
def spec_path(tmp_path: Path) -> Path:
    path = tmp_path / "probe.yaml"
    path.write_text(SPEC, encoding="utf-8")
    return path


def test_a_spec_names_its_headline_metrics_and_the_parameters_its_conditions_move(
    spec_path: Path,
) -> None:
    spec = sa.load_spec(spec_path)
    sa.check_protocol(spec)
    assert "beta.competing" in sa.default_parameters(spec)
    assert sa.headline_metrics(spec) and all(":" in m for m in sa.headline_metrics(spec))
    assert sa.default_samples("morris") == 4 and sa.default_samples("sobol") == 8


def test_a_metric_no_evaluator_of_the_grid_stores_is_named_before_anything_runs(
    spec_path: Path,
) -> None:
    spec = sa.load_spec(spec_path)
    assert sa.unscored_metric(spec, sa.headline_metrics(spec)) is None
    assert sa.unscored_metric(spec, ["nobody:gain"]) == "nobody:gain"
    assert sa.scored_evaluators(spec)


def test_a_design_refuses_a_method_or_a_parameter_it_does_not_know() -> None:
    with pytest.raises(api.DisputelabError, match="unknown method"):
        sa.design(["beta.competing"], "guess", 2)
    with pytest.raises(api.DisputelabError):
        sa.design(["no.such.parameter"], "morris", 2)


def test_a_design_is_played_ranked_and_written(spec_path: Path, tmp_path: Path) -> None:
    spec = sa.load_spec(spec_path)
    design = sa.design(["beta.competing"], "morris", 1, seed=0)
    specs, size = sa.point_grid(spec, spec_path, design)
    assert len(specs) == len(design.X) == 2 and size == 2  # the rule mediator and its twin
    store = api.open_store(tmp_path / "runs")
    try:
        assert sa.stored_progress(store, specs, size) == ([], 0)
        hub = api.open_models([], store=store)
        points: list[str] = []
        found = asyncio.run(
            sa.evaluate_points(
                store, specs, spec_path.parent, hub, size, on_point=lambda n, m: points.append(n)
            )
        )
        assert found.run == found.distinct == len(points) and not found.interrupted
        stored, done = sa.stored_progress(store, specs, size)
        assert len(stored) == done == found.distinct  # what resuming would reuse
    finally:
        store.close()
    wanted = sa.headline_metrics(spec)
    ranked = sa.rank(design, found, wanted)
    assert ranked and {r.output[1] for r in ranked} <= set(wanted)
    text = sa.sensitivity_markdown(spec, design, ranked, found, size)
    assert text.startswith("# Sensitivity of probe: morris") and "| beta.competing |" in text
    written = sa.write_results(tmp_path / "out", text, design, ranked)
    assert [p.name for p in written] == ["sensitivity.md", "sensitivity.csv", "sensitivity.png"]
    assert all(p.stat().st_size > 0 for p in written)


def test_write_results_says_in_one_line_when_the_folder_cannot_be_written(
    spec_path: Path, tmp_path: Path
) -> None:
    (tmp_path / "afile").write_text("mine")
    design = sa.design(["beta.competing"], "morris", 1)
    with pytest.raises(sa.WriteError, match="cannot write to"):
        sa.write_results(tmp_path / "afile", "# x\n", design, [])


def test_a_label_names_the_arm_only_where_the_grid_has_several() -> None:
    assert sa.label(("rule", "socrates-oracle:consensus_gain"), single=True) == (
        "socrates-oracle:consensus_gain"
    )
    assert sa.label(("none", "m"), single=False) == "m (none)"
