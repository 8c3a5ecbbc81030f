"""Experiment grids: validated specs, deterministic plans, resume after a kill, tables."""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.plan.spec import ExperimentSpec, SpecError, grid_episodes, load_spec
from disputelab.store.sqlite import DB_NAME, Store
from tests.helpers import WAIT_S

SPEC = """name: grid
scenarios: [tenancy, workplace]
conditions: [general, posture:competing]
mediators: [rule, none]
replicates: 3
budget: 40
"""


def _write(tmp_path: Path, text: str = SPEC) -> Path:
    p = tmp_path / "spec.yaml"
    p.write_text(text)
    return p


def test_the_plan_shares_one_unmediated_twin_across_mediators() -> None:
    spec = ExperimentSpec(name="x", scenarios=["tenancy"], mediators=["rule", "none"], replicates=2)
    episodes = grid_episodes(spec, ["tenancy"])
    ids = [e.episode_id for e in episodes]
    assert ids == [
        "x/tenancy/general/none/r0",
        "x/tenancy/general/rule/r0",
        "x/tenancy/general/none/r1",
        "x/tenancy/general/rule/r1",
    ]
    assert episodes[1].baseline_id == "x/tenancy/general/none/r0"
    assert episodes[1].seed == episodes[0].seed == 0 and episodes[3].seed == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: g\nscenarios: [tenancy]\nmediators: [oracle]\n",
            "mediators: Value error, unknown mediator oracle; the roundtable protocol takes "
            "none, rule, generic, social",
        ),
        ("name: g\nscenarios: [tenancy]\nreplicas: 3\n", "replicas: unknown field"),
        (  # a yes/no is a slip, not one replicate
            "name: g\nscenarios: [tenancy]\nreplicates: true\n",
            "replicates: a whole number, not true",
        ),
        ("name: g\nscenarios: [tenancy]\nlimit_scenarios: yes\n", "a whole number, not true"),
        (
            "name: g\nscenarios: [tenancy]\nconditions: [posture:angry]\n",
            "conditions[0]: posture:angry: use one of competing, avoiding, accommodating",
        ),
        ("name: g\nscenarios: [nope.yaml]\n", "scenarios[0]:"),
        ("name: g\n", "scenarios: missing"),
        ("name: [g\n", "cannot be read as YAML"),
    ],
)
def test_a_bad_spec_gets_one_line_per_problem_and_status_2(
    tmp_path: Path, text: str, message: str
) -> None:
    r = CliRunner().invoke(
        app, ["--store", str(tmp_path / "s"), "experiment", str(_write(tmp_path, text))]
    )
    assert r.exit_code == 2, r.output
    assert message.replace("Value error, ", "") in " ".join(r.output.split())
    assert "Traceback" not in r.output


def test_a_grid_runs_scores_and_reports(tmp_path: Path) -> None:
    runner = CliRunner()
    store_args = ["--store", str(tmp_path / "s")]
    r = runner.invoke(app, [*store_args, "experiment", str(_write(tmp_path))])
    assert r.exit_code == 0, r.output
    assert "24 episodes planned, 24 run, 0 already done, 0 failed" in " ".join(r.output.split())
    table = runner.invoke(app, [*store_args, "report", "grid"]).output
    assert "| posture:competing | rule | 6 |" in table and "Wilcoxon" in table
    rows = runner.invoke(app, [*store_args, "report", "grid", "--format", "csv"]).output
    assert len(rows.strip().splitlines()) == 1 + 24
    again = runner.invoke(app, [*store_args, "experiment", str(_write(tmp_path))])
    assert again.exit_code == 2 and "--resume" in again.output


