"""Is a store's file sound? SQLite's own checks, what a file is judged to be by its first
bytes and tables, and the one-line errors that name `store check` and `store recover`.
"""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import stat
from pathlib import Path

from disputelab.errors import DisputelabError

_SQLITE_MAGIC = b"SQLite format 3\x00"


class StoreError(DisputelabError):
    """The store cannot do what was asked (unknown run, unreadable database)."""


class DamagedStoreError(StoreError):
    """The database is damaged: SQLite finds it malformed, or a stored value does not
    decode. The message names the commands that diagnose the store and rescue its runs."""

    def __init__(self, root: Path, reason: str, writing: bool = False) -> None:
        self.root = root
        self.reason = reason
        store = shlex.quote(str(root))
        effect = "refusing to write into it" if writing else "cannot read it"
        super().__init__(
            f"store {root} is damaged ({reason}); {effect}. Diagnose it with "
            f"`disputelab --store {store} store check`, and copy its readable runs into a "
            f"new store with `disputelab --store {store} store recover OUT_DIR`"
        )


def is_damage(exc: sqlite3.Error) -> bool:
    """Whether an SQLite error means a damaged file, not a busy or unopenable one."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    text = str(exc)
    return (
        name.startswith("SQLITE_CORRUPT")
        or name == "SQLITE_NOTADB"
        or "malformed" in text
        or text.startswith("Could not decode to UTF-8")
    )


def damage_reason(exc: Exception) -> str:
    """An error in one short line; for text that is not UTF-8, the column that holds it
    rather than the garbled text itself."""
    text = str(exc)
    if m := re.match(r"Could not decode to UTF-8 column '([^']*)'", text):
        return f"column {m[1]} holds text that is not UTF-8"
    first = text.splitlines()[0] if text.strip() else type(exc).__name__
    return first if len(first) <= 200 else first[:199] + "…"


def is_read_only_failure(exc: sqlite3.Error, folder: Path) -> bool:
    """Whether SQLite failed on a database in `folder` because it may not write (the
    file, or the folder where a WAL database keeps its shared-memory file), not because
    anything is damaged: a read-only error, or a failure to open in a folder this user
    may not write."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if code is not None else None
    read_only = primary == sqlite3.SQLITE_READONLY or "readonly database" in str(exc)
    # Not a lock or an I/O error: those are what they say, in any folder.
    cannot_open = primary == sqlite3.SQLITE_CANTOPEN or "unable to open" in str(exc)
    return read_only or (cannot_open and not os.access(folder, os.W_OK))


def immutable_uri(path: Path) -> str:
    """The URI that reads the database at `path` as an immutable file: for a store this
    user may not write, where SQLite cannot make the shared-memory file it reads a WAL
    database through. An immutable read ignores the write-ahead log, so a log that holds
    anything is refused rather than silently left out."""
    wal = path.with_name(f"{path.name}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise StoreError(
            f"store {path.parent} cannot be written by this user, and its latest runs are "
            f"still in its write-ahead log ({wal.name}), which only a user who may write "
            "the folder can read; copy the folder somewhere writable and open the copy"
        )
    return f"{path.resolve().as_uri()}?immutable=1"


def store_failure(root: Path, exc: sqlite3.Error, writing: bool = False) -> StoreError:
    """The error to raise for an SQLite failure on the store at `root`."""
    if is_damage(exc):
        return DamagedStoreError(root, damage_reason(exc), writing)
    if is_read_only_failure(exc, root):
        return StoreError(
            f"store {root} cannot be written by this user (read-only); "
            "give `store` a folder you may write to"
        )
    if _primary_code(exc) == sqlite3.SQLITE_FULL:
        # Nothing is damaged: SQLite rolls the failed write back. What was committed
        # before it stays, so a resumed experiment carries on from there.
        return StoreError(
            f"the disk holding store {root} is full ({exc}); free some space, then run "
            "again (an experiment with --resume) to carry on where it stopped"
        )
    return StoreError(f"cannot use store at {root}: {damage_reason(exc)}")


def _primary_code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return code & 0xFF if code is not None else None


def quick_check(db: sqlite3.Connection, thorough: bool = False) -> list[str]:
    """What SQLite's quick_check finds wrong, one message each (at most ten); empty when
    healthy. `thorough` runs integrity_check, which also matches indexes to tables."""
    pragma = "integrity_check" if thorough else "quick_check"
    try:
        rows = db.execute(f"PRAGMA {pragma}(10)").fetchall()
    except sqlite3.DatabaseError as exc:  # a page too damaged to walk at all
        return [damage_reason(exc)]
    messages = [str(r[0]).removeprefix("*** in database main ***\n") for r in rows]
    return [] if messages == ["ok"] else messages


def identify(db: sqlite3.Connection, path: Path) -> bool:
    """Whether the database at `path` holds a store (False: it holds no tables at all, so
    it can become one); a StoreError when it holds something else. Every version's store
    records its schema_version in `meta`."""
    rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    tables = sorted(str(r[0]) for r in rows)
    if not tables:
        return False
    if (
        "meta" in tables
        and db.execute("SELECT 1 FROM meta WHERE key = 'schema_version'").fetchone()
    ):
        return True
    shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
    raise StoreError(f"{path} is not a disputelab store: it holds SQLite tables ({shown})")


def is_sqlite_file(path: Path) -> bool:
    """Whether `path` is a regular file that begins as an SQLite database does. Nothing
    but a regular file is read: a FIFO or a terminal would wait for ever."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with path.open("rb") as f:
            return f.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except (OSError, ValueError):
        return False


def file_problem(path: Path) -> str | None:
    """Why an existing database file cannot be a store, judged by its first bytes."""
    try:
        with path.open("rb") as f:
            head = f.read(len(_SQLITE_MAGIC))
    except OSError as exc:  # no permission to read it, say
        return f"{path} cannot be read: {exc.strerror or exc}"
    if not head:
        return f"{path} is empty (0 bytes), not a disputelab store; remove it to start anew"
    if head != _SQLITE_MAGIC:
        return f"{path} is not a disputelab store: it is not an SQLite database"
    return None
