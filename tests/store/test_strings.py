"""The table of distinct strings (store schema 7): what repeats is stored once, every
episode reads back exactly as played, a store of schema 6 reads and reports as before,
and a lost string costs only the episodes that name it."""

from __future__ import annotations

import gzip
import json
import math
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from disputelab.episode import (
    Action,
    Episode,
    Intervention,
    Outcome,
    Stance,
    Status,
    Thought,
    Turn,
    TurnChoice,
    Usage,
    Verdict,
)
from disputelab.scenario.io import scenario_to_data
from disputelab.store.sqlite import DB_NAME, SCHEMA_VERSION, DamagedStoreError, Store
from tests.helpers import play, scenario
from tests.store.test_damage import _leaf, cli, smash

SCHEMA6 = Path(__file__).parent / "data" / "schema6.sqlite.gz"
FORMATS = ("md", "json", "csv", "parquet", "html")


def _every_field() -> list[Turn]:
    """Turns that use every field a turn, a move and an intervention have, with numbers
    that compare equal but encode differently (0.0 and -0.0; 1 and 1.0 where a field
    keeps its type)."""
    stances = {"rent": Stance("A", ("A", "B")), "repairs": Stance(None, ())}
    offer = Action(
        "I can pay 1,200.",
        stances,
        thought="worth 0.8",
        verdict=Verdict("accept", "satisfied", "fair"),
        offer={"price": 1200.0},
        clauses=("paid in 30 days",),
    )
    choice = TurnChoice(
        "tenant",
        "self-selected",
        4.0,
        "t1",
        {"tenant": [Thought("t1", "tenant", "say it", 4.0, 3.0, "why", ("CON#0",))]},
        {"tenant": 4.0},
        2,
    )
    proposal = Intervention(
        "How about B?", {"rent": "B"}, "stall", "points", ("s. 11",), {"price": 1.0}
    )
    return [
        Turn(0, 0, "mediator", "mediator", "How about B?", intervention=proposal),
        Turn(1, 1, "tenant", "party", "I can pay 1,200.", action=offer, consensus={"rent": 0.0}),
        Turn(2, 2, "landlord", "party", "I can pay 1,200.", action=offer, consensus={"rent": -0.0}),
        Turn(
            3,
            3,
            "tenant",
            "party",
            "Said aloud.",
            action=Action("Thought over.", stances, offer={"price": -0.0}),
            consensus={"rent": 1.0, "repairs": 0.5},
            latency_s=0.25,
            usage=Usage(1, 10, 5, None),
            stage="closure",
            delivered={"landlord": "Paraphrased."},
            choice=choice,
        ),
        Turn(4, 4, "landlord", "party", "", action=Action("", {}, offer={"price": 0.0})),
        Turn(5, 5, "tenant", "party", "", usage=Usage(1, 10, 5, 1)),
        Turn(6, 6, "tenant", "party", "", usage=Usage(1, 10, 5, 1.0)),
    ]


def _same(a: list[Turn], b: list[Turn]) -> bool:
    """Equal, and every number of the same type and sign (Turn equality takes 1 == 1.0)."""
    return a == b and json.dumps([t.to_dict() for t in a]) == json.dumps([t.to_dict() for t in b])


def _write(store: Store, eid: str, turns: list[Turn], run_id: str) -> None:
    s = scenario("tenancy")
    ep = Episode(s.id, "roundtable", 0, {"parties": "rule"})
    store.start_episode(eid, run_id, ep, scenario_to_data(s))
    store.append_turns(eid, turns[:2])
    store.append_turns(eid, turns[2:])
    ep.outcome = Outcome(Status.RESOLVED, "deal", {"rent": "B"}, {"price": 1200.0})
    store.finish_episode(eid, ep)