def test_resume_after_a_kill_finishes_without_duplicates(tmp_path: Path) -> None:
    exe = shutil.which("disputelab")
    if exe is None:
        pytest.skip("the disputelab console script is not installed on PATH")
    spec = _write(
        tmp_path,
        SPEC.replace("replicates: 3", "replicates: 60").replace("budget: 40", "budget: 100"),
    )
    store_dir = tmp_path / "s"
    proc = subprocess.Popen(
        [exe, "--store", str(store_dir), "experiment", str(spec)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    db = store_dir / DB_NAME
    deadline = time.time() + WAIT_S  # only a hung child gets near this
    done = 0
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
        if db.exists():
            try:
                done = (
                    sqlite3.connect(db)
                    .execute("SELECT COUNT(*) FROM episodes WHERE status != 'incomplete'")
                    .fetchone()[0]
                )
            except sqlite3.OperationalError:
                continue
            if done >= 20:
                break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert done >= 20, "the experiment never got going"
    store = Store(store_dir)
    before = store.complete_episode_ids("grid")
    assert 0 < len(before) < 480, "the kill should land mid-run"
    r = CliRunner().invoke(app, ["--store", str(store_dir), "experiment", str(spec), "--resume"])
    assert r.exit_code == 0, r.output
    assert f"{len(before)} already done" in " ".join(r.output.split())
    ids = store.episode_ids("grid")
    assert len(ids) == len(set(ids)) == 480
    assert store.complete_episode_ids("grid") == set(ids)


def test_plots_and_parquet_for_an_experiment(tmp_path: Path) -> None:
    import pandas as pd

    runner = CliRunner()
    store_args = ["--store", str(tmp_path / "s")]
    assert runner.invoke(app, [*store_args, "experiment", str(_write(tmp_path))]).exit_code == 0
    out = tmp_path / "rows.parquet"
    r = runner.invoke(
        app,
        [
            *store_args,
            "report",
            "grid",
            "--format",
            "parquet",
            "--out",
            str(out),
            "--plots",
            str(tmp_path / "plots"),
        ],
    )
    assert r.exit_code == 0, r.output
    rows = pd.read_parquet(out)
    assert len(rows) == 24 and rows["episode_id"].is_unique
    assert rows["consensus_gain"].isna().sum() == 12  # unmediated twins have no gain
    for name in ("trajectories.png", "gain_shift.png"):
        png = (tmp_path / "plots" / name).read_bytes()
        assert png.startswith(b"\x89PNG") and len(png) > 5_000
    no_file = runner.invoke(app, [*store_args, "report", "grid", "--format", "parquet"])
    assert no_file.exit_code == 2 and "for tidy tables, with --out" in no_file.output


def test_a_spec_with_many_problems_reports_them_all_at_once(tmp_path: Path) -> None:
    text = (
        'name: "bad name"\nscenarios: [tenancy, nope.yaml]\n'
        "conditions: [posture:angry, vibes:high]\nreplicates: -1\ncolour: blue\nbudget: 0\n"
    )
    r = CliRunner().invoke(
        app, ["--store", str(tmp_path / "s"), "experiment", str(_write(tmp_path, text))]
    )
    assert r.exit_code == 2
    flat = " ".join(r.output.split())
    for where in ("name:", "replicates:", "colour:", "budget:", "conditions[0]:",
                  "conditions[1]:", "scenarios[1]:"):  # fmt: skip
        assert f"spec.yaml: {where}" in flat, where


def test_a_dry_run_prints_the_plan_and_runs_nothing(tmp_path: Path) -> None:
    spec = _write(tmp_path, SPEC)
    store = tmp_path / "s"
    r = CliRunner().invoke(app, ["--store", str(store), "experiment", str(spec), "--dry-run"])
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    assert "2 scenarios x 2 conditions x 2 mediators (rule, none)" in flat
    assert "x 3 replicates = 24 episodes" in flat and "nothing was run or stored" in flat
    assert not (store / "disputelab.sqlite").exists()


@pytest.mark.parametrize(
    ("models", "message"),
    [
        ('{mediator: "openai:"}', "unknown model 'openai:'"),
        ('{mediator: "openai:x@ftp://foo"}', "must be an http:// or https:// URL"),
        (
            '{mediator: "openai:m@http://127.0.0.1:9/v1", judge: "nonsense"}',
            "unknown model 'nonsense'",
        ),
    ],
)
def test_a_dry_run_checks_the_model_names_a_run_would_refuse(
    tmp_path: Path, models: str, message: str
) -> None:
    text = f"name: g\nscenarios: [tenancy]\nmediators: [generic]\nmodels: {models}\n"
    spec = _write(tmp_path, text)
    store = tmp_path / "s"
    r = CliRunner().invoke(app, ["--store", str(store), "experiment", str(spec), "--dry-run"])
    assert r.exit_code == 2 and message in " ".join(r.output.split()), r.output
    assert not store.exists()


def test_a_dry_run_plans_a_model_whose_key_is_not_set_yet_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    spec = _write(
        tmp_path,
        "name: g\nscenarios: [tenancy]\nmediators: [generic]\nmodels: {mediator: openai:gpt-4o}\n",
    )
    base = ["--store", str(tmp_path / "s"), "experiment", str(spec)]
    plan = CliRunner().invoke(app, [*base, "--dry-run"])
    assert plan.exit_code == 0, plan.output
    flat = " ".join(plan.output.split())
    assert "needs an API key" in flat and "the run will need it" in flat and "6 episodes" in flat
    run = CliRunner().invoke(app, base)
    assert run.exit_code == 2 and "needs an API key" in run.output


def test_overrides_make_a_quick_trial_that_resumes_with_the_same_overrides(
    tmp_path: Path,
) -> None:
    spec = _write(tmp_path, SPEC)
    base = ["--store", str(tmp_path / "s"), "experiment", str(spec)]
    quick = ["--replicates", "1", "--limit-scenarios", "1"]
    r = CliRunner().invoke(app, [*base, *quick])
    assert r.exit_code == 0, r.output
    assert "4 episodes planned, 4 run" in " ".join(r.output.split())
    config = Store(tmp_path / "s").run_info("grid")[1]
    assert (config["replicates"], config["limit_scenarios"]) == (1, 1)
    (run,) = Store(tmp_path / "s").runs()
    assert run["source"] == f"{spec.resolve()} --replicates 1 --limit-scenarios 1"
    again = CliRunner().invoke(app, [*base, *quick, "--resume"])
    assert again.exit_code == 0 and "4 already done" in " ".join(again.output.split())
    changed = CliRunner().invoke(app, [*base, "--resume"])
    assert changed.exit_code == 2 and "different replicates" in " ".join(changed.output.split())


def test_params_that_are_not_a_mapping_are_reported_not_replaced(tmp_path: Path) -> None:
    spec = _write(tmp_path, "name: g\nscenarios: [tenancy]\nparams: [1]\nbudget: 5\n")
    r = CliRunner().invoke(app, ["--store", str(tmp_path / "s"), "experiment", str(spec)])
    assert r.exit_code == 2
    assert "params: Input should be a valid dictionary" in " ".join(r.output.split())


def test_another_protocols_parameter_is_reported_beside_field_errors(tmp_path: Path) -> None:
    spec = _write(tmp_path, "name: g\nscenarios: [tenancy]\nrounds: 3\nreplicates: 0\n")
    r = CliRunner().invoke(app, ["--store", str(tmp_path / "s"), "experiment", str(spec)])
    flat = " ".join(r.output.split())
    assert r.exit_code == 2 and "replicates:" in flat
    assert "rounds: not a parameter of the roundtable protocol" in flat


def test_failed_episodes_are_grouped_by_reason_and_the_exit_status_says_so(
    tmp_path: Path,
) -> None:
    from disputelab.llm.testing import Scripted, fake_openai

    with fake_openai(lambda body: Scripted(content="I would rather not say.")) as server:
        spec = tmp_path / "mumble.yaml"
        spec.write_text(
            "name: mumble\nscenarios: [tenancy]\nconditions: [general]\nmediators: [none]\n"
            f"parties: llm\nmodels: {{parties: 'openai:m@{server.url}'}}\n"
            "replicates: 2\nbudget: 2\n"
        )
        r = CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), "experiment", str(spec)])
    assert r.exit_code == 1, r.output
    text = " ".join(r.output.split())
    assert "2 episode(s) failed, by reason:" in text
    assert "2 x ModelReplyError:" in text  # one reason, counted once per episode
    assert "retried by --resume" in text


