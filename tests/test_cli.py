"""The `disputelab` command line: what each command prints, and how bad input fails.

The contract for bad input: exit status 2, a message naming the problem, never a traceback.
Most checks drive `disputelab.cli.app` through typer's CliRunner; a few run the installed
console script in a subprocess to see the real exit code and the one-line error format.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.report import serve
from disputelab.scenario.io import scenario_to_data
from disputelab.scenario.library import builtin_scenarios
from disputelab.store.sqlite import DB_NAME, Store
from tests.helpers import PROMEDIATE, WAIT_S

BUILTIN_IDS = ("tenancy", "workplace", "community-centre")
HEADLINE_METRICS = ("consensus_gain", "intervention_timeliness", "intervention_effectiveness")


def invoke(store: Path, *args: str) -> Result:
    """`disputelab --store STORE ARGS...`, in-process."""
    return CliRunner().invoke(app, ["--store", str(store), *args])


def flat(text: str) -> str:
    """Undo rich's line wrapping so phrases can be searched for."""
    return " ".join(text.split())


def assert_usage_failure(result: Result) -> None:
    """Exit status 2, something on stderr, no traceback anywhere."""
    assert result.exit_code == 2, result.output
    assert result.stderr.strip()
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(
        result.exception, SystemExit
    ), repr(result.exception)


def assert_one_error_line(result: Result, *fragments: str) -> None:
    assert_usage_failure(result)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture(autouse=True)
def _isolated_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No disputelab.toml or default store from the repo leaks into a test."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DISPUTELAB_STORE", raising=False)


@pytest.fixture(scope="module")
def mediated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Result]]:
    """One `run tenancy --mediator rule` shared by the report tests."""
    root = tmp_path_factory.mktemp("mediated")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        mp.delenv("DISPUTELAB_STORE", raising=False)
        store = root / "runs"
        result = invoke(store, "run", "tenancy", "--mediator", "rule", "--seed", "0")
        assert result.exit_code == 0, result.output
        yield store, result