def test_an_episode_round_trips_exactly_the_first_time_and_once_it_repeats(
    tmp_path: Path,
) -> None:
    played = play(scenario("workplace"), mediator="rule", seed=3, budget=30).turns
    ours = _every_field()
    turns = [
        *ours,
        *(Turn.from_dict({**t.to_dict(), "index": t.index + len(ours)}) for t in played),
    ]
    store = Store(tmp_path)
    run_id = store.create_run("run")
    for eid in ("first", "again", "third"):  # in their own rows, then named strings
        _write(store, eid, turns, run_id)
    named = store.db.execute(
        "SELECT COUNT(*) FROM turns WHERE episode_id = 'third' AND text_ref IS NOT NULL"
    ).fetchone()[0]
    assert named == len(turns)
    for reader in (store, Store(tmp_path)):  # with this process's caches, and without
        for eid in ("first", "again", "third"):
            record = reader.load_episode(eid)
            assert _same(record.episode.turns, turns), eid
            assert record.scenario == scenario_to_data(scenario("tenancy"))
            assert record.episode.outcome == Outcome(
                Status.RESOLVED, "deal", {"rent": "B"}, {"price": 1200.0}
            )


def test_numbers_that_compare_equal_keep_their_own_encoding(tmp_path: Path) -> None:
    store = Store(tmp_path)
    run_id = store.create_run("run")
    for eid in ("a", "b"):
        _write(store, eid, _every_field(), run_id)
    turns = store.load_episode("b").episode.turns
    assert [t.consensus for t in turns[1:3]] == [{"rent": 0.0}, {"rent": -0.0}]
    assert math.copysign(1, turns[2].consensus["rent"]) == -1  # type: ignore[index]
    offers = [t.action.offer["price"] for t in turns[3:] if t.action]
    assert [math.copysign(1, x) for x in offers] == [-1, 1]
    assert [t.usage.cost_usd for t in turns[5:] if t.usage] == [1, 1.0]
    assert [type(t.usage.cost_usd) for t in turns[5:] if t.usage] == [int, float]
    stored = store.db.execute(
        "SELECT COALESCE(s.text, t.consensus) FROM turns t LEFT JOIN strings s"
        " ON s.id = t.consensus_ref WHERE t.episode_id = 'b' AND t.idx IN (1, 2) ORDER BY t.idx"
    ).fetchall()
    assert stored == [('{"rent":0.0}',), ('{"rent":-0.0}',)]


def test_turns_sharing_one_consensus_name_one_string_and_each_reads_back_its_own(
    tmp_path: Path,
) -> None:
    shared = {"rent": 0.5, "repairs": 1.0}
    alike = dict(shared)  # equal, but not the same object
    moved = {"rent": 1.0, "repairs": 1.0}
    vectors = [shared, shared, shared, alike, moved, shared]
    turns = [Turn(i, i, "a", "party", f"turn {i}", consensus=c) for i, c in enumerate(vectors)]
    store = Store(tmp_path)
    run_id = store.create_run("run")
    for eid in ("first", "second"):  # the second names what the first held itself
        _write(store, eid, turns, run_id)
    refs = store.db.execute(
        "SELECT consensus_ref FROM turns WHERE episode_id = 'second' ORDER BY idx"
    ).fetchall()
    assert len({r for (r,) in refs[:4]} | {refs[5][0]}) == 1 and refs[4] != refs[0]
    for reader in (store, Store(tmp_path)):
        for eid in ("first", "second"):
            assert [t.consensus for t in reader.load_episode(eid).episode.turns] == vectors


def test_what_repeats_is_stored_once(tmp_path: Path) -> None:
    """Across twenty episodes of one scenario, every string is in the table once, and a
    value is in a row of its own only the first time this process met it."""
    store = Store(tmp_path)
    run_id = store.create_run("run")
    s = scenario("workplace")
    said: list[str] = []
    for seed in range(10):
        for mediator in ("none", "rule"):
            ep = play(s, mediator=mediator, seed=seed, budget=40)
            eid = f"{seed}/{mediator}"
            store.start_episode(eid, run_id, ep, scenario_to_data(s))
            store.append_turns(eid, ep.turns)
            said += [t.text for t in ep.turns]
    db = store.db
    assert db.execute("SELECT COUNT(*) - COUNT(DISTINCT text) FROM strings").fetchone() == (0,)
    inline = [r[0] for r in db.execute("SELECT text FROM turns WHERE text_ref IS NULL")]
    assert len(inline) == len(set(inline))
    named = {r[0] for r in db.execute("SELECT s.text FROM turns JOIN strings s ON s.id = text_ref")}
    assert named | set(inline) == set(said)
    assert len(said) > 3 * len(set(said))  # the templates do repeat...
    stored = sum(len(t.encode()) for t in inline) + sum(len(t.encode()) for t in named)
    assert stored <= 2 * sum(len(t.encode()) for t in set(said))  # ...and cost at most twice
    scenarios = db.execute(
        "SELECT COUNT(*) FROM episodes WHERE scenario_ref IS NULL AND scenario != ''"
    ).fetchone()[0]
    assert scenarios == 1  # the first episode holds it; the other 19 name one string