def test_a_bad_protocol_parameter_is_reported_once(tmp_path: Path) -> None:
    text = "name: x\nscenarios: [tenancy]\nconditions: [general]\nbudget: -5\n"
    r = CliRunner().invoke(
        app, ["--store", str(tmp_path / "s"), "experiment", str(_write(tmp_path, text))]
    )
    assert r.exit_code == 2
    assert r.output.count("budget:") == 1, r.output


@pytest.mark.parametrize("replicates", [0, 1])  # with and without a field error beside them
def test_every_bad_protocol_parameter_is_reported_on_its_own_line(
    tmp_path: Path, replicates: int
) -> None:
    text = (
        f"name: x\nscenarios: [tenancy]\nreplicates: {replicates}\nbudget: -5\n"
        "params:\n  rounds: 3\n  turn_taking: sideways\n"
    )
    r = CliRunner().invoke(
        app, ["--store", str(tmp_path / "s"), "experiment", str(_write(tmp_path, text))]
    )
    assert r.exit_code == 2
    lines = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    params = [line for line in lines if "replicates:" not in line]
    assert len(params) == 3, r.stderr
    assert any("budget: turn budget must be at least 1" in line for line in params)
    assert any("turn_taking: Input should be 'cyclic' or 'motivated'" in line for line in params)
    assert any("rounds: not a parameter of the roundtable protocol" in line for line in params)
    assert len(lines) == 3 + (replicates == 0)


