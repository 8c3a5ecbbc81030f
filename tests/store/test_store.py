"""The store loses nothing, and never passes a half-finished episode off as complete."""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from disputelab.episode import Action, Episode, Outcome, Status, Turn
from disputelab.evaluation.metrics import MetricResult
from disputelab.report.render import rows_csv, run_markdown, run_rows
from disputelab.store.chunks import unpack
from disputelab.store.sqlite import DB_NAME, SCHEMA_VERSION, Store, StoreError
from tests.helpers import WAIT_S, run_matched, scenario, stored_turns


def test_a_run_round_trips_through_the_store(tmp_path: Path) -> None:
    store = Store(tmp_path)
    result = run_matched(store, scenario("tenancy"), mediator="rule", seed=4)
    rec = store.load_episode(result.episode_id)
    assert rec.complete and rec.arm == "mediated"
    assert rec.matched_episode_id == result.baseline_id
    original = [t.to_dict() for t in result.episode.turns]
    assert [t.to_dict() for t in rec.episode.turns] == original
    assert rec.episode.outcome == result.episode.outcome
    assert rec.episode.initial_consensus == result.episode.initial_consensus
    stored = {s.metric: s.value for s in store.scores(result.episode_id)}
    for name, r in result.scores.items():
        assert stored[name] == pytest.approx(r.value, nan_ok=True)


def test_nan_scores_keep_their_reason(tmp_path: Path) -> None:
    store = Store(tmp_path)
    result = run_matched(store, scenario("tenancy"), mediator="none", seed=0)
    store.add_scores(
        result.episode_id, "judge-x", "2", {"m": MetricResult(math.nan, "judge failed: timeout")}
    )
    (score,) = [s for s in store.scores(result.episode_id) if s.evaluator == "judge-x"]
    assert math.isnan(score.value) and score.explanation == "judge failed: timeout"


def test_a_started_but_unfinished_episode_reads_as_incomplete(tmp_path: Path) -> None:
    store = Store(tmp_path)
    done = run_matched(store, scenario("tenancy"), mediator="none", seed=0)
    run_id = store.create_run("run")
    store.start_episode("partial", run_id, done.episode, {"parties": []})
    for turn in done.episode.turns[:5]:
        store.append_turn("partial", turn)
    rec = store.load_episode("partial")
    assert rec.status is Status.INCOMPLETE and not rec.complete
    assert rec.episode.outcome is None
    assert len(rec.episode.turns) == 5
    assert "INCOMPLETE" in run_markdown(store, run_id)
    (row,) = run_rows(store, [run_id])
    assert row["status"] == "incomplete" and "final_consensus" not in row
    assert "final_consensus" not in rows_csv([row]).splitlines()[0]


def test_a_killed_process_keeps_every_finished_turn(tmp_path: Path) -> None:
    # A child plays a long episode whose turn commits are slowed down, and is SIGKILLed
    # part-way through: every committed turn must survive, and the episode is incomplete.
    child = textwrap.dedent(f"""
        import time
        from disputelab.store.sqlite import Store
        from tests import helpers
        from disputelab.scenario import builtin_scenarios
        store = Store({str(tmp_path)!r})
        real = store.append_turns
        def slow(eid, turns):
            real(eid, turns)
            time.sleep(0.02)
        store.append_turns = slow
        helpers.run_matched(store, builtin_scenarios()["workplace"], "none", budget=5000)
    """)
    # Every turn committed on its own (by default they are grouped, a second at a time).
    env = {**os.environ, "DISPUTELAB_COMMIT_EVERY_S": "0"}
    proc = subprocess.Popen([sys.executable, "-c", child], cwd=Path(__file__).parents[2], env=env)
    db = tmp_path / DB_NAME
    deadline = time.time() + WAIT_S  # only a hung child gets near this
    count = 0
    while time.time() < deadline:
        time.sleep(0.1)
        if db.exists():
            try:
                count = len(stored_turns(sqlite3.connect(db)))
            except sqlite3.OperationalError:
                continue
            if count >= 10:
                break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert count >= 10, "the child never got going"
    store = Store(tmp_path)
    (eid,) = store.episode_ids(store.resolve_run("last"))
    rec = store.load_episode(eid)
    assert rec.status is Status.INCOMPLETE
    assert len(rec.episode.turns) >= count
    assert [t.index for t in rec.episode.turns] == list(range(len(rec.episode.turns)))


def test_runs_resolve_by_id_prefix_and_last(tmp_path: Path) -> None:
    store = Store(tmp_path)
    first = run_matched(store, scenario("tenancy"), mediator="none", seed=0).run_id
    second = run_matched(store, scenario("tenancy"), mediator="none", seed=1).run_id
    assert store.resolve_run("last") == second
    assert store.resolve_run(first) == first
    with pytest.raises(StoreError, match="no run"):
        store.resolve_run("nope")