def test_two_stores_on_one_file_write_a_string_once(tmp_path: Path) -> None:
    one, two = Store(tmp_path), Store(tmp_path)
    run_id = one.create_run("run")
    s = scenario("tenancy")
    for n, store in enumerate((one, two, one, two)):
        store.start_episode(f"e{n}", run_id, Episode(s.id, "roundtable", n, {}), {"id": s.id})
        store.append_turns(f"e{n}", [Turn(0, 1, "tenant", "party", "Rent stays.")])
    rows = one.db.execute("SELECT COUNT(*) FROM strings WHERE text = 'Rent stays.'").fetchone()
    assert rows == (1,)
    for n in range(4):
        assert one.load_episode(f"e{n}").episode.turns[0].text == "Rent stays."


def test_a_transaction_that_rolls_back_leaves_no_id_behind(tmp_path: Path) -> None:
    store = Store(tmp_path)
    run_id = store.create_run("run")
    store.start_episode("e", run_id, Episode("tenancy", "roundtable", 0, {}), {})
    store.append_turns("e", [Turn(0, 1, "tenant", "party", "Again.")])  # in its own row
    with pytest.raises(sqlite3.IntegrityError):  # the second time interns it, then fails
        store.append_turns(
            "e", [Turn(1, 2, "tenant", "party", "Again."), Turn(0, 1, "tenant", "party", "x")]
        )
    assert store.db.execute("SELECT COUNT(*) FROM strings").fetchone() == (0,)
    store.append_turns("e", [Turn(1, 2, "tenant", "party", "Again.")])
    assert [t.text for t in store.load_episode("e").episode.turns] == ["Again.", "Again."]


def test_a_string_that_is_gone_fails_in_one_line_and_costs_only_its_episodes(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path)
    run_id = store.create_run("run", run_id="r")
    s = scenario("tenancy")
    for n, text in enumerate(("Only mine.", "Shared.", "Shared.", "Shared.")):
        ep = Episode(s.id, "roundtable", n, {})
        store.start_episode(f"e{n}", run_id, ep, {"id": s.id})
        store.append_turns(f"e{n}", [Turn(0, 1, "tenant", "party", text)])
        ep.outcome = Outcome(Status.RESOLVED, "deal")
        store.finish_episode(f"e{n}", ep)
    store.db.execute("DELETE FROM strings WHERE text = 'Shared.'")
    with pytest.raises(DamagedStoreError, match="which a row names, is missing"):
        store.load_episode("e2")
    assert store.load_episode("e1").episode.turns[0].text == "Shared."  # its own row
    store.close()
    out = tmp_path / "rescued"
    result = cli(tmp_path, "store", "recover", str(out))
    assert result.exit_code == 1, result.output
    assert "run r (run): 2 of 4 episodes copied" in result.stdout
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


# ---- a store written by the previous schema -----------------------------------------


@pytest.fixture
def schema6(tmp_path: Path) -> Path:
    """A store that disputelab wrote with store schema 6 (the code before the table of
    strings): an experiment of two scenarios x two conditions x (twin + rule), budget 12,
    and a single `run`, compacted."""
    root = tmp_path / "old"
    root.mkdir()
    (root / DB_NAME).write_bytes(gzip.decompress(SCHEMA6.read_bytes()))
    return root


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


