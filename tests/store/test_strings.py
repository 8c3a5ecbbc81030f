"""The table of distinct strings: an episode's scenario, which every episode of a cell
shares, is stored once and named by id; a lost string costs only the episodes that name
it. Stores of schemas 6 and 7 (turns in rows of their own, those of 7 naming strings)
are brought up to date, read back exactly and report as before."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from disputelab.episode import Episode, Turn
from disputelab.scenario.io import scenario_to_data
from disputelab.store.sqlite import (
    DB_NAME,
    SCHEMA_VERSION,
    DamagedStoreError,
    Store,
    compact_json,
)
from tests.helpers import play, scenario
from tests.store.test_chunks import same
from tests.store.test_damage import _leaf, cli, smash

SCHEMA6 = Path(__file__).parent / "data" / "schema6.sqlite.gz"
SCHEMA7 = Path(__file__).parent / "data" / "schema7.sqlite.gz"
SCHEMA7_FIELDS = Path(__file__).parent / "data" / "schema7-every-field.json"
FORMATS = ("md", "json", "csv", "parquet", "html")


def _start(store: Store, eid: str, run_id: str, seed: int = 0) -> None:
    s = scenario("tenancy")
    store.start_episode(eid, run_id, Episode(s.id, "roundtable", seed, {}), scenario_to_data(s))


def _scenario_text() -> str:
    return compact_json(scenario_to_data(scenario("tenancy")))


def test_what_repeats_is_stored_once(tmp_path: Path) -> None:
    """Across twenty episodes of one scenario, the table holds the scenario once, the
    first episode holds it in its own row, and the other nineteen name it; the turns
    (schema 8: chunks) name no string at all."""
    store = Store(tmp_path)
    run_id = store.create_run("run")
    s = scenario("workplace")
    for seed in range(10):
        for mediator in ("none", "rule"):
            ep = play(s, mediator=mediator, seed=seed, budget=40)
            eid = f"{seed}/{mediator}"
            store.start_episode(eid, run_id, ep, scenario_to_data(s))
            store.append_turns(eid, ep.turns)
    db = store.db
    assert db.execute("SELECT COUNT(*) FROM strings").fetchone() == (1,)
    scenarios = db.execute(
        "SELECT COUNT(*) FROM episodes WHERE scenario_ref IS NULL AND scenario != ''"
    ).fetchone()[0]
    assert scenarios == 1  # the first episode holds it; the other 19 name one string
    assert db.execute("SELECT COUNT(DISTINCT scenario_ref) FROM episodes").fetchone() == (1,)


def test_two_stores_on_one_file_write_a_string_once(tmp_path: Path) -> None:
    one, two = Store(tmp_path), Store(tmp_path)
    run_id = one.create_run("run")
    for n, store in enumerate((one, two, one, two)):
        _start(store, f"e{n}", run_id, n)
    text = _scenario_text()
    assert one.db.execute("SELECT COUNT(*) FROM strings WHERE text = ?", (text,)).fetchone() == (1,)
    for n in range(4):
        assert one.load_episode(f"e{n}").scenario == scenario_to_data(scenario("tenancy"))


def test_a_transaction_that_rolls_back_leaves_no_id_behind(tmp_path: Path) -> None:
    store = Store(tmp_path)
    run_id = store.create_run("run")
    _start(store, "e0", run_id)  # in its own row
    with pytest.raises(RuntimeError), store.batch():  # the second time interns it...
        _start(store, "e1", run_id)
        raise RuntimeError("then the batch fails")
    assert store.db.execute("SELECT COUNT(*) FROM strings").fetchone() == (0,)
    _start(store, "e1", run_id)  # ...and the id it had is not taken for committed
    assert store.load_episode("e1").scenario == scenario_to_data(scenario("tenancy"))


def test_a_string_that_is_gone_fails_in_one_line_and_costs_only_its_episodes(
    schema7: Path, tmp_path: Path
) -> None:
    """In the schema 7 store, the every-field episode was written three times: the first
    holds its values in its own rows, the other two name them in the table of strings."""
    store = Store(schema7)
    store.db.execute("DELETE FROM strings WHERE text = 'How about B?'")
    with pytest.raises(DamagedStoreError, match="which a row names, is missing"):
        store.load_episode("field-third")
    assert store.load_episode("field-first").episode.turns[0].text == "How about B?"
    store.close()
    out = tmp_path / "rescued"
    result = cli(schema7, "store", "recover", str(out))
    assert result.exit_code == 1, result.output
    assert "(run): 1 of 3 episodes copied" in result.stdout
    assert result.stdout.count("1 of the strings it names does not read") == 2
    assert cli(out, "store", "check").exit_code == 0


def test_a_damaged_page_of_strings_never_passes_a_transcript_off_as_whole(
    tmp_path: Path,
) -> None:
    root = tmp_path / "store"
    for seed in range(3):
        result = cli(root, "run", "workplace", "--mediator", "rule", "--seed", str(seed))
        assert result.exit_code == 0, result.output
    before = _loaded(root)
    db = sqlite3.connect(root / DB_NAME)
    db.execute("VACUUM")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    smash(root / DB_NAME, _leaf(root / DB_NAME, "strings", rightmost=True))
    out = tmp_path / "rescued"
    result = cli(root, "store", "recover", str(out))
    assert result.exit_code == 1, result.output
    assert "does not read" in result.stdout or "do not read" in result.stdout
    copied = _loaded(out)
    assert copied, "nothing was recovered"  # the first episode depends on no string
    assert all(copied[e] == before[e] for e in copied)
    assert cli(out, "store", "check").exit_code == 0


def _loaded(root: Path) -> dict[str, list[dict[str, object]]]:
    store = Store(root, writable=False)
    try:
        ids = [r[0] for r in store.db.execute("SELECT episode_id FROM episodes")]
        return {e: [t.to_dict() for t in store.load_episode(e).episode.turns] for e in ids}
    finally:
        store.close()


# ---- stores written by earlier schemas ----------------------------------------------


def _old_store(tmp_path: Path, data: Path) -> Path:
    root = tmp_path / "old"
    root.mkdir()
    (root / DB_NAME).write_bytes(gzip.decompress(data.read_bytes()))
    return root


@pytest.fixture
def schema6(tmp_path: Path) -> Path:
    """A store that disputelab wrote with store schema 6 (the code before the table of
    strings): an experiment of two scenarios x two conditions x (twin + rule), budget 12,
    and a single `run`, compacted."""
    return _old_store(tmp_path, SCHEMA6)


@pytest.fixture
def schema7(tmp_path: Path) -> Path:
    """A store that disputelab wrote with store schema 7 (a row per turn, what repeats
    named in the table of strings): an experiment of two scenarios x (twin + rule),
    budget 12, two replicates; a single `run`; and a run of one episode that uses every
    field a turn has, written three times (its values in its own rows the first time,
    named strings after), compacted. `schema7-every-field.json` holds those turns."""
    return _old_store(tmp_path, SCHEMA7)


@pytest.fixture(params=["schema6", "schema7"])
def old(request: pytest.FixtureRequest) -> Path:
    return Path(request.getfixturevalue(request.param))


def _reports(root: Path, out: Path) -> dict[str, bytes]:
    out.mkdir()
    runs = json.loads(cli(root, "runs", "--format", "json").stdout)
    found = {}
    for run in [r["run"] for r in runs]:
        for fmt in FORMATS:
            path = out / f"{run}.{fmt}"
            result = cli(root, "report", run, "--format", fmt, "--out", str(path))
            assert result.exit_code == 0, result.output
            found[path.name] = path.read_bytes()
    return found


def test_an_older_store_is_brought_up_to_date_and_reads_whole(old: Path) -> None:
    db = sqlite3.connect(old / DB_NAME)
    (version,) = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert version in ("6", "7")
    old_rows = db.execute("SELECT * FROM turns ORDER BY rowid").fetchall()
    db.close()
    store = Store(old)
    version = store.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    assert version == (str(SCHEMA_VERSION),)
    # Rows written before are kept as they were (new columns empty), not rewritten.
    width = len(old_rows[0])
    assert [r[:width] for r in store.db.execute("SELECT * FROM turns ORDER BY rowid")] == old_rows
    assert store.db.execute("SELECT COUNT(*) FROM turn_chunks").fetchone() == (0,)
    for (eid,) in store.db.execute("SELECT episode_id FROM episodes").fetchall():
        record = store.load_episode(eid)
        assert record.complete and record.episode.turns and record.scenario["id"]
    store.close()
    assert cli(old, "store", "check").exit_code == 0


def test_a_schema7_store_reads_every_field_exactly_from_its_rows_and_its_strings(
    schema7: Path,
) -> None:
    expected = [Turn.from_dict(d) for d in json.loads(SCHEMA7_FIELDS.read_text("utf-8"))]
    for writable in (True, False):  # migrated to schema 8, and read as it was
        store = Store(schema7, writable=writable)
        for eid in ("field-first", "field-again", "field-third"):
            assert same(store.load_episode(eid).episode.turns, expected), eid
        store.close()


def test_an_older_run_reports_the_same_as_its_episodes_written_anew(
    old: Path, tmp_path: Path
) -> None:
    """Every report format of every run of the old store, against the same store with
    each episode's turns written again by this version (as a chunk): byte for byte the
    same."""
    anew = tmp_path / "anew"
    shutil.copytree(old, anew)
    store = Store(anew)
    episodes = [str(r[0]) for r in store.db.execute("SELECT episode_id FROM episodes")]
    for eid in episodes:
        turns = store.load_episode(eid).episode.turns
        store.db.execute("DELETE FROM turns WHERE episode_id = ?", (eid,))
        store.append_turns(eid, turns)
    assert store.db.execute("SELECT COUNT(*) FROM turns").fetchone() == (0,)
    store.close()
    before, after = _reports(old, tmp_path / "old-reports"), _reports(anew, tmp_path / "new")
    assert len(before) >= 2 * len(FORMATS)
    for name, report in before.items():
        assert after[name] == report, name


def test_an_older_store_takes_new_runs_beside_its_old_ones(old: Path, tmp_path: Path) -> None:
    runs_before = len(json.loads(cli(old, "runs", "--format", "json").stdout))
    result = cli(old, "run", "tenancy", "--mediator", "rule", "--seed", "3", "--budget", "8")
    assert result.exit_code == 0, result.output
    assert cli(old, "store", "check").exit_code == 0
    out = tmp_path / "rescued"
    assert cli(old, "store", "recover", str(out)).exit_code == 0
    assert _loaded(out) == _loaded(old)
    runs = json.loads(cli(out, "runs", "--format", "json").stdout)
    assert len(runs) == runs_before + 1 and all(r["status"] == "complete" for r in runs)


def test_an_older_disputelab_refuses_this_store_in_one_line(tmp_path: Path) -> None:
    Store(tmp_path).db.execute(
        "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),)
    )
    result = cli(tmp_path, "runs")
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert "written by a newer disputelab" in line
