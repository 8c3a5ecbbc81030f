"""Staged experiments, the per-axis report, built-in globs, evaluators in specs, and the
curate and import commands end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.plan.spec import ExperimentSpec, grid_episodes, resolve_scenarios
from disputelab.scenario import builtin_scenarios
from disputelab.scenario.importers.agentmediation import import_agentmediation
from disputelab.store.sqlite import Store
from tests.curation import drafts
from tests.helpers import AGENTMEDIATION_CASES, PROMEDIATE


def _cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), *args])
    return result.exit_code, result.output


def _spec(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "spec.yaml"
    p.write_text(text, encoding="utf-8")
    return p


def test_builtin_patterns_name_every_matching_built_in() -> None:
    spec = ExperimentSpec(name="x", scenarios=["builtin:*"])
    # A pattern passes over the built-ins the protocol cannot play (price-only ones here).
    topical = {sid for sid, s in builtin_scenarios().items() if s.topics}
    assert set(resolve_scenarios(spec, Path("."))) == topical
    spec = ExperimentSpec(name="x", scenarios=["builtin:t*"])
    assert set(resolve_scenarios(spec, Path("."))) == {"tenancy"}


def test_staged_plans_have_no_unmediated_twins() -> None:
    spec = ExperimentSpec(name="x", scenarios=["tenancy"], protocol="staged", replicates=2)
    episodes = grid_episodes(spec, ["tenancy"])
    assert [e.episode_id for e in episodes] == [
        "x/tenancy/general/rule/r0",
        "x/tenancy/general/rule/r1",
    ]
    assert all(e.baseline_id is None for e in episodes)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: g\nscenarios: [tenancy]\nprotocol: staged\nmediators: [none]\n",
            "the staged protocol takes rule, llm, not none",
        ),
        (
            "name: g\nscenarios: [tenancy]\nmediators: [llm]\n",
            "the roundtable protocol takes none, rule, generic, social, not llm",
        ),
        ("name: g\nscenarios: [tenancy]\nevaluators: [vibes]\n", "unknown evaluator vibes"),
        (
            "name: g\nscenarios: [tenancy]\nevaluators: [outcome-judges]\n",
            "outcome-judges need a judge model",
        ),
        ("name: g\nscenarios: ['builtin:zz*']\n", "builtin:zz* matches no built-in scenario"),
        ("name: g\nscenarios: [tenancy]\nparties: llm\n", "llm parties need models"),
        (
            "name: g\nscenarios: [tenancy]\nmediators: [social]\n",
            "social need models: {mediator: MODEL}",
        ),
        (
            "name: g\nscenarios: [tenancy]\nconditions: [expertise:ek-top3]\n",
            "expertise applies to the staged protocol",
        ),
    ],
)
def test_bad_specs_fail_with_one_line_and_status_2(tmp_path: Path, text: str, message: str) -> None:
    code, out = _cli(tmp_path, "experiment", str(_spec(tmp_path, text)))
    assert code == 2, out
    assert message in " ".join(out.split())
    assert "Traceback" not in out


def test_a_staged_experiment_reports_in_the_strategy_table_layout(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path,
        "name: legal\nprotocol: staged\nscenarios: [tenancy, workplace]\n"
        "conditions: [general, strategy:compromising@all, strategy:competing@all]\n"
        "replicates: 2\nrounds: 3\n",
    )
    code, out = _cli(tmp_path, "experiment", str(spec))
    assert code == 0, out
    assert "12 episodes planned, 12 run" in " ".join(out.split())
    code, report = _cli(tmp_path, "report", "legal")
    assert code == 0, report
    assert "(AgentMediation Table 5)" in report
    assert "| Setting | NUM=1 SR↑ | NUM=1 Sat↑ | NUM=1 Con↑ | NUM=1 LR↓ | NUM=ALL SR↑" in report
    assert "| + Competing |" in report and "| Default Setting |" in report
    store = Store(tmp_path / "runs")
    scored = [s.metric for s in store.scores("legal/tenancy/general/rule/r0")]
    assert {"success", "satisfaction", "consensus", "litigation_risk"} <= set(scored)


def test_the_roundtable_report_has_the_per_axis_gain_table_and_plot(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path,
        "name: axes\nscenarios: [tenancy, workplace]\n"
        "conditions: [general, posture:competing, culture:US-CN, culture:CN-KR]\n"
        "replicates: 2\nbudget: 40\n",
    )
    assert _cli(tmp_path, "experiment", str(spec))[0] == 0
    code, report = _cli(tmp_path, "report", "axes", "--plots", str(tmp_path / "plots"))
    assert code == 0, report
    assert "## Consensus gain by axis (paired effect against `general`" in report
    assert "| culture | (axis mean) | rule |" in report
    assert "| posture | posture:competing | rule |" in report
    for name in ("trajectories.png", "gain_shift.png", "axis_gain.png"):
        assert (tmp_path / "plots" / name).stat().st_size > 1000


def test_extra_evaluators_in_a_spec_run_after_the_episodes(tmp_path: Path) -> None:
    spec = _spec(
        tmp_path,
        "name: ev\nscenarios: [tenancy]\nreplicates: 1\nbudget: 20\nevaluators: [self-report]\n",
    )
    assert _cli(tmp_path, "experiment", str(spec))[0] == 0
    store = Store(tmp_path / "runs")
    evaluators = {s.evaluator for s in store.scores("ev/tenancy/general/rule/r0")}
    assert "socrates-oracle" in evaluators
    assert any(e.startswith("self-report") or "self-report" in e for e in evaluators)


@pytest.mark.data("agentmediation")
def test_agentmediation_import_names_bad_lines_and_imports_the_rest(tmp_path: Path) -> None:
    lines = AGENTMEDIATION_CASES.read_text(encoding="utf-8").splitlines()[:2]
    src = tmp_path / "mixed.jsonl"
    src.write_text("\n".join([lines[0], "{broken", lines[1]]) + "\n", encoding="utf-8")
    code, out = _cli(
        tmp_path,
        "scenarios",
        "import",
        "--from",
        "agentmediation",
        str(src),
        "--out",
        str(tmp_path / "cases"),
    )
    flat = " ".join(out.split())
    assert code == 2
    assert f"{src}:2: not valid JSON" in flat
    assert "imported 2 case(s)" in flat and "1 skipped" in flat
    written = sorted(p.name for p in (tmp_path / "cases").iterdir())
    # The two cases read, and the import's record of what it wrote (for importing again).
    ids = [s.id for s in import_agentmediation(src).scenarios]
    assert written == sorted([".imported.json", *(f"{sid}.yaml" for sid in ids)])
    code, out = _cli(
        tmp_path, "run", str(tmp_path / "cases" / f"{ids[0]}.yaml"), "--protocol", "staged"
    )
    assert code == 0, out
    assert "legal_basis_recall" in out and "points_rouge_l" in out


def test_curate_keeps_a_hard_recast_and_logs_an_easy_one(tmp_path: Path) -> None:
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "bakery.txt").write_text("A cafe stopped paying its bakery after mouldy bread.")
    (seeds / "mixup.txt").write_text("Two neighbours argue about a hedge, then agree at once.")

    def reply(body: dict[str, object]) -> Scripted:
        text = json.dumps(body["messages"], ensure_ascii=False)
        return Scripted(content=drafts.text(drafts.easy() if "hedge" in text else drafts.hard()))

    with fake_openai(reply) as server:
        code, out = _cli(
            tmp_path,
            "curate",
            str(seeds),
            "--model",
            f"openai:m@{server.url}",
            "--out",
            str(tmp_path / "curated"),
        )
    flat = " ".join(out.split())
    assert code == 0, out
    assert "1 kept, 1 rejected" in flat
    kept = list((tmp_path / "curated").glob("*.yaml"))
    assert len(kept) == 1
    log = (tmp_path / "curated" / "rejected.jsonl").read_text().splitlines()
    assert len(log) == 1 and json.loads(log[0])["stage"] in ("filter", "validate")


@pytest.mark.data("agentmediation")
def test_a_spec_can_name_an_importer_source_and_bad_records_are_listed(tmp_path: Path) -> None:
    src = tmp_path / "cases.jsonl"
    lines = AGENTMEDIATION_CASES.read_text(encoding="utf-8").splitlines()[:3]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    spec = ExperimentSpec(name="x", scenarios=[f"agentmediation:{src.name}"], protocol="staged")
    ids = sorted(s.id for s in import_agentmediation(src).scenarios)
    assert len(ids) == 3 and sorted(resolve_scenarios(spec, tmp_path)) == ids
    src.write_text("\n".join([lines[0], "not json"]) + "\n", encoding="utf-8")
    code, out = _cli(
        tmp_path,
        "experiment",
        str(
            _spec(
                tmp_path, "name: y\nprotocol: staged\nscenarios: ['agentmediation:cases.jsonl']\n"
            )
        ),
    )
    assert code == 2 and "cases.jsonl:2: not valid JSON" in " ".join(out.split())


@pytest.mark.data("promediate")
def test_an_id_imported_into_the_store_library_runs_by_name(tmp_path: Path) -> None:
    hmo = PROMEDIATE / "hmo.json"
    code, out = _cli(tmp_path, "scenarios", "import", "--from", "promediate", str(hmo))
    assert code == 0, out
    assert (tmp_path / "runs" / "library" / "hmo.yaml").is_file()
    code, out = _cli(tmp_path, "run", "hmo", "--mediator", "rule", "--budget", "30")
    assert code == 0, out
    code, out = _cli(tmp_path, "run", "nowhere")
    assert code == 2 and "not a built-in scenario, a scenario imported into" in " ".join(
        out.split()
    )


def test_resume_refuses_a_spec_that_changed_and_keeps_the_run_as_it_was(tmp_path: Path) -> None:
    text = "name: same\nscenarios: [tenancy]\nreplicates: 1\nbudget: 20\n"
    assert _cli(tmp_path, "experiment", str(_spec(tmp_path, text)))[0] == 0
    changed = text.replace("budget: 20", "budget: 30") + "concurrency: 2\n"
    code, out = _cli(tmp_path, "experiment", str(_spec(tmp_path, changed)), "--resume")
    assert code == 2
    assert "was started with a different budget" in " ".join(out.split())
    # concurrency alone may change on resume
    code, out = _cli(
        tmp_path, "experiment", str(_spec(tmp_path, text + "concurrency: 2\n")), "--resume"
    )
    assert code == 0 and "0 run, 2 already done" in " ".join(out.split())


def test_a_start_that_fails_on_the_spec_leaves_no_run_behind(tmp_path: Path) -> None:
    bad = "name: first\nprotocol: staged\nscenarios: [tenancy]\nconditions: [expertise:ek-top3]\n"
    code, out = _cli(tmp_path, "experiment", str(_spec(tmp_path, bad)))
    assert code == 2 and "needs a statute corpus" in " ".join(out.split())
    good = bad.replace("expertise:ek-top3", "general")
    code, out = _cli(tmp_path, "experiment", str(_spec(tmp_path, good)))  # no --resume needed
    assert code == 0, out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "tenancy", "--corpus", "x.jsonl"], "--corpus serves the expertise condition"),
        (
            ["run", "tenancy", "--condition", "expertise:ek-top3"],
            "the expertise condition applies to the staged protocol",
        ),
    ],
)
def test_options_that_would_do_nothing_are_refused(
    tmp_path: Path, args: list[str], message: str
) -> None:
    code, out = _cli(tmp_path, *args)
    assert code == 2 and message in " ".join(out.split())


def test_curate_exits_2_when_a_seed_source_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with fake_openai(lambda body: Scripted(content=drafts.text(drafts.hard()))) as server:
        code, out = _cli(
            tmp_path,
            "curate",
            str(tmp_path / "empty"),
            "--model",
            f"openai:m@{server.url}",
            "--out",
            str(tmp_path / "cur"),
        )
    assert code == 2 and "1 seed source(s) could not be read" in " ".join(out.split())


def test_resume_compares_a_spec_stored_before_protocol_params_existed(tmp_path: Path) -> None:
    # Earlier versions stored every protocol's parameters at the top level of every config.
    old = {
        "name": "older",
        "scenarios": ["tenancy"],
        "protocol": "roundtable",
        "replicates": 1,
        "budget": 20,
        "rounds": 5,
    }
    Store(tmp_path / "runs").create_run("experiment", "older", old, run_id="older")
    # Those versions also came before `disclosure`: their rule parties stated everything.
    text = "name: older\nscenarios: [tenancy]\nreplicates: 1\nbudget: {}\ndisclosure: full\n"
    code, out = _cli(tmp_path, "experiment", str(_spec(tmp_path, text.format(30))), "--resume")
    assert code == 2 and "was started with a different budget;" in " ".join(out.split())
    plain = text.replace("disclosure: full\n", "")
    code, out = _cli(tmp_path, "experiment", str(_spec(tmp_path, plain.format(20))), "--resume")
    assert code == 2 and "was started with a different disclosure;" in " ".join(out.split())
    code, out = _cli(tmp_path, "experiment", str(_spec(tmp_path, text.format(20))), "--resume")
    assert code == 0, out