def test_a_schema6_store_is_brought_up_to_date_and_reads_whole(schema6: Path) -> None:
    db = sqlite3.connect(schema6 / DB_NAME)
    assert db.execute("SELECT value FROM meta").fetchone() == ("6",)
    old_rows = db.execute("SELECT * FROM turns ORDER BY rowid").fetchall()
    db.close()
    store = Store(schema6)
    version = store.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    assert version == (str(SCHEMA_VERSION),)
    # Rows written before are kept as they were (the new columns are empty), not rewritten.
    assert [r[:14] for r in store.db.execute("SELECT * FROM turns ORDER BY rowid")] == old_rows
    for (eid,) in store.db.execute("SELECT episode_id FROM episodes").fetchall():
        record = store.load_episode(eid)
        assert record.complete and record.episode.turns and record.scenario["id"]
    store.close()
    assert cli(schema6, "store", "check").exit_code == 0


def test_a_schema6_run_reports_the_same_as_its_episodes_written_anew(
    schema6: Path, tmp_path: Path
) -> None:
    """Every report format of every run of the old store, against the same store with
    each episode's turns written again by this version (twice, so that the second
    writing names strings): byte for byte the same."""
    anew = tmp_path / "anew"
    shutil.copytree(schema6, anew)
    store = Store(anew)
    episodes = [str(r[0]) for r in store.db.execute("SELECT episode_id FROM episodes")]
    for _ in range(2):
        for eid in episodes:
            turns = store.load_episode(eid).episode.turns
            store.db.execute("DELETE FROM turns WHERE episode_id = ?", (eid,))
            store.append_turns(eid, turns)
    named = store.db.execute("SELECT COUNT(*) FROM turns WHERE text_ref IS NOT NULL").fetchone()
    assert named[0] > 0
    store.close()
    old, new = _reports(schema6, tmp_path / "old-reports"), _reports(anew, tmp_path / "new")
    assert len(old) == 2 * len(FORMATS)
    for name, report in old.items():
        assert new[name] == report, name


def test_a_schema6_store_takes_new_runs_beside_its_old_ones(schema6: Path, tmp_path: Path) -> None:
    result = cli(schema6, "run", "tenancy", "--mediator", "rule", "--seed", "3", "--budget", "8")
    assert result.exit_code == 0, result.output
    assert cli(schema6, "store", "check").exit_code == 0
    out = tmp_path / "rescued"
    assert cli(schema6, "store", "recover", str(out)).exit_code == 0
    assert _loaded(out) == _loaded(schema6)
    runs = json.loads(cli(out, "runs", "--format", "json").stdout)
    assert len(runs) == 3 and all(r["status"] == "complete" for r in runs)


def test_an_older_disputelab_refuses_this_store_in_one_line(tmp_path: Path) -> None:
    Store(tmp_path).db.execute(
        "UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),)
    )
    result = cli(tmp_path, "runs")
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert "written by a newer disputelab" in line


# Any text SQLite takes: every code point but the surrogates, quotes and controls included.
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(thought=_TEXT, utterance=_TEXT, said_aloud=st.booleans())
def test_a_party_moves_own_text_reads_back_exactly_whatever_it_holds(
    tmp_path: Path, thought: str, utterance: str, said_aloud: bool
) -> None:
    move = Action(utterance, {"rent": Stance("A", ("A",))}, thought=thought)
    text = utterance if said_aloud else utterance + " (aloud)"
    turn = Turn(0, 0, "tenant", "party", text, action=move)
    turns = [turn, Turn.from_dict({**turn.to_dict(), "index": 1})]  # the second names a string
    store = Store(tmp_path / f"s{abs(hash((thought, utterance, said_aloud)))}")
    _write(store, "e", turns, store.create_run("run"))
    assert _same(store.load_episode("e").episode.turns, turns)
    own = store.db.execute("SELECT action FROM turns WHERE idx = 1").fetchone()[0]
    assert (json.loads(own) if own else {}) == {
        **({"thought": thought} if thought else {}),
        **({} if said_aloud else {"utterance": utterance}),
    }
