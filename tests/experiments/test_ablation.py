"""`ablate:`: the grid again with behaviour parameters at neutral, stored on its own and
reported beside the original."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.experiments.resume import changed_fields
from disputelab.plan.ablation import (
    ablated_name,
    ablated_spec,
    ablated_specs,
    expand_targets,
    target_parameters,
)
from disputelab.plan.spec import ExperimentSpec, SpecError, load_spec
from disputelab.store.sqlite import Store


def _spec(tmp_path: Path, **fields: object) -> Path:
    data = {
        "name": "abl",
        "scenarios": ["tenancy", "workplace"],
        "conditions": ["general", "posture:competing", "parties:+1"],
        "mediators": ["rule"],
        "replicates": 2,
        **fields,
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_target_is_a_parameter_or_the_parameters_a_condition_acts_through() -> None:
    assert target_parameters("mediator.calming") == ("mediator.calming",)
    assert "beta.competing" in target_parameters("posture:competing")
    with pytest.raises(ValueError, match="structural"):
        target_parameters("parties:+1")
    with pytest.raises(ValueError, match="no neutral value"):
        target_parameters("resentment.walk_away")
    with pytest.raises(ValueError, match="unknown behaviour parameter"):
        target_parameters("mediator.calm")
    for bad in ("posture:nope", "culture:XX-US", "cause:nonsense", "strategy:x@y"):
        with pytest.raises(ValueError, match=bad.split(":")[0]):
            target_parameters(bad)
    with pytest.raises(ValueError, match="empty"):
        target_parameters(" ")


def test_each_stands_for_every_condition_that_acts_through_parameters() -> None:
    conditions = ["general", "posture:competing", "parties:+1", "culture:US-CN"]
    assert expand_targets(["each", "posture:competing"], conditions) == [
        "posture:competing",
        "culture:US-CN",
    ]


def test_conditions_with_the_same_parameters_share_one_ablated_grid() -> None:
    conditions = ["strategy:competing@one", "strategy:competing@all", "culture:US-CN"]
    assert expand_targets(["each"], conditions) == ["strategy:competing@one", "culture:US-CN"]
    assert expand_targets(["culture:CN-KR", "each"], conditions) == [
        "culture:CN-KR",
        "strategy:competing@one",
    ]


def test_a_bad_target_is_one_line_in_the_spec_problems(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        load_spec(_spec(tmp_path, ablate=["parties:+1"]))
    assert any("nothing to set to neutral" in p for p in info.value.problems)


def test_llm_parties_have_nothing_to_ablate(tmp_path: Path) -> None:
    path = _spec(tmp_path, ablate=["each"], parties="llm", models={"parties": "local"})
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert any("no rule policy" in p for p in info.value.problems)


def test_the_ablated_grid_is_the_same_grid_with_neutral_values(tmp_path: Path) -> None:
    spec = load_spec(_spec(tmp_path, behaviour={"mediator.calming": 0.3}))
    grid = ablated_spec(spec, "posture:competing")
    assert grid.name == ablated_name("abl", "posture:competing") == "abl.ablate.posture-competing"
    assert grid.ablation_of == "abl" and grid.ablated == "posture:competing"
    behaviour = grid.params["behaviour"]
    assert behaviour["mediator.calming"] == 0.3  # the spec's own setting stays
    # A posture replaces every party's strategy, so every strategy's parameters go neutral.
    for mode in ("competing", "accommodating", "avoiding", "collaborating"):
        assert behaviour[f"beta.{mode}"] == 1.0
    assert behaviour["self_weight.competing"] == behaviour["self_weight.accommodating"] == 1.0
    assert behaviour["tone.competing_flare"] == 0.0
    assert (grid.scenarios, grid.conditions, grid.replicates) == (
        spec.scenarios,
        spec.conditions,
        spec.replicates,
    )


def test_adding_ablations_to_a_finished_grid_is_not_a_changed_spec(tmp_path: Path) -> None:
    before = load_spec(_spec(tmp_path))
    after = load_spec(_spec(tmp_path, ablate=["each"]))
    assert changed_fields(before.model_dump(), after) == []
    other = ExperimentSpec.model_validate({**after.model_dump(), "replicates": 3})
    assert changed_fields(before.model_dump(), other) == ["replicates"]


def test_experiment_runs_and_reports_each_ablation(tmp_path: Path) -> None:
    store = tmp_path / "runs"
    spec = _spec(tmp_path)
    cli = CliRunner()
    first = cli.invoke(app, ["--store", str(store), "experiment", str(spec)])
    assert first.exit_code == 0, first.output
    again = cli.invoke(
        app,
        ["--store", str(store), "experiment", str(spec), "--resume", "--ablate", "each"],
    )
    assert again.exit_code == 0, again.output
    assert "abl.ablate.posture-competing" in again.output
    runs = {r["run_id"] for r in Store(store).runs()}
    assert runs == {"abl", "abl.ablate.posture-competing"}
    report = cli.invoke(app, ["--store", str(store), "report", "abl"])
    assert report.exit_code == 0, report.output
    text = report.output
    assert "## Ablation" in text
    ablation = text.split("## Ablation", 1)[1]
    rows = [line for line in ablation.splitlines() if line.startswith("| posture:competing |")]
    assert rows
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        # Rule agents read a posture only through the parameters the grid set to neutral,
        # so each ablated effect is exactly zero and nothing can read as emergent.
        assert cells[5] == "+0", row
        assert cells[7] in ("assumption", "no significant effect"), row
    ablated = next(line for line in text.splitlines() if line.startswith("Ablated: "))
    assert "`posture:competing` (" in ablated
    assert "beta.competing=1" in ablated and "tone.competing_flare=0" in ablated


def test_a_grid_started_before_disclosure_existed_resumes_only_under_full(
    tmp_path: Path,
) -> None:
    """Its episodes were played by broadcasting parties: resuming it under today's default
    (negotiator) would mix two policies in one table, so that is a changed spec."""
    old = load_spec(_spec(tmp_path)).model_dump()
    del old["params"]["disclosure"]
    assert changed_fields(old, load_spec(_spec(tmp_path))) == ["disclosure"]
    assert changed_fields(old, load_spec(_spec(tmp_path, disclosure="full"))) == []


def test_a_dry_run_counts_the_ablated_grids(tmp_path: Path) -> None:
    spec = _spec(tmp_path, ablate=["each"])
    result = CliRunner().invoke(
        app, ["--store", str(tmp_path / "runs"), "experiment", str(spec), "--dry-run"]
    )
    assert result.exit_code == 0, result.output
    assert "ablation: 1 more grid(s) of 24 episodes" in " ".join(result.output.split())


def test_a_bad_target_is_said_beside_another_field_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        load_spec(_spec(tmp_path, ablate=["parties:+1"], replicates=0))
    problems = info.value.problems
    assert any(p.startswith("replicates:") for p in problems), problems
    assert any(p.startswith("ablate: parties:+1 acts through no behaviour") for p in problems)
    assert len(problems) == 2


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        (
            {"protocol": "show-of-hands", "mediators": ["counter"]},
            "protocol's agents have no behaviour",
        ),
        ({"parties": "llm", "models": {"parties": "local"}}, "llm parties have no rule policy"),
    ],
)
def test_agents_with_nothing_to_ablate_get_one_line_not_one_per_target(
    tmp_path: Path, fields: dict[str, object], said: str, toy: object
) -> None:
    spec = _spec(tmp_path, ablate=["nonsense.x", "parties:+1"], conditions=["general"], **fields)
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    ablate = [p for p in info.value.problems if p.startswith("ablate:")]
    assert len(ablate) == 1 and said in ablate[0], info.value.problems


def test_a_settlement_posture_ablation_sets_the_counsel_eagerness_to_neutral(
    tmp_path: Path,
) -> None:
    spec = load_spec(
        _spec(
            tmp_path,
            protocol="settlement",
            scenarios=["builtin:settle-gym-slip"],
            conditions=["general", "posture:competing"],
            mediators=["direct", "mcts"],
            ablate=["posture:competing"],
        )
    )
    (ablated,) = ablated_specs(spec)
    neutral = ablated.params["behaviour"]
    assert neutral["settlement.eagerness.competing"] == 1.0
    assert not any(n.startswith("bilateral.") for n in neutral)
