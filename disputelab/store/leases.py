"""One writer per episode: a process claims an episode in the store before running it.

Two `experiment --resume` processes on one store would otherwise run the same episode id
at once and trample each other's turns. A claim is a lease: it names its holder (host and
process id) and lapses unless renewed. A holder that crashed gives its claims up at once
when it ran on this host (its process is gone), and after the lease time elsewhere.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import time
from dataclasses import dataclass
from enum import StrEnum

from disputelab.episode import Status
from disputelab.store.tx import immediate

TABLE = """
CREATE TABLE IF NOT EXISTS leases (
    episode_id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    token TEXT NOT NULL,
    expires_at REAL NOT NULL
)
"""

DEFAULT_TTL_S = 60.0


class Claim(StrEnum):
    MINE = "mine"  # run it
    DONE = "done"  # already complete in the store: nothing to run
    BUSY = "busy"  # another live process is running it


@dataclass(frozen=True)
class Holder:
    host: str
    pid: int

    def alive(self) -> bool:
        """Whether the holder may still be running. Only a process on this host can be
        checked; one elsewhere is trusted until its lease lapses."""
        if self.host != socket.gethostname():
            return True
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True  # someone else's process: it exists
        return True


class Leases:
    """This process's claims on episodes of one store."""

    def __init__(self, db: sqlite3.Connection, ttl_s: float = DEFAULT_TTL_S) -> None:
        self.db = db
        self.ttl_s = ttl_s
        self.me = Holder(socket.gethostname(), os.getpid())
        # Tells this object's claims from another Leases in the same process (tests).
        self.token = f"{self.me.pid}-{id(self)}-{time.monotonic_ns()}"
        self.held: set[str] = set()
        self.finished: list[str] = []  # complete: their leases go with the next claim
        self.db.execute(TABLE)

    def claim(self, episode_id: str) -> tuple[Claim, Holder | None]:
        """Claim `episode_id` unless it is complete or another live process holds it;
        the holder is returned with BUSY, for messages."""
        now = time.time()
        with immediate(self.db) as db:
            row = db.execute(
                "SELECT status FROM episodes WHERE episode_id = ?", (episode_id,)
            ).fetchone()
            if row is not None and row[0] not in (Status.INCOMPLETE.value, Status.FAILED.value):
                return Claim.DONE, None
            lease = db.execute(
                "SELECT host, pid, token, expires_at FROM leases WHERE episode_id = ?",
                (episode_id,),
            ).fetchone()
            if lease is not None and lease[2] != self.token:
                holder = Holder(lease[0], lease[1])
                if lease[3] > now and holder.alive():
                    return Claim.BUSY, holder
            db.execute(
                "INSERT OR REPLACE INTO leases VALUES (?,?,?,?,?)",
                (episode_id, self.me.host, self.me.pid, self.token, now + self.ttl_s),
            )
            self._drop_finished(db)
        self.held.add(episode_id)
        return Claim.MINE, None

    def release_finished(self, episode_id: str) -> None:
        """Give up the claim on an episode now complete in the store, with the next claim
        rather than in a transaction of its own: nobody can take a complete episode, so
        its lease meanwhile holds nothing back."""
        self.finished.append(episode_id)

    def _drop_finished(self, db: sqlite3.Connection) -> None:
        if self.finished:
            self._drop(db, self.finished)
            self.held.difference_update(self.finished)
            self.finished.clear()

    def _drop(self, db: sqlite3.Connection, episode_ids: list[str]) -> None:
        """Delete this object's leases on `episode_ids`, inside the caller's transaction."""
        db.executemany(
            "DELETE FROM leases WHERE episode_id = ? AND token = ?",
            [(e, self.token) for e in episode_ids],
        )

    def renew(self) -> None:
        """Push back the expiry of every claim still held."""
        if not self.held:
            return
        with immediate(self.db) as db:
            db.execute(
                "UPDATE leases SET expires_at = ? WHERE token = ?",
                (time.time() + self.ttl_s, self.token),
            )

    def release(self, episode_id: str) -> None:
        with immediate(self.db) as db:
            self._drop(db, [episode_id])
        self.held.discard(episode_id)

    def release_all(self) -> None:
        """Give up every claim of this object, and sweep the leases nobody will: those
        on complete episodes whose holder is gone or whose time is up."""
        with immediate(self.db) as db:
            db.execute("DELETE FROM leases WHERE token = ?", (self.token,))
            self._sweep_complete(db)
        self.held.clear()
        self.finished.clear()

    def _sweep_complete(self, db: sqlite3.Connection) -> None:
        """A holder killed between finishing an episode and its next claim leaves a lease
        on a complete episode (see `release_finished`). A resume skips complete episodes
        without claiming them, so without this sweep such a lease would stay for good."""
        rows = db.execute(
            "SELECT l.episode_id, l.host, l.pid, l.expires_at FROM leases l"
            " JOIN episodes e ON e.episode_id = l.episode_id WHERE e.status NOT IN (?, ?)",
            (Status.INCOMPLETE.value, Status.FAILED.value),
        ).fetchall()
        now = time.time()
        stale = [
            (e,)
            for e, host, pid, expires in rows
            if expires <= now or not Holder(host, pid).alive()
        ]
        db.executemany("DELETE FROM leases WHERE episode_id = ?", stale)


def live_runs(db: sqlite3.Connection) -> set[str]:
    """The runs some live process holds an episode of: being played now. An episode id
    starts with its run's id and `/` (an experiment's) or `-` (a single run's)."""
    known = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='leases'")
    if known.fetchone() is None:
        return set()  # a store no run has claimed an episode in
    rows = db.execute(
        "SELECT r.run_id, l.host, l.pid, l.expires_at FROM runs r JOIN leases l"
        " ON substr(l.episode_id, 1, length(r.run_id) + 1) IN (r.run_id || '/', r.run_id || '-')"
    ).fetchall()
    here, now = socket.gethostname(), time.time()
    return {
        str(run_id)
        for run_id, host, pid, expires_at in rows
        # A process elsewhere cannot be checked: its lease is trusted until it lapses.
        if (host == here and Holder(host, pid).alive()) or (host != here and expires_at > now)
    }
