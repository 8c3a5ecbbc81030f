"""A damaged store fails in one line and is never written into; `store check` says what is
wrong with it, and `store recover` copies every run that still reads into a new store.

The stores here are made by the command line and compacted, so every page is in use and
all of it is in the main file. Then they are damaged deterministically: a page header
overwritten (pages found by walking SQLite's b-trees; SQLite always notices a bad header),
the file cut in half, or a planted marker overwritten inside one stored value. No test
depends on where random bytes happen to land.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from disputelab.cli import app
from disputelab.cli.common import state
from disputelab.episode import Episode, Outcome, Status, Turn
from disputelab.scenario.io import scenario_to_data
from disputelab.scenario.library import builtin_scenario
from disputelab.store.integrity import _decoded, _Turns
from disputelab.store.salvage import read_table
from disputelab.store.sqlite import DB_NAME, Store

Damage = Callable[[Path], None]


def cli(store: Path, *args: str) -> Result:
    """`disputelab --store STORE ARGS...`, in-process, leaving no connection open."""
    try:
        return CliRunner().invoke(app, ["--store", str(store), *args])
    finally:
        if state.store is not None:
            state.store.close()
            state.store = None


def assert_one_error_line(result: Result, *fragments: str) -> None:
    """Exit status 2 and exactly one `error:` line on stderr, never a traceback."""
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def assert_ok_or_one_error_line(result: Result) -> None:
    """A read-only command need not notice damage it does not read, but what it notices
    ends in one line."""
    if result.exit_code != 0:
        assert_one_error_line(result, "store check", "store recover")


# ---- stores to damage ----------------------------------------------------------------


@pytest.fixture(autouse=True)
def _isolated_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DISPUTELAB_STORE", raising=False)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A store of three runs (an experiment, then two single runs), all in the main file."""
    root = tmp_path_factory.mktemp("pristine")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        mp.delenv("DISPUTELAB_STORE", raising=False)
        store = root / "store"
        spec = root / "small.yaml"
        spec.write_text("name: small\nscenarios: [tenancy]\nreplicates: 1\nbudget: 10\n")
        for args in (
            ("experiment", str(spec)),
            ("run", "tenancy", "--mediator", "rule", "--seed", "0"),
            ("run", "workplace", "--mediator", "rule", "--seed", "0"),
        ):
            result = cli(store, *args)
            assert result.exit_code == 0, result.output
        db = sqlite3.connect(store / DB_NAME)
        db.execute("VACUUM")  # no free pages: every page damaged below is in use
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # everything in the main file
        db.close()
        yield store


@pytest.fixture
def store(pristine: Path, tmp_path: Path) -> Path:
    """A fresh copy of the pristine store's database, to damage."""
    copy = tmp_path / "store"
    copy.mkdir()
    shutil.copyfile(pristine / DB_NAME, copy / DB_NAME)
    return copy


def run_ids(store: Path) -> list[str]:
    result = cli(store, "runs", "--format", "json")
    assert result.exit_code == 0, result.output
    return [r["run"] for r in json.loads(result.stdout)]


def _page_size(path: Path) -> int:
    size = int.from_bytes(path.read_bytes()[16:18], "big")
    return 65536 if size == 1 else size


def _root_page(path: Path, table: str) -> int:
    db = sqlite3.connect(path)
    try:
        (page,) = db.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)
        ).fetchone()
    finally:
        db.close()
    return int(page)


def _leaf(path: Path, table: str, rightmost: bool) -> int:
    """The first or last leaf page of a table's b-tree, found by following child pointers
    down from its root: an interior page holds its right-most child at header byte 8, and
    its first cell starts with the left-most child."""
    data, size = path.read_bytes(), _page_size(path)
    page = _root_page(path, table)
    while data[(page - 1) * size] == 0x05:  # an interior page of a table b-tree
        header = (page - 1) * size
        if rightmost:
            page = int.from_bytes(data[header + 8 : header + 12], "big")
        else:
            cell = int.from_bytes(data[header + 12 : header + 14], "big")
            page = int.from_bytes(data[(page - 1) * size + cell :][:4], "big")
    assert data[(page - 1) * size] == 0x0D, "not a table leaf"
    return page


