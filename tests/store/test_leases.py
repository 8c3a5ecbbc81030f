"""Claims on episodes: one writer per episode, given up when the holder is gone."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from disputelab.store.leases import Claim, Holder, Leases
from disputelab.store.sqlite import Store
from tests.helpers import play, scenario


def _store(tmp_path: Path) -> Store:
    return Store(tmp_path / "runs")


def _other_process(store: Store) -> Leases:
    """A second claimant on the same database, as another process would be."""
    return Leases(sqlite3.connect(store.path, isolation_level=None, timeout=5))


def test_an_episode_claimed_by_one_process_is_busy_for_another(tmp_path: Path) -> None:
    store = _store(tmp_path)
    mine, theirs = Leases(store.db), _other_process(store)
    assert mine.claim("e1") == (Claim.MINE, None)
    claim, holder = theirs.claim("e1")
    assert claim is Claim.BUSY and holder == mine.me
    assert mine.claim("e1")[0] is Claim.MINE  # claiming again is harmless
    mine.release("e1")
    assert theirs.claim("e1")[0] is Claim.MINE


def _claimed_then_finished(tmp_path: Path) -> tuple[Store, Leases]:
    """A store whose episode e1 was claimed while incomplete, then finished."""
    store = _store(tmp_path)
    ep = play(scenario())
    store.start_episode("e1", store.create_run("experiment"), ep, {})
    leases = Leases(store.db)
    assert leases.claim("e1")[0] is Claim.MINE  # incomplete: runnable
    store.finish_episode("e1", ep)
    return store, leases


def test_a_complete_episode_is_never_claimed_again(tmp_path: Path) -> None:
    store, _ = _claimed_then_finished(tmp_path)
    assert _other_process(store).claim("e1") == (Claim.DONE, None)


def test_a_finished_episodes_lease_goes_with_the_next_claim(tmp_path: Path) -> None:
    """No transaction of its own: a complete episode cannot be taken meanwhile."""
    store, leases = _claimed_then_finished(tmp_path)
    leases.release_finished("e1")
    held = "SELECT episode_id FROM leases ORDER BY episode_id"
    assert store.db.execute(held).fetchall() == [("e1",)]
    assert _other_process(store).claim("e1") == (Claim.DONE, None)
    leases.claim("e2")
    assert store.db.execute(held).fetchall() == [("e2",)]
    assert leases.held == {"e2"}
    leases.release_finished("e2")
    leases.release_all()
    assert store.db.execute(held).fetchall() == []


def test_a_dead_holders_lease_on_a_complete_episode_is_swept_when_a_process_lets_go(
    tmp_path: Path,
) -> None:
    """A holder killed after finishing e1 but before its next claim leaves e1's lease;
    a resume never claims a complete episode, so letting go of its own sweeps it."""
    store, leases = _claimed_then_finished(tmp_path)
    leases.release_finished("e1")
    store.db.execute("UPDATE leases SET pid = ?", (_dead_pid(),))  # its holder is gone
    resumer = _other_process(store)
    resumer.claim("e2")
    resumer.release_all()
    assert store.db.execute("SELECT episode_id FROM leases").fetchall() == []


def test_a_live_holders_lease_on_a_complete_episode_is_left_to_it(tmp_path: Path) -> None:
    store, leases = _claimed_then_finished(tmp_path)
    leases.release_finished("e1")
    _other_process(store).release_all()
    assert store.db.execute("SELECT episode_id FROM leases").fetchall() == [("e1",)]


def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def test_a_lapsed_lease_is_taken_over(tmp_path: Path) -> None:
    store = _store(tmp_path)
    short = Leases(store.db, ttl_s=0.05)
    short.me = Holder("some-other-host", 1)  # cannot be checked from here: trusted
    assert short.claim("e1")[0] is Claim.MINE
    theirs = _other_process(store)
    assert theirs.claim("e1")[0] is Claim.BUSY
    time.sleep(0.1)
    assert theirs.claim("e1")[0] is Claim.MINE


def test_the_claims_of_a_process_that_died_on_this_host_are_free_at_once(
    tmp_path: Path,
) -> None:
    store = _store(tmp_path)
    code = (
        "import sqlite3, sys; from disputelab.store.leases import Leases;"
        "l = Leases(sqlite3.connect(sys.argv[1], isolation_level=None));"
        "assert l.claim('e1')[0].value == 'mine'"
    )
    subprocess.run([sys.executable, "-c", code, str(store.path)], check=True)
    # The process exited holding a 60 s lease; its pid is gone, so the claim is dead.
    assert Leases(store.db).claim("e1")[0] is Claim.MINE


def test_renewing_pushes_back_the_expiry_of_every_held_claim(tmp_path: Path) -> None:
    store = _store(tmp_path)
    leases = Leases(store.db, ttl_s=30)
    leases.claim("e1")
    leases.claim("e2")
    before = dict(store.db.execute("SELECT episode_id, expires_at FROM leases").fetchall())
    time.sleep(0.01)
    leases.renew()
    after = dict(store.db.execute("SELECT episode_id, expires_at FROM leases").fetchall())
    assert all(after[e] > before[e] for e in ("e1", "e2"))
    leases.release_all()
    assert store.db.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0
