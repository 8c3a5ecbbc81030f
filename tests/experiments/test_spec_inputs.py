"""A spec never plans an episode id twice, nor an unbounded grid, and its scenario refs
and globs read only regular files (issue 18, items 4 and 9)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from disputelab.plan.spec import (
    MAX_EPISODES,
    ExperimentSpec,
    SpecError,
    grid_episodes,
    load_spec,
    resolve_refs,
)


def _spec(tmp_path: Path, text: str) -> Path:
    tmp_path.mkdir(exist_ok=True)
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def test_a_grid_entry_listed_twice_is_planned_once_with_a_warning_naming_it(
    tmp_path: Path,
) -> None:
    spec = load_spec(
        _spec(
            tmp_path,
            "name: dup\nscenarios: [tenancy, workplace, tenancy]\n"
            "conditions: [general, posture:competing, general]\nmediators: [rule, rule]\n"
            "replicates: 2\n",
        )
    )
    assert spec.scenarios == ["tenancy", "workplace"]
    assert spec.conditions == ["general", "posture:competing"]
    assert spec.mediators == ["rule"]
    assert spec.warnings == [
        "scenarios: tenancy listed more than once; the repeats were dropped, each is planned once",
        "conditions: general listed more than once; the repeats were dropped, each is planned once",
        "mediators: rule listed more than once; the repeats were dropped, each is planned once",
    ]
    ids = [e.episode_id for e in grid_episodes(spec, ["tenancy", "workplace"])]
    assert len(ids) == len(set(ids)) == 2 * 2 * 2 * 2  # scenarios x conditions x (twin + rule) x r


def test_the_command_prints_the_warning_and_runs_the_grid_once(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from disputelab.cli import app

    path = _spec(tmp_path, "name: dup\nscenarios: [tenancy]\nconditions: [general, general]\n")
    r = CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), "experiment", str(path)])
    assert r.exit_code == 0, r.output
    flat = " ".join(r.stderr.split())
    assert "warning:" in flat and "conditions: general listed more than once" in flat
    once = _spec(tmp_path / "once", "name: dup\nscenarios: [tenancy]\nconditions: [general]\n")
    n = len(grid_episodes(load_spec(once), ["tenancy"]))
    assert f"{n} episodes planned, {n} run" in " ".join(r.stdout.split())


def test_a_spec_without_repeats_has_no_warnings() -> None:
    assert ExperimentSpec(name="x", scenarios=["tenancy"]).warnings == []


def test_the_plan_skips_repeats_that_reach_it_any_other_way() -> None:
    spec = ExperimentSpec.model_construct(
        **{
            **ExperimentSpec(name="x", scenarios=["tenancy"]).model_dump(),
            "conditions": ["general", "general"],
            "mediators": ["rule", "rule"],
        }
    )
    ids = [e.episode_id for e in grid_episodes(spec, ["tenancy", "tenancy"])]
    assert not [i for i, n in Counter(ids).items() if n > 1]


def test_a_grid_beyond_the_episode_limit_is_refused_before_it_is_built() -> None:
    conditions = ["general", *(f"posture:{p}" for p in ("competing", "avoiding"))]
    spec = ExperimentSpec(
        name="huge", scenarios=["tenancy"], conditions=conditions, replicates=10_000
    )
    with pytest.raises(SpecError) as info:
        grid_episodes(spec, [f"s{i}" for i in range(MAX_EPISODES // 10_000)])
    assert info.value.problems == [
        "the grid has 6,000,000 episodes, more than 1,000,000; split it into smaller experiments"
    ]


def test_a_glob_that_reaches_devices_reads_none_of_them(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        resolve_refs(["/dev/[uz]*"], tmp_path)
    assert len(info.value.problems) == 1
    assert "no regular file (devices, FIFOs and folders are skipped)" in info.value.problems[0]


def test_a_glob_keeps_the_scenario_files_beside_a_fifo(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "tenancy.yaml").write_text(
        (Path(__file__).parents[2] / "disputelab" / "scenarios" / "tenancy.yaml").read_text()
    )
    os.mkfifo(tmp_path / "cases" / "pipe.yaml")
    assert list(resolve_refs(["cases/*.yaml"], tmp_path)) == ["tenancy"]


@pytest.mark.parametrize("ref", ["/dev/zero", "promediate:/dev/zero", "agentmediation:/dev/zero"])
def test_a_device_named_in_a_spec_is_one_problem(tmp_path: Path, ref: str) -> None:
    with pytest.raises(SpecError) as info:
        resolve_refs([ref], tmp_path)
    assert len(info.value.problems) == 1
    assert "/dev/zero: is a device, not a regular file" in info.value.problems[0]


def test_a_runaway_ref_is_refused_by_validation(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as info:
        load_spec(_spec(tmp_path, f"name: long\nscenarios: ['{'x' * 5000}']\n"))
    assert info.value.problems == [
        "scenarios[0]: is 5,000 characters long, more than the 4096 allowed; shorten it"
    ]


def test_a_spec_file_that_is_a_device_is_refused_without_reading_it() -> None:
    with pytest.raises(SpecError) as info:
        load_spec("/dev/zero")
    assert info.value.problems == [
        "is a device, not a regular file; give an experiment spec (.yaml)"
    ]
