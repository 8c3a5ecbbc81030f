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
from typing import BinaryIO

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
        # A store's list of tables that names a column other than a store's: opening it
        # checks every table it needs is there, so a column missing is a name damaged.
        or text.startswith("no such column")
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


def store_failure(
    root: Path, exc: sqlite3.Error | UnicodeDecodeError, writing: bool = False
) -> StoreError:
    """The error to raise for an SQLite failure on the store at `root` (a decode error:
    one whose message Python's sqlite3 could not decode; see `is_sqlite_message`)."""
    if isinstance(exc, UnicodeDecodeError):
        exc = undecodable(exc)
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
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # a page too damaged to walk at all
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


_NOT_FILES = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def not_a_file(path: Path) -> str | None:
    """What `path` is when it exists and is not a regular file (a symbolic link is judged
    by what it points to), judged by stat alone: opening a FIFO would wait for a writer
    for ever, and reading a device would never end."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _NOT_FILES if test(mode)), "not a regular file")


def file_problem(path: Path) -> str | None:
    """Why an existing database file cannot be a store, judged by what it is and its
    first bytes. A file whose first bytes are nearly SQLite's is no problem here: it is a
    store whose header is damaged (`header_damage`)."""
    if kind := not_a_file(path):
        return (
            f"{path} is {kind}, not a file: a store's database is a regular file; "
            "move it away, or name another store folder"
        )
    try:
        with path.open("rb") as f:
            head = f.read(len(_SQLITE_MAGIC))
    except OSError as exc:  # no permission to read it, say
        return f"{path} cannot be read: {exc.strerror or exc}"
    if not head:
        return f"{path} is empty (0 bytes), not a disputelab store; remove it to start anew"
    if head != _SQLITE_MAGIC and not _nearly_magic(head):
        return f"{path} is not a disputelab store: it is not an SQLite database"
    return None


def _nearly_magic(head: bytes) -> bool:
    """Whether the first bytes differ from SQLite's in at most two places."""
    wrong = sum(a != b for a, b in zip(head, _SQLITE_MAGIC, strict=False))
    return len(head) == len(_SQLITE_MAGIC) and wrong <= 2


HEADER_BYTES = 100


def header_problem(header: bytes) -> str | None:
    """What is wrong with the 100-byte header of a database file that disputelab wrote,
    or None. SQLite refuses some of these values outright and misreads every page under
    others (a page size, text encoding or reserved space that is not the file's); the
    values checked are those every store has (UTF-8, no reserved bytes, no auto-vacuum)."""
    if len(header) < HEADER_BYTES:
        return f"its header is cut short ({len(header)} of {HEADER_BYTES} bytes)"
    size = int.from_bytes(header[16:18], "big")
    checks = (
        (header[:16] == _SQLITE_MAGIC, "its first 16 bytes are not SQLite's"),
        (size == 1 or (512 <= size <= 32768 and size & (size - 1) == 0), "page size"),
        (header[18] in (1, 2) and header[19] in (1, 2), "file format version"),
        (header[20] == 0, "reserved space per page"),
        (header[21:24] == b"\x40\x20\x20", "payload fractions"),
        (1 <= int.from_bytes(header[44:48], "big") <= 4, "schema format number"),
        (int.from_bytes(header[52:56], "big") == 0, "auto-vacuum root page"),
        (int.from_bytes(header[56:60], "big") == 1, "text encoding"),
    )
    bad = [what for ok, what in checks if not ok]
    if not bad:
        return None
    if bad[0].startswith("its"):
        return f"its file header is damaged ({bad[0]})"
    return f"its file header is damaged (the {', '.join(bad)} field{'s' if len(bad) > 1 else ''})"


def header_damage(path: Path) -> str | None:
    """Why the header of the database file at `path` (a regular file that file_problem
    passed) is damaged, or None."""
    try:
        with path.open("rb") as f:
            return header_problem(f.read(HEADER_BYTES))
    except OSError:
        return None  # file_problem says why it cannot be read


PAGE_SIZES = tuple(2**n for n in range(9, 17))
_BTREE_FLAGS = frozenset({0x02, 0x05, 0x0A, 0x0D})  # the first byte of a b-tree page
_SAMPLED_PAGES = 64


def page_size_guess(f: BinaryIO) -> int | None:
    """The page size under which a file's first pages begin as b-tree pages do (None: the
    file is too short to tell, or no size fits). A store's pages are mostly b-tree pages.
    Under twice the file's size, page starts are every other one of its own and fit about
    as well; under half of it, every other start falls in the middle of a page, so fits
    about half as well. The size is the smallest that fits about as well as its double."""
    size = f.seek(0, os.SEEK_END)
    fit = {}
    for page_size in PAGE_SIZES:
        starts = range(page_size, min(size, page_size * (_SAMPLED_PAGES + 1)), page_size)
        if not starts:
            break
        hits = 0
        for start in starts:
            f.seek(start)
            hits += f.read(1)[0] in _BTREE_FLAGS
        fit[page_size] = hits / len(starts)
    return next(
        (s for s, ratio in fit.items() if ratio >= 0.25 and ratio >= 0.75 * fit.get(2 * s, 0)),
        None,
    )


def page_size_mismatch(path: Path) -> bool:
    """Whether the file's pages fit another page size than its header's. Only worth
    asking of a file SQLite finds damaged: a guess from the pages' first bytes."""
    try:
        with path.open("rb") as f:
            declared = int.from_bytes(f.read(HEADER_BYTES)[16:18], "big")
            guess = page_size_guess(f)
    except OSError:
        return False
    return guess is not None and guess != (65536 if declared == 1 else declared)


def undecodable(exc: UnicodeDecodeError) -> sqlite3.DatabaseError:
    """The SQLite error that Python's sqlite3 could not decode (its message names an
    object of the file, such as an index whose name is damaged), as an SQLite error."""
    raw = exc.object if isinstance(exc.object, bytes) else b""
    text = raw.decode("utf-8", "replace") or "a message that is not UTF-8"
    return sqlite3.DatabaseError(text if "malformed" in text else f"malformed: {text}")


def is_sqlite_message(exc: UnicodeDecodeError) -> bool:
    """Whether a decode error is Python's sqlite3 failing to decode SQLite's own message
    about a damaged file (which names the damaged object, bytes and all)."""
    raw = exc.object if isinstance(exc.object, bytes) else b""
    return raw.startswith((b"malformed database schema", b"database disk image"))
