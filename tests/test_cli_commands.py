"""The command-line contract: what users type, what they see, and exit status 2 on bad input."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.store.sqlite import Store

runner = CliRunner()


def _run(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["--store", str(tmp_path / "runs"), *args])
    return result.exit_code, result.output


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_run_with_a_mediator_reports_stop_reason_and_the_three_metrics(tmp_path: Path) -> None:
    # The README's worked example, which rule parties play under full disclosure: as
    # negotiators (the default since issue 14) the unmediated tenancy twin settles too.
    code, out = _run(tmp_path, "run", "tenancy", "--mediator", "rule", "--disclosure", "full")
    assert code == 0, out
    flat = _flat(out)
    assert "stop: budget: turn budget of 100 party turns ran out" in flat
    assert "stop: resolved: all 2 parties signalled consensus" in flat
    for metric in ("consensus_gain", "intervention_timeliness", "intervention_effectiveness"):
        assert metric in out


def test_the_same_seed_gives_the_same_transcript(tmp_path: Path) -> None:
    texts = []
    for _ in range(2):
        assert _run(tmp_path, "run", "workplace", "--mediator", "rule", "--seed", "7")[0] == 0
        code, out = _run(tmp_path, "report", "last", "--format", "json")
        assert code == 0
        data = json.loads(out)
        texts.append([[t["text"] for t in e["turns"]] for e in data["episodes"]])
    assert texts[0] == texts[1]


def test_report_formats(tmp_path: Path) -> None:
    _run(tmp_path, "run", "tenancy", "--mediator", "rule")
    code, md = _run(tmp_path, "report", "last")
    assert code == 0 and "### Transcript" in md and "party turn 1 · Mira Okafor" in md
    assert "| consensus_gain |" in md
    code, js = _run(tmp_path, "report", "last", "--format", "json")
    data = json.loads(js)
    (mediated,) = [e for e in data["episodes"] if e["arm"] == "mediated"]
    assert mediated["turns"][0]["action"]["stances"]
    assert mediated["matched_episode_id"].endswith("-unmediated")
    code, text = _run(tmp_path, "report", "last", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 2 and all(r["episode_id"] for r in rows)
    assert {"consensus_gain", "final_consensus", "resolved"} <= set(rows[0])


def test_report_can_write_to_a_file(tmp_path: Path) -> None:
    _run(tmp_path, "run", "tenancy")
    target = tmp_path / "r.csv"
    code, _ = _run(tmp_path, "report", "last", "--format", "csv", "--out", str(target))
    assert code == 0 and target.read_text().startswith("episode_id,")


def test_runs_lists_what_was_run(tmp_path: Path) -> None:
    _run(tmp_path, "run", "tenancy")
    code, out = _run(tmp_path, "runs")
    assert code == 0 and "tenancy/none/seed0" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["report", "last"], "no store at"),
        (["report", "20990101-nope"], "no store at"),  # nothing run here yet
        (
            ["run", "tenancy", "--mediator", "oracle"],
            "unknown mediator 'oracle'; the roundtable protocol takes none, rule, generic, social",
        ),
        (
            ["run", "tenancy", "--mediator", "generic"],
            "mediator 'generic' needs a model: pass --model or --mediator-model",
        ),
        (
            ["run", "salary", "--protocol", "bilateral", "--parties", "llm"],
            "llm parties need a model: pass --model or --parties-model",
        ),
        (  # the settlement protocol's other seat is counsel; --mediator-model fills it
            ["run", "settle-unpaid-overtime", "--protocol", "settlement", "--mediator", "llm-mcts"],
            "counsel 'llm-mcts' needs a model: pass --model or --mediator-model",
        ),
        (["run", "tenancy", "--model", "gpt-9"], "unknown model 'gpt-9'"),
        (["run", "tenancy", "--model", "openai:m@"], "model 'openai:m@' names no URL after '@'"),
        (["run", "tenancy", "--protocol", "auction"], "unknown protocol 'auction'"),
        (["run", "boundary-wall", "--protocol", "settlement"], "boundary-wall has no numeric term"),
        (["run", "tenancy", "--protocol", "settlement"], "tenancy has no legal context"),
        (  # a condition that adds a legal context does not make a salary a legal claim
            ["run", "salary", "--protocol", "settlement", "--condition", "expertise:none"],
            "salary has no legal context",
        ),
        (
            ["run", "tenancy", "--protocol", "staged", "--mediator", "none"],
            "the staged protocol takes mediator rule or llm, not 'none'",
        ),
        (
            ["run", "tenancy", "--protocol", "staged", "--condition", "expertise:ek-top3"],
            "the expertise condition needs a statute corpus",
        ),
        (["run", "tenancy", "--condition", "cause:anger"], "use cause:CATEGORY"),
        (["run", "tenancy", "--condition", "expertise:top3"], "use one of none, ek-top3"),
        (["run", "no-such-case"], "not a built-in scenario, a scenario imported into"),
        (["run", "tenancy", "--budget", "0"], "--budget"),
        (["run", "tenancy", "--seed", "notanumber"], "--seed"),
        (["scenarios", "show", "nope"], "not a built-in scenario"),
        (["scenarios", "show", "tenancy", "--format", "xml"], "unknown format 'xml'"),
        # Empty values are slips, never quietly a default (".", "general", any run).
        (["run", ""], "scenario: empty; give a built-in id"),
        (["run", "tenancy", "--condition", ""], "condition '' is empty"),
        (["run", "tenancy", "--condition", "general,,culture:US-CN"], "has an empty part"),
    ],
)
def test_bad_input_exits_2_with_a_message_and_no_traceback(
    tmp_path: Path, args: list[str], message: str
) -> None:
    code, out = _run(tmp_path, *args)
    assert code == 2, out
    assert message in _flat(out)
    assert "Traceback" not in out
    # Rejected input leaves nothing behind: no failed run to find in `runs`.
    listed = _run(tmp_path, "runs", "--format", "csv")
    assert listed[0] == 2 or listed[1].strip().count("\n") == 0, listed[1]


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["run"],
        ["report"],
        ["runs"],
        ["scenarios"],
        ["scenarios", "list"],
        ["scenarios", "show"],
        ["scenarios", "validate"],
        ["scenarios", "import"],
        ["conditions"],
        ["conditions", "list"],
        ["experiment"],
        ["evaluate"],
        ["validate-judge"],
        ["curate"],
        ["protocols"],
        ["protocols", "list"],
    ],
)
def test_every_command_has_help(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output


def test_protocols_list_names_each_protocol_with_its_parameters_and_seats() -> None:
    result = runner.invoke(app, ["protocols", "list"])
    assert result.exit_code == 0
    flat = _flat(result.output)
    assert "roundtable:" in flat and "budget=100" in flat
    assert "seat mediator [mediator, optional]: none, rule, generic, social" in flat
    assert "staged:" in flat and "rounds=5" in flat
    assert "seat mediator [staged-mediator]: rule, llm" in flat
    # a parameter whose default is built per use shows that value, not pydantic's marker
    assert "behaviour={}" in flat and "Undefined" not in flat


def test_run_help_fits_a_screen_in_panels_and_names_no_protocol_parameter() -> None:
    out = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "100"}).output
    assert len(out.splitlines()) <= 60, out
    flat = _flat(out)
    for panel in ("Case", "Protocol", "Seats and models"):
        assert f"─ {panel} ─" in flat
    assert "--budget" in flat and "--param" in flat and "-P" in flat
    # The parameters are listed by `protocols show`, not one option each.
    assert "--turn-taking" not in flat and "--rounds" not in flat
    assert "Built-in scenario id or a scenario file" in flat and "Seed (default 0" in flat


def test_run_help_fits_a_screen_at_eighty_columns_too() -> None:
    # What `disputelab run --help | less` shows: rich folds to 80 columns in a pipe.
    out = runner.invoke(app, ["run", "--help"], env={"COLUMNS": "80"}).output
    assert len(out.splitlines()) <= 60, out


def test_one_budget_option_sets_each_protocols_turn_budget(tmp_path: Path) -> None:
    code, out = _run(tmp_path, "run", "tenancy", "--protocol", "staged", "--budget", "2")
    assert code == 0, out
    store = Store(tmp_path / "runs")
    config = store.run_info(store.resolve_run("last"))[1]
    assert config["rounds"] == 2


def test_an_old_parameter_option_still_works_and_says_it_is_deprecated(tmp_path: Path) -> None:
    code, out = _run(tmp_path, "run", "tenancy", "--protocol", "staged", "--rounds", "2")
    assert code == 0, out
    assert "warning: --rounds is deprecated; give --budget N" in _flat(out)
    store = Store(tmp_path / "runs")
    assert store.run_info(store.resolve_run("last"))[1]["rounds"] == 2


def test_an_option_of_another_protocol_is_ignored_with_a_warning(tmp_path: Path) -> None:
    code, out = _run(tmp_path, "run", "tenancy", "--rounds", "3")
    assert code == 0
    assert (
        "warning: --rounds applies to staged; the roundtable protocol does not use it; "
        "its turn budget (party turns) is --budget"
    ) in _flat(out)


def test_scenarios_list_and_show(tmp_path: Path) -> None:
    code, out = _run(tmp_path, "scenarios", "list")
    assert code == 0
    for sid in ("tenancy", "workplace", "community-centre"):
        assert sid in out
    code, out = _run(tmp_path, "scenarios", "show", "tenancy", "--format", "json")
    assert code == 0 and json.loads(out)["id"] == "tenancy"


def test_the_installed_console_script_exits_2_on_bad_input(tmp_path: Path) -> None:
    exe = shutil.which("disputelab")
    if exe is None:
        pytest.skip("the disputelab console script is not installed on PATH")
    bad = subprocess.run(
        [exe, "--store", str(tmp_path), "run", "tenancy", "--mediator", "nope"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    usage = subprocess.run(
        [exe, "--store", str(tmp_path), "run", "tenancy", "--budget", "0"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert usage.returncode == 2
    (line,) = usage.stderr.strip().splitlines()
    assert "--budget" in line and "Traceback" not in line
    good = subprocess.run(
        [exe, "--store", str(tmp_path), "run", "tenancy", "--mediator", "rule"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert good.returncode == 0, good.stderr
    assert "consensus_gain" in good.stdout


def test_a_model_written_condition_and_the_episode_share_one_event_loop(tmp_path: Path) -> None:
    # A keep-alive server keeps the client's connections open: had the condition writer
    # and the episode each run their own event loop, the episode would find them closed.
    from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema

    def answer(body: dict[str, object]) -> Scripted:
        schema = requested_schema(body)
        return Scripted(content=json.dumps(fill(schema, text="We can talk about the repairs.")))

    with fake_openai(answer, keep_alive=True) as server:
        model = f"openai:m@{server.url}"
        args = ["run", "tenancy", "--condition", "cause:resource", "--model", model]
        code, out = _run(tmp_path, *args, "--budget", "4")
    assert code == 0, out
    assert "model use, writer" in out and "model use, parties" in out


def test_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.startswith("disputelab ")


def test_a_misspelt_scenario_id_gets_a_suggestion(tmp_path: Path) -> None:
    code, out = _run(tmp_path, "run", "tenacy")
    assert code == 2 and "did you mean tenancy?" in _flat(out)


def test_scenarios_show_previews_a_condition() -> None:
    plain = runner.invoke(app, ["scenarios", "show", "tenancy"]).output
    shown = runner.invoke(app, ["scenarios", "show", "tenancy", "--condition", "culture:US-CN"])
    assert shown.exit_code == 0
    assert "power_distance" in shown.output and "power_distance" not in plain
    bad = runner.invoke(app, ["scenarios", "show", "tenancy", "--condition", "vibes:high"])
    assert bad.exit_code == 2 and "unknown condition 'vibes'" in _flat(bad.output)


def test_validating_an_experiment_spec_says_what_it_is() -> None:
    spec = Path(__file__).resolve().parents[1] / "examples" / "socrates-axes.yaml"
    result = runner.invoke(app, ["scenarios", "validate", str(spec)])
    assert result.exit_code == 2
    assert "this is an experiment spec, not a scenario" in _flat(result.output)


def test_markdown_is_another_name_for_md(tmp_path: Path) -> None:
    _run(tmp_path, "run", "tenancy", "--budget", "6")
    assert (
        _run(tmp_path, "report", "last", "--format", "markdown")[1]
        == _run(tmp_path, "report", "last", "--format", "md")[1]
    )


def test_the_store_option_may_follow_the_command() -> None:
    from disputelab.cli import hoist_global_options

    assert hoist_global_options(["run", "tenancy", "--store", "x", "--seed", "2"]) == [
        "--store", "x", "run", "tenancy", "--seed", "2",
    ]  # fmt: skip
    assert hoist_global_options(["report", "--store=y"]) == ["--store=y", "report"]
    assert hoist_global_options(["--store", "z", "runs"]) == ["--store", "z", "runs"]


def test_an_empty_store_or_run_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--store", "", "runs"])
    assert result.exit_code == 2 and "--store: is empty" in _flat(result.output)
    assert _run(tmp_path, "run", "tenancy", "--budget", "2")[0] == 0
    code, out = _run(tmp_path, "report", "")
    assert code == 2 and "give a run: its id" in _flat(out)


def test_every_command_says_what_it_does_in_one_line_of_the_listing() -> None:
    from disputelab.cli import COMMANDS, load_command

    for name in COMMANDS:
        command = load_command(name)
        short = command.get_short_help_str(limit=200)
        assert "\n" not in short and len(short) <= 120, f"{name}: {short!r}"


def test_the_listing_shows_each_command_s_own_line_without_loading_it() -> None:
    from disputelab.cli import COMMANDS, LISTED, load_command

    assert list(LISTED) == list(COMMANDS)
    for name, line in LISTED.items():
        assert line == load_command(name).get_short_help_str(limit=200), name
    listing = _flat(runner.invoke(app, ["--help"]).output)
    assert all(" ".join(line.split()[:3]) in listing for line in LISTED.values())