def report_json(store: Path, run: str = "last") -> dict[str, Any]:
    result = invoke(store, "report", run, "--format", "json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


# ---- run ---------------------------------------------------------------------------------


def test_run_with_rule_mediator_exits_0_and_names_stop_reason_and_headline_metrics(
    mediated: tuple[Path, Result],
) -> None:
    store, result = mediated
    text = flat(result.stdout)
    assert "Traceback" not in result.output
    episodes = report_json(store)["episodes"]
    for ep in episodes:
        outcome = ep["outcome"]
        assert f"stop: {outcome['status']}: {flat(outcome['stop_reason'])}" in text
    for metric in HEADLINE_METRICS:
        assert metric in text


def test_a_mediated_run_prints_both_the_unmediated_and_the_mediated_episode(
    mediated: tuple[Path, Result],
) -> None:
    _, result = mediated
    assert "unmediated:" in result.stdout
    assert "mediator: rule:" in result.stdout


def test_the_same_seed_gives_the_same_transcript(tmp_path: Path) -> None:
    texts = []
    for store in (tmp_path / "first", tmp_path / "second"):
        result = invoke(store, "run", "tenancy", "--mediator", "rule", "--seed", "7")
        assert result.exit_code == 0, result.output
        episodes = report_json(store)["episodes"]
        texts.append([[t["text"] for t in ep["turns"]] for ep in episodes])
    assert texts[0] == texts[1]
    assert all(texts[0])  # non-empty transcripts


# ---- report ------------------------------------------------------------------------------


def test_report_last_markdown_contains_the_transcript(mediated: tuple[Path, Result]) -> None:
    store, _ = mediated
    result = invoke(store, "report", "last")
    assert result.exit_code == 0, result.output
    md = result.stdout
    assert md.startswith("# Run `")
    assert "### Transcript" in md
    for ep in report_json(store)["episodes"]:
        for turn in ep["turns"]:
            assert turn["text"] in md


def test_report_last_json_parses_and_holds_the_turns(mediated: tuple[Path, Result]) -> None:
    store, _ = mediated
    data = report_json(store)
    assert data["run_id"]
    assert len(data["episodes"]) == 2
    arms = sorted(ep["arm"] for ep in data["episodes"])
    assert arms == ["mediated", "unmediated"]
    for ep in data["episodes"]:
        assert ep["turns"], ep["episode_id"]
        assert all(t["text"] for t in ep["turns"])


def test_report_by_run_id_matches_report_last(mediated: tuple[Path, Result]) -> None:
    store, _ = mediated
    last = report_json(store)
    assert report_json(store, last["run_id"]) == last


def test_report_last_csv_has_one_row_per_episode_with_metric_columns(
    mediated: tuple[Path, Result],
) -> None:
    store, _ = mediated
    result = invoke(store, "report", "last", "--format", "csv")
    assert result.exit_code == 0, result.output
    reader = csv.DictReader(io.StringIO(result.stdout))
    rows = list(reader)
    assert reader.fieldnames is not None
    assert "episode_id" in reader.fieldnames
    for metric in (*HEADLINE_METRICS, "final_consensus", "resolved"):
        assert metric in reader.fieldnames
    assert len(rows) == 2
    assert len({r["episode_id"] for r in rows}) == 2
    mediated_row = next(r for r in rows if r["arm"] == "mediated")
    for metric in HEADLINE_METRICS:
        float(mediated_row[metric])  # a number for the mediated episode


def test_report_on_an_empty_store_exits_2_with_one_line(tmp_path: Path) -> None:
    Store(tmp_path / "empty").close()  # a store with no runs in it
    result = invoke(tmp_path / "empty", "report")
    assert_one_error_line(result, "no runs")


@pytest.mark.parametrize("command", [["report"], ["runs"], ["view"], ["evaluate", "last"]])
def test_a_reading_command_where_there_is_no_store_fails_and_leaves_none_behind(
    tmp_path: Path, command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Were the check gone, `view` would serve the new empty store until stopped: this
    # server stops at once, so the test fails rather than hangs.
    monkeypatch.setattr(serve, "ReportServer", _StoppingServer)
    where = tmp_path / "mistyped" / "store"
    result = invoke(where, *command)
    assert_one_error_line(result, "no store at", "nothing has been run there")
    assert not (tmp_path / "mistyped").exists()


class _StoppingServer:
    url = "http://127.0.0.1:1/"

    def __init__(self, *args: object) -> None:
        pass

    def serve_forever(self) -> None:
        raise KeyboardInterrupt

    def server_close(self) -> None:
        pass


def _log_alone(tmp_path: Path, whole: bool) -> Path:
    """A store directory holding only the write-ahead log of a store with one run: a copy
    that caught the log but not the database file. After a VACUUM the log holds every
    page of the store; after one small write, only the pages it changed."""
    store = tmp_path / "runs"
    assert invoke(store, "run", "tenancy").exit_code == 0
    moved = tmp_path / "moved"
    moved.mkdir()
    db = sqlite3.connect(store / DB_NAME, isolation_level=None)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("PRAGMA wal_autocheckpoint = 0")
        if whole:
            db.execute("VACUUM")  # in WAL mode every page of the database goes to the log
        else:
            db.execute("UPDATE runs SET label = 'renamed'")
        shutil.copy(store / f"{DB_NAME}-wal", moved / f"{DB_NAME}-wal")
    finally:
        db.close()
    assert not (moved / DB_NAME).exists()
    return moved


def test_a_store_left_as_its_whole_write_ahead_log_is_still_read(tmp_path: Path) -> None:
    # Opening the store replays the log over a new file and rebuilds it, so a reading
    # command opens it rather than calling it absent; `store check` says how to.
    moved = _log_alone(tmp_path, whole=True)
    check = invoke(moved, "store", "check")
    assert_one_error_line(check, "holds only the write-ahead log", "rebuilds")
    result = invoke(moved, "runs", "--format", "csv")
    assert result.exit_code == 0, result.output
    assert "tenancy/none/seed0" in result.stdout


@pytest.mark.parametrize("command", [("runs",), ("store", "check"), ("run", "tenancy")])
def test_a_partial_write_ahead_log_alone_is_refused_and_kept(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    # SQLite would replay it over a new, empty file and leave a store that is neither
    # the old one nor a new one; the log is all that is left of the old one.
    moved = _log_alone(tmp_path, whole=False)
    log = (moved / f"{DB_NAME}-wal").read_bytes()
    assert_one_error_line(invoke(moved, *command), "holds only part of the store")
    assert sorted(p.name for p in moved.iterdir()) == [f"{DB_NAME}-wal"]
    assert (moved / f"{DB_NAME}-wal").read_bytes() == log


def test_a_title_with_brackets_is_printed_as_written(tmp_path: Path) -> None:
    # Imported and curated titles carry brackets; the console must not read them as markup.
    data = scenario_to_data(builtin_scenarios()["tenancy"])
    data["title"] = "Flat [repairs] and rent [red]X"
    path = tmp_path / "bracketed.json"
    path.write_text(json.dumps(data))
    result = invoke(tmp_path / "runs", "run", str(path), "--budget", "6")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].startswith("Flat [repairs] and rent [red]X (tenancy)")


@pytest.mark.parametrize(
    "args",
    [
        ("scenarios", "import", "SOCRATES", "--from", "socrates", "--out", "FILE"),
        ("curate", "SEEDS", "--model", "local", "--out", "FILE"),
    ],
)
def test_an_output_folder_that_is_a_file_is_one_line(tmp_path: Path, args: tuple[str, ...]) -> None:
    afile = tmp_path / "afile"
    afile.write_text("mine")
    here = Path(__file__).parent
    paths = {
        "FILE": str(afile),
        "SEEDS": str(here.parent / "examples" / "curation-seeds"),
        "SOCRATES": str(here / "scenario" / "data" / "socrates" / "downtown-general.json"),
    }
    given = [paths.get(a, a) for a in args]
    assert_one_error_line(invoke(tmp_path / "runs", *given), f"--out {afile}: is a file")
    assert afile.read_text() == "mine"


def test_a_data_folder_that_is_a_file_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    afile = tmp_path / "afile"
    afile.write_text("mine")
    monkeypatch.setenv("DISPUTELAB_DATA", str(afile))
    result = invoke(tmp_path / "runs", "datasets", "get", "agentmediation")
    assert_one_error_line(result, "part of the path is a file", "$DISPUTELAB_DATA")


@pytest.mark.parametrize("name", [DB_NAME, f"{DB_NAME}-wal", "cache.sqlite", "elsewhere.db"])
def test_a_report_never_overwrites_a_database(tmp_path: Path, name: str) -> None:
    store = tmp_path / "runs"
    assert invoke(store, "run", "tenancy", "--budget", "4").exit_code == 0
    target = (tmp_path if name == "elsewhere.db" else store) / name
    if name == "elsewhere.db":  # anyone's database, not only the store's
        sqlite3.connect(target).execute("CREATE TABLE t (x)").connection.close()
    before = target.read_bytes() if target.exists() else None
    result = invoke(store, "report", "last", "--format", "csv", "--out", str(target))
    assert_one_error_line(result, "is a database", "write the report to another file")
    assert (target.read_bytes() if target.exists() else None) == before
    assert invoke(store, "runs", "--format", "csv").exit_code == 0


def test_a_report_to_a_pipe_is_written_not_read_from(tmp_path: Path) -> None:
    # The database guard reads a regular file's first bytes only: reading a FIFO (or
    # /dev/stdout in a pipeline) would wait for ever.
    import threading

    store = tmp_path / "runs"
    assert invoke(store, "run", "tenancy", "--budget", "4").exit_code == 0
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    result = invoke(store, "report", "last", "--out", str(fifo))
    reader.join(timeout=WAIT_S)
    assert result.exit_code == 0, result.output
    assert got and got[0].startswith(b"# Run ")


def test_a_store_path_that_is_a_file_is_named_so(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    assert_one_error_line(invoke(afile, "runs"), "is a file")


def test_report_on_an_unknown_run_id_exits_2_with_one_line(
    mediated: tuple[Path, Result],
) -> None:
    store, _ = mediated
    result = invoke(store, "report", "no-such-run")
    assert_one_error_line(result, "'no-such-run'")


def test_runs_lists_the_stored_run(mediated: tuple[Path, Result]) -> None:
    store, _ = mediated
    run_id = report_json(store)["run_id"]
    result = invoke(store, "runs")
    assert result.exit_code == 0, result.output
    assert run_id[:8] in result.stdout  # rich may wrap the rest of the id in its column


# ---- bad arguments -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["run", "tenancy", "--mediator", "oracle"], "unknown mediator 'oracle'"),
        (["run", "tenancy", "--model", "no-such-model"], "'no-such-model'"),
        (["run", "tenancy", "--protocol", "auction"], "unknown protocol 'auction'"),
        (["run", "no-such-scenario"], "no-such-scenario"),
    ],
    ids=["mediator", "model", "protocol", "scenario"],
)
def test_an_unknown_name_exits_2_with_one_line_and_no_traceback(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    store = tmp_path / "runs"
    assert_one_error_line(invoke(store, *args), fragment)


def test_an_unknown_scenario_error_says_where_the_builtins_are_listed(tmp_path: Path) -> None:
    result = invoke(tmp_path / "runs", "run", "no-such-scenario")
    assert_one_error_line(result, "`disputelab scenarios list` shows the", "built-ins")
    near = invoke(tmp_path / "runs", "run", "tenancyy")
    assert_one_error_line(near, "did you mean tenancy?")


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["run", "tenancy", "--budget", "0"], "--budget"),
        (["run", "tenancy", "--seed", "notanumber"], "--seed"),
        (["report", "last", "--format", "xml"], "--format"),
    ],
    ids=["budget-0", "seed-not-a-number", "report-format"],
)
def test_an_invalid_option_value_exits_2_naming_the_option(
    tmp_path: Path, args: list[str], option: str
) -> None:
    result = invoke(tmp_path / "runs", *args)
    assert_usage_failure(result)
    assert option in result.stderr