def smash(path: Path, page: int) -> None:
    """Overwrite the header of one page (never page 1, whose header is the file's)."""
    assert page > 1
    with path.open("r+b") as f:
        f.seek((page - 1) * _page_size(path))
        f.write(b"\xff" * 8)


def _last_turns_page(store: Path) -> None:
    smash(store / DB_NAME, _leaf(store / DB_NAME, "turn_chunks", rightmost=True))


def _first_turns_page(store: Path) -> None:
    smash(store / DB_NAME, _leaf(store / DB_NAME, "turn_chunks", rightmost=False))


def _runs_page(store: Path) -> None:
    smash(store / DB_NAME, _root_page(store / DB_NAME, "runs"))


def _page_two(store: Path) -> None:
    smash(store / DB_NAME, 2)


def _middle_page(store: Path) -> None:
    path = store / DB_NAME
    smash(path, path.stat().st_size // _page_size(path) // 2)


def _last_page(store: Path) -> None:
    path = store / DB_NAME
    smash(path, path.stat().st_size // _page_size(path))


def _truncated_to_half(store: Path) -> None:
    """The file cut short halfway through the pages of its turns (which a compacted store
    lays out after the runs and episodes, before the scores): what lies before the cut
    reads, what lies after is gone."""
    path = store / DB_NAME
    db = sqlite3.connect(path)
    try:
        first, last = db.execute(
            "SELECT min(pageno), max(pageno) FROM dbstat"
            " WHERE name = 'turn_chunks' AND pagetype != 'internal'"
        ).fetchone()
    except sqlite3.OperationalError:
        pytest.skip("this SQLite has no dbstat table to find the pages of turns with")
    finally:
        db.close()
    with path.open("r+b") as f:
        f.truncate((first + last) // 2 * _page_size(path))


DAMAGE: dict[str, Damage] = {
    "the last page of turns": _last_turns_page,
    "the first page of turns": _first_turns_page,
    "the page of runs": _runs_page,
    "page 2": _page_two,
    "a page in the middle": _middle_page,
    "the last page": _last_page,
    "the file cut in half": _truncated_to_half,
}


@pytest.fixture(params=sorted(DAMAGE))
def damaged(request: pytest.FixtureRequest, store: Path) -> Path:
    DAMAGE[request.param](store)
    return store


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---- a damaged store -----------------------------------------------------------------


def test_commands_that_write_refuse_a_damaged_store_and_leave_it_as_it_was(
    damaged: Path, tmp_path: Path
) -> None:
    before = _digest(damaged / DB_NAME)
    spec = tmp_path / "again.yaml"
    spec.write_text("name: again\nscenarios: [tenancy]\nreplicates: 1\nbudget: 10\n")
    for args in (
        ("run", "tenancy", "--mediator", "rule"),
        ("evaluate", "last"),
        ("experiment", str(spec)),
    ):
        assert_one_error_line(cli(damaged, *args), "is damaged", "store check", "store recover")
    assert _digest(damaged / DB_NAME) == before


@pytest.mark.parametrize("args", [("runs",), ("report", "last"), ("run", "tenancy")])
def test_the_console_entry_point_prints_one_line_and_exits_2(
    store: Path, args: tuple[str, ...]
) -> None:
    _runs_page(store)
    main = "from disputelab.cli import main; main()"
    proc = subprocess.run(
        [sys.executable, "-c", main, "--store", str(store), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error: store ") and "store recover OUT_DIR" in line


def test_commands_that_read_end_in_one_line_when_they_meet_damage(damaged: Path) -> None:
    for args in (
        ("runs",),
        ("report", "last"),
        ("report", "small"),
        ("report", "last", "--format", "json"),
    ):
        assert_ok_or_one_error_line(cli(damaged, *args))


def test_check_says_what_is_wrong_and_exits_1(damaged: Path) -> None:
    result = cli(damaged, "store", "check")
    assert result.exit_code == 1, result.output
    assert not result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"store {damaged} is not healthy:"
    assert len(lines) > 1


def test_recover_makes_a_healthy_store_of_what_reads(
    pristine: Path, damaged: Path, tmp_path: Path
) -> None:
    out = tmp_path / "rescued"
    result = cli(damaged, "store", "recover", str(out))
    assert result.exit_code in (0, 1), result.output
    assert result.stdout.startswith(f"recovered into {out}: ")
    assert cli(out, "store", "check").exit_code == 0
    for run in run_ids(out):
        assert cli(out, "report", run).exit_code == 0


def test_recover_never_passes_a_shortened_transcript_off_as_whole(
    pristine: Path, damaged: Path, tmp_path: Path
) -> None:
    out = tmp_path / "rescued"
    cli(damaged, "store", "recover", str(out))
    copied, original = _transcripts(out), _transcripts(pristine)
    assert copied, "nothing was recovered"
    for episode, turns in copied.items():
        assert turns == original[episode], episode


def test_an_episodes_lost_final_chunk_is_noticed_without_an_index_to_witness_it(
    tmp_path: Path,
) -> None:
    """A lost last chunk leaves no gap in the turn numbers; with the index of chunks
    unreadable too, only time witnesses it: chunks get ever larger rowids, and the
    damage lies past the episode's last chunk that reads."""
    store = Store(tmp_path)
    run_id = store.create_run("run")
    s = builtin_scenario("tenancy")
    ep = Episode(s.id, "roundtable", 0, {"parties": "rule"})
    store.start_episode("e", run_id, ep, scenario_to_data(s))
    for group in (
        [Turn(0, 1, "a", "party", "hello")],
        [Turn(1, 1, "mediator", "mediator", "hm", delivered={"a": "hm, a"})],
        [Turn(2, 2, "b", "party", "bye")],
    ):
        store.append_turns("e", group)
    ep.outcome = Outcome(Status.RESOLVED, "deal", {}, {})
    store.finish_episode("e", ep)
    store.close()
    db = sqlite3.connect(tmp_path / DB_NAME)
    chunks = read_table(db, "turn_chunks")
    final = db.execute("SELECT rowid FROM turn_chunks WHERE first_idx = 2").fetchone()[0]
    del chunks.rows[final]  # its row does not read...
    chunks.unreadable.add(final)
    episodes = _decoded("episodes", read_table(db, "episodes"))
    no_index = sqlite3.connect(":memory:")  # ...and neither does the index of chunks
    check = _Turns(no_index, chunks, _decoded("turn_chunks", chunks), episodes)
    assert check.lost(next(iter(episodes.values()))) is not None
    whole = read_table(db, "turn_chunks")
    assert (
        _Turns(no_index, whole, _decoded("turn_chunks", whole), episodes).lost(
            next(iter(episodes.values()))
        )
        is None
    )


def test_recover_of_a_file_cut_in_half_keeps_the_runs_in_the_first_half(
    pristine: Path, store: Path, tmp_path: Path
) -> None:
    first, _, last = run_ids(pristine)
    _truncated_to_half(store)
    out = tmp_path / "rescued"
    result = cli(store, "store", "recover", str(out))
    assert result.exit_code == 1, result.output
    assert f"run {first} (experiment): 2 of 2 episodes copied" in result.stdout
    assert f"run {last} (run): 0 of 2 episodes copied" in result.stdout
    # The index of turn chunks (a page before the cut) names the chunks that are gone.
    assert "its turns from number 0 on are unreadable (a lost chunk of turns)" in result.stdout
    # The scores sat in the lost half; the experiment's transcripts did not.
    assert re.search(r"rows that do not read: .*scores \d+", result.stdout)
    kept = {e: t for e, t in _transcripts(pristine).items() if e.startswith(f"{first}/")}
    assert {e: _transcripts(out)[e] for e in kept} == kept


def test_a_damaged_runs_page_fails_runs_in_one_line(store: Path) -> None:
    _runs_page(store)
    assert_one_error_line(cli(store, "runs"), "is damaged", "cannot read it", "store check")


def test_recover_keeps_every_run_whose_pages_are_intact(
    pristine: Path, store: Path, tmp_path: Path
) -> None:
    """Damage to the last page of turns costs the last run an episode; the experiment
    and the first run come through exactly as they were."""
    first, middle, last = run_ids(pristine)
    _last_turns_page(store)
    assert_one_error_line(cli(store, "report", last), "is damaged", "store recover")
    out = tmp_path / "rescued"
    result = cli(store, "store", "recover", str(out))
    assert result.exit_code == 1, result.output
    assert f"run {first} (experiment): 2 of 2 episodes copied" in result.stdout
    assert f"run {middle} (run): 2 of 2 episodes copied" in result.stdout
    assert f"run {last} (run): 1 of 2 episodes copied" in result.stdout
    assert "are unreadable (a lost chunk of turns)" in result.stdout
    assert run_ids(out) == [first, middle, last]
    for run in (first, middle):
        assert _report(out, run) == _report(pristine, run)


def test_a_recovered_experiment_resumes_and_reruns_the_episodes_it_lost(
    pristine: Path, store: Path, tmp_path: Path
) -> None:
    _first_turns_page(store)  # the experiment's first episodes lose turns
    out = tmp_path / "rescued"
    first = run_ids(pristine)[0]
    recovered = cli(store, "store", "recover", str(out))
    assert recovered.exit_code == 1
    kept = re.search(rf"run {first} \(experiment\): (\d) of 2 episodes copied", recovered.stdout)
    assert kept is not None and int(kept[1]) < 2, recovered.stdout
    spec = pristine.parent / "small.yaml"
    resumed = cli(out, "experiment", str(spec), "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert f"{2 - int(kept[1])} run, {kept[1]} already done" in resumed.stdout

    def said(store: Path) -> dict[str, list[tuple[object, ...]]]:  # all but timings
        return {
            e: [t[:5] for t in turns]
            for e, turns in _transcripts(store).items()
            if e.startswith(f"{first}/")  # the experiment's (a run's lost ones stay lost)
        }

    assert said(out) == said(pristine)


def test_recover_of_a_store_whose_run_records_are_lost_keeps_their_episodes(
    pristine: Path, store: Path, tmp_path: Path
) -> None:
    _runs_page(store)
    out = tmp_path / "rescued"
    result = cli(store, "store", "recover", str(out))
    assert result.exit_code == 1, result.output
    assert result.stdout.count("its run record was lost") == 3
    assert sorted(run_ids(out)) == sorted(run_ids(pristine))
    assert _counts(out) == _counts(pristine)


# ---- damage inside a value -----------------------------------------------------------


@pytest.fixture
def rows7(tmp_path: Path) -> Path:
    """A store of schema 7 (a row per turn; see tests/store/data), to damage inside a row."""
    root = tmp_path / "rows7"
    root.mkdir()
    data = Path(__file__).parent / "data" / "schema7.sqlite.gz"
    (root / DB_NAME).write_bytes(gzip.decompress(data.read_bytes()))
    return root


def _plant(store: Path, sql: str, marker: str) -> None:
    """Write `marker` into one turn that has a move (a party's) with `sql`, then compact,
    so it is in the file once."""
    db = sqlite3.connect(store / DB_NAME)
    rowid = db.execute("SELECT max(rowid) FROM turns WHERE action IS NOT NULL").fetchone()[0]
    db.execute(sql, (marker, rowid))
    db.commit()
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def _overwrite(store: Path, marker: str, replacement: bytes) -> None:
    data = (store / DB_NAME).read_bytes()
    assert data.count(marker.encode()) == 1
    (store / DB_NAME).write_bytes(data.replace(marker.encode(), replacement))


def test_text_that_is_no_longer_utf8_fails_report_in_one_line(rows7: Path) -> None:
    marker = "MARKER-0123456789"
    _plant(rows7, "UPDATE turns SET text = ? WHERE rowid = ?", marker)
    _overwrite(rows7, marker, b"\xff" * len(marker))
    last = run_ids(rows7)[-1]
    assert_one_error_line(cli(rows7, "report", last), "not UTF-8", "store recover")
    check = cli(rows7, "store", "check")
    assert check.exit_code == 1 and "rows that do not read: turns 1" in check.stdout


def test_json_that_no_longer_parses_fails_report_in_one_line(rows7: Path, tmp_path: Path) -> None:
    marker = "MARKER-0123456789"
    _plant(
        rows7, "UPDATE turns SET action = json_set(action, '$.thought', ?) WHERE rowid = ?", marker
    )
    _overwrite(rows7, marker, b'"' * len(marker))
    last = run_ids(rows7)[-1]
    assert_one_error_line(cli(rows7, "report", last), "is damaged", "store recover")
    out = tmp_path / "rescued"
    result = cli(rows7, "store", "recover", str(out))
    assert result.exit_code == 1
    assert f"run {last} (run): 2 of 3 episodes copied" in result.stdout
    assert "1 of " in result.stdout and "turns unreadable" in result.stdout


@pytest.mark.parametrize("args", [("report", "RUN"), ("report", "RUN", "--format", "html")])
def test_a_config_that_parses_but_is_no_object_is_damage(
    store: Path, args: tuple[str, ...]
) -> None:
    # Valid JSON of the wrong shape reads as damage, in one line, like JSON that does not
    # parse; `store check` counts the run's record as lost.
    last = run_ids(store)[-1]
    with sqlite3.connect(store / DB_NAME) as db:
        db.execute("UPDATE runs SET config = '[1, 2]' WHERE run_id = ?", (last,))
    result = cli(store, *(last if a == "RUN" else a for a in args))
    assert_one_error_line(result, "is damaged", "configuration is a JSON list")
    check = cli(store, "store", "check")
    assert check.exit_code == 1 and "rows that do not read: runs 1" in check.stdout


def test_a_stored_scenario_that_no_longer_validates_fails_evaluate_in_one_line(
    store: Path,
) -> None:
    last = run_ids(store)[-1]
    with sqlite3.connect(store / DB_NAME) as db:
        db.execute(
            "UPDATE episodes SET scenario = '{\"id\": 5}', scenario_ref = NULL WHERE run_id = ?",
            (last,),
        )
    result = cli(store, "evaluate", last, "--evaluator", "self-report")
    assert_one_error_line(result, "its stored scenario does not validate", "store check")


# ---- files that are not stores -------------------------------------------------------


def _empty(db: Path) -> None:
    db.write_bytes(b"")


def _text(db: Path) -> None:
    db.write_text("run,label\n1,tenancy\n")


def _other_database(db: Path) -> None:
    other = sqlite3.connect(db)
    other.execute("CREATE TABLE patients (name TEXT)")
    other.commit()
    other.close()


NOT_STORES: dict[str, tuple[Callable[[Path], None], str]] = {
    "an empty file": (_empty, "is empty"),
    "a text file": (_text, "is not a disputelab store"),
    "another SQLite database": (_other_database, "is not a disputelab store"),
}


@pytest.mark.parametrize("kind", sorted(NOT_STORES))
def test_a_file_that_is_not_a_store_is_an_error_not_a_new_store(kind: str, tmp_path: Path) -> None:
    make, message = NOT_STORES[kind]
    root = tmp_path / "store"
    root.mkdir()
    make(root / DB_NAME)
    before = _digest(root / DB_NAME)
    for args in (("runs",), ("report", "last"), ("run", "tenancy"), ("evaluate", "last")):
        assert_one_error_line(cli(root, *args), message)
    check = cli(root, "store", "check")
    assert check.exit_code == 1 and message in check.stdout
    assert_one_error_line(cli(root, "store", "recover", str(tmp_path / "out")), message)
    assert not (tmp_path / "out").exists()
    assert _digest(root / DB_NAME) == before


@pytest.mark.parametrize("where", ["a missing directory", "an empty directory"])
def test_a_missing_database_is_still_a_new_store(where: str, tmp_path: Path) -> None:
    root = tmp_path / "store"
    if where == "an empty directory":
        root.mkdir()
    # Not damage: a command that only reads finds nothing run there, and makes nothing...
    assert_one_error_line(cli(root, "runs"), "no store at", "nothing has been run there")
    assert not (root / DB_NAME).exists()
    # ...and the first run starts a store there.
    assert cli(root, "run", "tenancy").exit_code == 0
    result = cli(root, "store", "check")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"store {root} is healthy: 1 run")


def test_check_with_no_store_at_all_is_a_usage_error(tmp_path: Path) -> None:
    assert_one_error_line(cli(tmp_path / "nowhere", "store", "check"), "no store at")


# ---- an undamaged store --------------------------------------------------------------


def _report(store: Path, run: str) -> str:
    result = cli(store, "report", run, "--format", "json")
    assert result.exit_code == 0, result.output
    return result.stdout


def _transcripts(store: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every episode's turns, in order, as they read back: each turn's index, party turn,
    speaker, role, text and then every other field. A value a row holds itself and one
    it names in the table of strings read the same."""
    opened = Store(store, writable=False)
    try:
        episodes = [str(r[0]) for r in opened.db.execute("SELECT episode_id FROM episodes")]
        return {e: [_fields(t) for t in opened.load_episode(e).episode.turns] for e in episodes}
    finally:
        opened.close()


def _fields(turn: Turn) -> tuple[object, ...]:
    d = turn.to_dict()
    return (
        d.pop("index"),
        d.pop("party_turn"),
        d.pop("speaker"),
        d.pop("role"),
        d.pop("text"),
        *(json.dumps(v, sort_keys=True) for v in d.values()),
    )


def _counts(store: Path) -> dict[str, int]:
    db = sqlite3.connect(store / DB_NAME)
    try:
        tables = ("runs", "episodes", "scores", "usage")
        counts = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
        rows = db.execute("SELECT count(*) FROM turns").fetchone()[0]
        chunked = db.execute("SELECT coalesce(sum(count), 0) FROM turn_chunks").fetchone()[0]
        return {**counts, "turns": rows + chunked}
    finally:
        db.close()


def test_check_passes_a_healthy_store(store: Path) -> None:
    result = cli(store, "store", "check")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        f"store {store} is healthy: 3 runs, 6 episodes, "
        f"{_counts(store)['turns']} turns, {_counts(store)['scores']} scores"
    )


@pytest.mark.parametrize("command", ["check", "recover"])
def test_a_run_that_lands_while_the_store_is_read_is_no_damage(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    # An experiment that keeps writing while `store check` reads: a whole run lands
    # (committed by another connection) after the episodes are read and before the
    # turns are. The check sees the store as of its first read, healthy, not a store
    # whose turns belong to episodes it never listed.
    before = _counts(store)
    tables_read: list[str] = []

    def read_then_write(db: sqlite3.Connection, table: str) -> object:
        tables_read.append(table)
        if table == "turns":
            other = cli(store, "run", "workplace", "--mediator", "rule", "--seed", "3")
            assert other.exit_code == 0, other.output
        return read_table(db, table)

    monkeypatch.setattr("disputelab.store.integrity.read_table", read_then_write)
    args = ["store", "check"] if command == "check" else ["store", "recover", str(tmp_path / "c")]
    result = cli(store, *args)
    assert "turns" in tables_read and tables_read.index("episodes") < tables_read.index("turns")
    assert result.exit_code == 0, result.output
    if command == "check":
        assert "is healthy: 3 runs, 6 episodes" in result.stdout
    else:
        assert _counts(tmp_path / "c") == before
    assert len(run_ids(store)) == 4  # the run that landed is in the store all the same


def test_recover_copies_a_healthy_store_exactly(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    result = cli(store, "store", "recover", str(out))
    assert result.exit_code == 0, result.output
    assert _counts(out) == _counts(store)
    listed = cli(store, "runs", "--format", "json").stdout
    assert cli(out, "runs", "--format", "json").stdout == listed
    for run in run_ids(store):
        assert _report(out, run) == _report(store, run)
    # The copy is a store like any other: it takes new runs.
    assert cli(out, "run", "tenancy", "--mediator", "rule").exit_code == 0


def test_recover_refuses_a_directory_that_holds_a_store(store: Path) -> None:
    assert_one_error_line(cli(store, "store", "recover", str(store)), "already holds a store")


def test_recover_brings_a_store_of_an_older_schema_up_to_date(store: Path, tmp_path: Path) -> None:
    db = sqlite3.connect(store / DB_NAME)
    db.execute("ALTER TABLE turns DROP COLUMN turn_taking")
    db.execute("ALTER TABLE turns DROP COLUMN delivered")
    db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    out = tmp_path / "copy"
    assert cli(store, "store", "recover", str(out)).exit_code == 0
    for run in run_ids(store):
        assert _report(out, run) == _report(store, run)


# ---- damage to the first page: the file's header and its list of tables ---------------


def _name_in_table_list(store: Path, name: bytes) -> None:
    """0xFF over the first byte of an index's name where the list of tables holds it:
    SQLite then fails to parse its schema with a message Python cannot decode."""
    path = store / DB_NAME
    data = bytearray(path.read_bytes())
    page = _page_size(path)
    at = data.index(b"index" + name, 100, page) + len(b"index")
    data[at] = 0xFF
    path.write_bytes(bytes(data))


def test_a_damaged_name_in_the_table_list_fails_every_command_in_one_line(
    pristine: Path, store: Path, tmp_path: Path
) -> None:
    _name_in_table_list(store, b"episodes_by_run")
    spec = pristine.parent / "small.yaml"
    for args in (("runs",), ("report", "last"), ("experiment", str(spec), "--resume")):
        assert_one_error_line(cli(store, *args), "is damaged", "store recover")
    check = cli(store, "store", "check")
    assert check.exit_code == 1, check.output
    assert "its list of tables does not parse" in check.stdout
    assert "its first page was rebuilt" in check.stdout
    out = tmp_path / "rescued"
    recovered = cli(store, "store", "recover", str(out))
    assert recovered.exit_code == 0, recovered.output  # only an index was lost
    assert _counts(out) == _counts(pristine)
    assert cli(out, "store", "check").exit_code == 0


@pytest.mark.parametrize("offset", [0, 5, 15, 16, 21, 56])
def test_recover_reads_past_a_flipped_header_byte(
    pristine: Path, store: Path, tmp_path: Path, offset: int
) -> None:
    """The magic string, the page size, the payload fractions, the text encoding: each
    misleads SQLite about every page, and recovery rebuilds the header instead."""
    path = store / DB_NAME
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF if offset != 16 else 0x30  # 4096 as 8192 + 4096 + ...: no size
    path.write_bytes(bytes(data))
    # A page size of 8192 is a size: SQLite finds every page malformed, not the header.
    said = "header" if offset != 16 else "is damaged"
    assert_one_error_line(cli(store, "runs"), "is damaged", said, "store recover")
    check = cli(store, "store", "check")
    assert check.exit_code == 1 and "its first page was rebuilt" in check.stdout
    out = tmp_path / "rescued"
    recovered = cli(store, "store", "recover", str(out))
    assert recovered.exit_code == 0, recovered.output
    assert _counts(out) == _counts(pristine)
    for run in run_ids(pristine):
        assert _report(out, run) == _report(pristine, run)
    assert path.read_bytes() == bytes(data)  # the damaged file is only read