@pytest.mark.parametrize("replicates", [0, 1])  # with and without a field error beside it
def test_a_parameter_given_at_the_top_level_and_in_params_is_refused(
    tmp_path: Path, replicates: int
) -> None:
    text = (
        f"name: x\nscenarios: [tenancy]\nreplicates: {replicates}\nbudget: 40\n"
        "params:\n  budget: 20\n"
    )
    r = CliRunner().invoke(
        app, ["--store", str(tmp_path / "s"), "experiment", str(_write(tmp_path, text))]
    )
    assert r.exit_code == 2
    assert "budget given both at the top level and in params; keep one" in r.stderr
    assert ("replicates:" in r.stderr) == (replicates == 0)
    assert r.stderr.count("error:") == 1 + (replicates == 0)


@pytest.mark.parametrize("rounds", [3, -3])
def test_a_presets_parameters_are_checked_beside_a_field_error(tmp_path: Path, rounds: int) -> None:
    # The preset sets the protocol: its parameters are not those of the default protocol,
    # and are checked against its own.
    text = (
        f"name: x\nscenarios: [tenancy]\nreplicates: 0\npreset: agentmediation\nrounds: {rounds}\n"
    )
    r = CliRunner().invoke(
        app, ["--store", str(tmp_path / "s"), "experiment", str(_write(tmp_path, text))]
    )
    assert r.exit_code == 2
    assert "replicates:" in r.stderr
    assert "not a parameter" not in r.stderr, r.stderr
    bad = "rounds: bargaining rounds must be 0 or more, got -3"
    assert (bad in r.stderr) == (rounds < 0), r.stderr
    assert r.stderr.count("error:") == 1 + (rounds < 0)


def test_two_causes_in_a_cell_are_refused_only_when_a_model_writes_them(tmp_path: Path) -> None:
    text = "name: x\nscenarios: [tenancy]\nconditions: ['cause:legal,cause:resource']\n"
    offline = load_spec(_write(tmp_path, text))
    assert offline.conditions == ["cause:legal,cause:resource"]
    with pytest.raises(SpecError) as caught:
        load_spec(_write(tmp_path, text + "models: {writer: 'openai:m@http://127.0.0.1:9'}\n"))
    (problem,) = caught.value.problems
    assert problem.startswith("conditions[0]: cause:legal and cause:resource with a writer")


def test_conditions_a_writer_cannot_write_are_said_one_per_line_beside_field_errors(
    tmp_path: Path,
) -> None:
    text = (
        "name: x\nscenarios: [tenancy]\nreplicates: {r}\n"
        "conditions: ['cause:legal,cause:resource', 'cause:misconduct,cause:external']\n"
        "models: {{writer: 'openai:m@http://127.0.0.1:9'}}\n"
    )
    for replicates in ("1", "x"):
        with pytest.raises(SpecError) as caught:
            load_spec(_write(tmp_path, text.format(r=replicates)))
        problems = caught.value.problems
        written = [p for p in problems if "with a writer model" in p]
        assert [p[:14] for p in written] == ["conditions[0]:", "conditions[1]:"], problems
        assert len(problems) == 2 + (replicates == "x"), problems


@pytest.mark.parametrize(
    ("preset", "said"),
    [
        ("nosuch", "preset: unknown 'nosuch'; use "),
        ("agentmediation", "preset agentmediation plays the staged protocol, not bilateral"),
    ],
)
def test_a_faulty_preset_is_said_beside_the_other_field_errors(
    tmp_path: Path, preset: str, said: str
) -> None:
    text = (
        f"name: x\nscenarios: [tenancy]\nreplicates: 0\nprotocol: bilateral\npreset: {preset}\n"
        "rounds: 3\n"
    )
    with pytest.raises(SpecError) as caught:
        load_spec(_write(tmp_path, text))
    problems = caught.value.problems
    assert any(p.startswith(said) for p in problems), problems
    assert any(p.startswith("replicates:") for p in problems), problems
    assert not any("(top level)" in p or "not a parameter" in p for p in problems), problems
    assert len(problems) == 2


def test_a_params_that_is_not_a_mapping_does_not_make_top_level_parameters_unknown(
    tmp_path: Path,
) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(_write(tmp_path, "name: x\nscenarios: [tenancy]\nparams: 5\nbudget: 40\n"))
    (problem,) = caught.value.problems
    assert problem.startswith("params:"), problem