def test_bad_arguments_write_nothing_to_the_store(tmp_path: Path) -> None:
    store = tmp_path / "runs"
    invoke(store, "run", "tenancy", "--mediator", "oracle")
    invoke(store, "run", "tenancy", "--budget", "0")
    assert not (store / DB_NAME).exists()


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
    ],
    ids=lambda c: " ".join(c) or "top-level",
)
def test_help_works_for_every_command(tmp_path: Path, command: list[str]) -> None:
    result = invoke(tmp_path / "runs", *command, "--help")
    assert result.exit_code == 0, result.output
    assert "Usage" in result.stdout
    assert "Traceback" not in result.output
    assert "<bool>" not in result.stdout  # a flag takes no value, so shows none


# ---- scenarios ---------------------------------------------------------------------------


def test_scenarios_list_shows_the_three_builtin_ids(tmp_path: Path) -> None:
    result = invoke(tmp_path / "runs", "scenarios", "list")
    assert result.exit_code == 0, result.output
    for sid in BUILTIN_IDS:
        assert sid in result.stdout


def test_scenarios_show_json_parses_and_equals_the_builtin(tmp_path: Path) -> None:
    result = invoke(tmp_path / "runs", "scenarios", "show", "tenancy", "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["id"] == "tenancy"
    assert data == scenario_to_data(builtin_scenarios()["tenancy"])


def test_scenarios_show_an_unknown_id_exits_2(tmp_path: Path) -> None:
    result = invoke(tmp_path / "runs", "scenarios", "show", "no-such-scenario")
    assert_one_error_line(result, "no-such-scenario")


# ---- the installed console script --------------------------------------------------------


def _script() -> str:
    path = shutil.which("disputelab")
    if path is None:
        pytest.skip("the disputelab console script is not on PATH")
    return path


def _run_script(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run_command([_script()], cwd, *args)


def _run_command(command: list[str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`command ARGS` in `cwd`, without the user's DISPUTELAB_STORE."""
    env = {k: v for k, v in os.environ.items() if k != "DISPUTELAB_STORE"}
    return subprocess.run(
        [*command, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_console_script_run_exits_0_and_report_reads_it_back(tmp_path: Path) -> None:
    store = str(tmp_path / "runs")
    proc = _run_script(tmp_path, "--store", store, "run", "tenancy", "--mediator", "rule")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    for metric in HEADLINE_METRICS:
        assert metric in proc.stdout
    rep = _run_script(tmp_path, "--store", store, "report", "last", "--format", "json")
    assert rep.returncode == 0, rep.stderr
    assert len(json.loads(rep.stdout)["episodes"]) == 2


@pytest.mark.parametrize(
    "args",
    [
        ["run", "tenancy", "--seed", "notanumber"],
        ["run", "tenancy", "--budget", "0"],
        ["run", "tenancy", "--mediator", "oracle"],
        ["run", "no-such-scenario"],
        ["report"],
    ],
    ids=["seed", "budget", "mediator", "scenario", "empty-store"],
)
def test_console_script_bad_input_exits_2_with_one_error_line(
    tmp_path: Path, args: list[str]
) -> None:
    proc = _run_script(tmp_path, "--store", str(tmp_path / "runs"), *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr


# ---- motivated turn-taking -----------------------------------------------------------


def _party_order(store: Path, arm: str = "mediated") -> list[str]:
    (ep,) = [e for e in report_json(store)["episodes"] if e["arm"] == arm]
    return [t["speaker"] for t in ep["turns"] if t["role"] == "party"]


def _is_fixed_cycle(order: list[str]) -> bool:
    n = len(set(order))
    return all(s == order[i % n] for i, s in enumerate(order))


def test_motivated_turns_run_offline_and_report_who_held_the_floor(tmp_path: Path) -> None:
    store = tmp_path / "runs"
    args = ["run", "community-centre", "--mediator", "rule", "--turn-taking", "motivated"]
    result = invoke(store, *args)
    assert result.exit_code == 0, result.output
    text = flat(result.stdout)
    for heading in ("speaking shares:", "speaking order:", "who took the floor how:"):
        assert heading in text
    assert "speaking_gini" in text and "interruptions" in text
    order = _party_order(store)
    assert not _is_fixed_cycle(order), order
    assert all(a != b for a, b in itertools.pairwise(order))
    turns = [t for t in report_json(store)["episodes"][-1]["turns"] if t["role"] == "party"]
    assert all(t["turn_taking"]["rule"] for t in turns)


def test_cyclic_turns_stay_the_default_and_carry_no_turn_choice(
    mediated: tuple[Path, Result],
) -> None:
    store, result = mediated
    order = _party_order(store)
    assert _is_fixed_cycle(order)
    # Equal shares by construction: the turn-taking measures would only be noise here.
    assert "speaking_gini" not in result.stdout
    ep = report_json(store)["episodes"][-1]
    assert "turn-taking" not in ep["agents"]  # the predictor seat is not filled
    assert all("turn_taking" not in t for t in ep["turns"])


@pytest.mark.parametrize(
    ("flag", "whole_budget"), [("--no-stop-on-consensus", True), ("--stop-on-consensus", False)]
)
def test_a_yes_no_parameter_has_a_flag_for_each_value(
    tmp_path: Path, flag: str, whole_budget: bool
) -> None:
    # tenancy's rule parties agree well within 200 party turns: only with the early
    # stop turned off do both episodes run the whole budget.
    store = tmp_path / "runs"
    result = invoke(store, "run", "tenancy", "--mediator", "rule", "--budget", "200", flag)
    assert result.exit_code == 0, result.output
    for ep in report_json(store)["episodes"]:
        party_turns = sum(t["role"] == "party" for t in ep["turns"])
        assert (party_turns == 200) is whole_budget, (ep["arm"], party_turns)


def test_a_yes_no_flag_meant_for_another_protocol_is_named_as_given(tmp_path: Path) -> None:
    args = ["run", "tenancy", "--protocol", "staged", "--no-stop-on-consensus"]
    result = invoke(tmp_path / "runs", *args, "--rounds", "1")
    assert result.exit_code == 0, result.output
    assert "warning: --no-stop-on-consensus applies to roundtable" in flat(result.stderr)


def test_a_yes_no_flag_takes_no_value(tmp_path: Path) -> None:
    result = invoke(tmp_path / "runs", "run", "tenancy", "--stop-on-consensus", "false")
    assert_usage_failure(result)


def test_bad_turn_taking_options_are_usage_errors(tmp_path: Path) -> None:
    store = tmp_path / "runs"
    assert_usage_failure(invoke(store, "run", "tenancy", "-P", "turn_taking=loud"))
    result = invoke(store, "run", "tenancy", "-P", "turn_taking=motivated", "-P", "thoughts=0")
    assert_one_error_line(result, "--param thoughts")


@pytest.mark.data("promediate")
def test_the_imported_hmo_case_takes_motivated_turns(tmp_path: Path) -> None:
    store = tmp_path / "runs"
    imported = invoke(
        store, "scenarios", "import", "--from", "promediate", str(PROMEDIATE / "hmo.json")
    )
    assert imported.exit_code == 0, imported.output
    result = invoke(store, "run", "hmo", "--turn-taking", "motivated", "--mediator", "rule")
    assert result.exit_code == 0, result.output
    assert "speaking shares: " in flat(result.stdout)
    assert not _is_fixed_cycle(_party_order(store))


@pytest.mark.parametrize(("parties", "line"), [("llm", True), ("rule", False)])
def test_a_dry_run_names_the_model_the_predictor_borrows(
    tmp_path: Path, parties: str, line: bool
) -> None:
    model = "openai:m@http://127.0.0.1:9/v1"
    spec = tmp_path / "tt.yaml"
    spec.write_text(
        f"name: tt\nscenarios: [community-centre]\nconditions: [general]\nmediators: [none]\n"
        f"parties: {parties}\nmodels: {{parties: '{model}'}}\nturn_taking: motivated\n"
        "budget: 5\n"
    )
    result = invoke(tmp_path / "runs", "experiment", str(spec), "--dry-run")
    assert result.exit_code == 0, result.output
    text = flat(result.stdout)
    assert (f"model calls, turn-taking ({model}): at most 15 " in text) is line  # 3 x 5


def _run_module(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run_command([sys.executable, "-m", "disputelab"], cwd, *args)


def test_python_dash_m_runs_the_same_command_line(tmp_path: Path) -> None:
    store = str(tmp_path / "runs")
    proc = _run_module(tmp_path, "--store", store, "run", "tenancy", "--mediator", "rule")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    bad = _run_module(tmp_path, "--store", store, "run", "tenancy", "--seed", "x")
    assert bad.returncode == 2
    assert len(bad.stderr.strip().splitlines()) == 1 and "Traceback" not in bad.stderr


def test_the_command_line_starts_without_the_load_targets_http_server() -> None:
    """aiohttp's server is the bench's load target's, in a process of its own; loading it
    cost every command a tenth of a second."""
    probe = "import sys, disputelab.cli; print(sorted(m for m in sys.modules if 'aiohttp' in m))"
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (["--stop-on-consensus", "false"], "--stop-on-consensus takes no value"),
        (["--party-memory", "true"], "--no-party-memory off"),
        (["--seed", "1", "0"], None),  # a stray number after a value is not a yes/no slip
    ],
)
def test_a_value_after_a_yes_no_flag_is_explained(
    tmp_path: Path, args: list[str], hint: str | None
) -> None:
    proc = _run_module(tmp_path, "--store", str(tmp_path / "runs"), "run", "tenancy", *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    line = flat(proc.stderr)
    assert line.startswith("error: Got unexpected extra argument")
    assert (hint in line) if hint else "takes no value" not in line


def test_run_help_lists_the_kinds_each_option_can_take_and_no_other() -> None:
    from disputelab.protocols.base import PROTOCOLS

    text = " ".join(
        CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "1000"}).output.split()
    )
    seats = [p.mediator_seat for _, p in PROTOCOLS.items()]
    # A person's seat (`human`) is played with `play`, never by `run`: not listed.
    mediators = {k for s in seats if s is not None for k in s.kinds(hosted=False)}
    parties = {k for _, p in PROTOCOLS.items() for k in p.party_seat.kinds(hosted=False)}
    assert "lexicon" not in mediators and "lexicon" not in text  # the detector's seat
    assert "human" not in text.split()
    mediator_help = text.split("--mediator <str> ", 1)[1].split(" (default", 1)[0]
    assert set(mediator_help.split(", ")) == mediators
    party_help = text.split("--parties <str> ", 1)[1].split(" (default", 1)[0]
    assert set(party_help.split(", ")) == parties >= {"paraphrase", "boulware", "redteam"}