def test_an_empty_store_has_no_last_run(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no runs"):
        Store(tmp_path).resolve_run("last")


def test_the_store_uses_write_ahead_logging(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_store_path_that_is_a_file_is_refused_clearly(tmp_path: Path) -> None:
    target = tmp_path / "runs"
    target.write_text("not a directory")
    with pytest.raises(StoreError, match="is a file; a store is a directory"):
        Store(target)


def test_a_turn_keeps_what_each_listener_received(tmp_path: Path) -> None:
    store = Store(tmp_path)
    run_id = store.create_run("run")
    s = scenario("tenancy")
    store.start_episode("e", run_id, Episode(s.id, "roundtable", 0, {}), {"id": s.id})
    said = Turn(
        0, 1, "tenant", "party", "That is outrageous.", delivered={"landlord": "I disagree."}
    )
    store.append_turn("e", said)
    store.append_turn("e", Turn(1, 2, "landlord", "party", "Let us talk."))
    first, second = store.load_episode("e").episode.turns
    assert first.text == "That is outrageous." and first.delivered == {"landlord": "I disagree."}
    assert second.delivered is None


def test_a_store_from_the_previous_schema_is_migrated_in_place(tmp_path: Path) -> None:
    store = Store(tmp_path)
    result = run_matched(store, scenario("tenancy"), "rule", seed=2, budget=12)
    before = store.load_episode(result.episode_id).episode.turns
    # Turn the store back into schema version 2, which had no delivery column (nor the
    # turn-taking column of version 4, nor the amounts of version 5).
    store.db.execute("ALTER TABLE turns DROP COLUMN delivered")
    store.db.execute("ALTER TABLE turns DROP COLUMN turn_taking")
    store.db.execute("ALTER TABLE episodes DROP COLUMN amounts")
    store.db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    store.close()
    again = Store(tmp_path)
    version = again.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert version == (str(SCHEMA_VERSION),)
    assert again.load_episode(result.episode_id).episode.turns == before
    assert again.load_episode(result.episode_id).episode.outcome is not None


def test_agreed_amounts_and_offers_survive_the_store(tmp_path: Path) -> None:
    store = Store(tmp_path)
    run_id = store.create_run("run")
    s = scenario("tenancy")
    ep = Episode(s.id, "roundtable", 0, {})
    store.start_episode("e", run_id, ep, {"id": s.id})
    offer = Action("I can pay 1,200.", {}, offer={"price": 1200.0}, clauses=("paid in 30 days",))
    store.append_turn("e", Turn(0, 1, "tenant", "party", offer.utterance, action=offer))
    ep.outcome = Outcome(Status.RESOLVED, "deal", {}, {"price": 1200.0})
    store.finish_episode("e", ep)
    loaded = store.load_episode("e").episode
    assert loaded.outcome is not None and loaded.outcome.amounts == {"price": 1200.0}
    action = loaded.turns[0].action
    assert action is not None
    assert action.offer == {"price": 1200.0} and action.clauses == ("paid in 30 days",)


def test_an_outcome_without_amounts_stores_none(tmp_path: Path) -> None:
    store = Store(tmp_path)
    result = run_matched(store, scenario("tenancy"), "rule", seed=2, budget=12)
    row = store.db.execute(
        "SELECT amounts FROM episodes WHERE episode_id=?", (result.episode_id,)
    ).fetchone()
    assert row == (None,)
    loaded = store.load_episode(result.episode_id).episode
    assert loaded.outcome is not None and loaded.outcome.amounts == {}


def test_a_turn_stores_its_utterance_once_and_reads_back_whole(tmp_path: Path) -> None:
    store = Store(tmp_path)
    result = run_matched(store, scenario("tenancy"), "rule", seed=2, budget=12)
    played = store.load_episode(result.episode_id).episode.turns
    # The utterance is held once in the episode's chunk; neither part of the move repeats it.
    (data,) = store.db.execute(
        "SELECT data FROM turn_chunks WHERE episode_id=?", (result.episode_id,)
    ).fetchone()
    values, rows = unpack(data)
    moves = [(values[r[4]], values[r[5]], json.dumps(r[6] or {})) for r in rows if r[5] is not None]
    assert moves and all(text not in shared + own for text, shared, own in moves)
    assert all(a.action is None or a.action.utterance == a.text for a in played)
    assert any(a.action is not None and a.action.stances for a in played)


def test_rows_written_with_the_utterance_and_stance_objects_still_read(tmp_path: Path) -> None:
    store = Store(tmp_path)
    run_id = store.create_run("run")
    s = scenario("tenancy")
    store.start_episode("e", run_id, Episode(s.id, "roundtable", 0, {}), {"id": s.id})
    old_style = {
        "thought": "",
        "utterance": "Rent stays.",
        "stances": {"rent": {"option": "A", "acceptable": ["A", "B"]}},
        "signal": "continue",
        "tone": "neutral",
    }
    store.db.execute(
        "INSERT INTO turns (episode_id, idx, party_turn, speaker, role, text, action)"
        " VALUES ('e', 0, 1, 'tenant', 'party', 'Rent stays.', ?)",
        (json.dumps(old_style),),
    )
    (turn,) = store.load_episode("e").episode.turns
    assert turn.action is not None and turn.action.to_dict() == old_style


def test_a_store_from_a_newer_version_is_refused_not_misread(tmp_path: Path) -> None:
    Store(tmp_path).db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="written by a newer disputelab"):
        Store(tmp_path)


def test_an_exact_run_id_wins_over_longer_ids_it_prefixes(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.create_run("experiment", run_id="abl")
    store.create_run("experiment", run_id="abl.ablate.posture-competing")
    assert store.resolve_run("abl") == "abl"
    with pytest.raises(StoreError, match="ambiguous"):
        store.resolve_run("ab")
