"""A store's write-ahead log found without its database: it is opened only when it holds
every page of the store, since SQLite would replay any log over a new, empty file."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from disputelab.store.wal import committed_pages, log_rebuilds_database, orphaned_log_problem

DB = "db.sqlite"


def _database_with_log(tmp_path: Path, vacuum: bool) -> tuple[Path, Path]:
    """A database in WAL mode with three committed tables, and a copy of its log taken
    while a connection holds it open (so the log is not checkpointed away): after a VACUUM
    the log holds every page; otherwise only what changed since the last checkpoint."""
    path = tmp_path / DB
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    for name in ("a", "b", "c"):
        db.execute(f"CREATE TABLE {name} (x TEXT)")
        db.executemany(f"INSERT INTO {name} VALUES (?)", [("row " * 50,)] * 200)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("PRAGMA wal_autocheckpoint = 0")
    if vacuum:
        db.execute("VACUUM")  # in WAL mode, every page of the database goes to the log
    else:
        db.execute("INSERT INTO c VALUES ('one more')")
    log = tmp_path / "copy-wal"
    shutil.copy(tmp_path / f"{DB}-wal", log)
    db.close()
    return path, log


def test_a_log_written_by_vacuum_rebuilds_the_whole_database(tmp_path: Path) -> None:
    path, log = _database_with_log(tmp_path, vacuum=True)
    pages, size = committed_pages(log.read_bytes())
    assert size == path.stat().st_size // 4096
    assert pages >= set(range(1, size + 1))
    assert log_rebuilds_database(log)


def test_a_log_of_changes_since_a_checkpoint_does_not(tmp_path: Path) -> None:
    _, log = _database_with_log(tmp_path, vacuum=False)
    pages, size = committed_pages(log.read_bytes())
    assert size > 1 and 0 < len(pages) < size
    assert not log_rebuilds_database(log)


def _log_with(tmp_path: Path, data: bytes) -> Path:
    log = tmp_path / "changed-wal"
    log.write_bytes(data)
    return log


def test_a_torn_last_frame_voids_the_transaction_it_belongs_to(tmp_path: Path) -> None:
    _, log = _database_with_log(tmp_path, vacuum=True)
    data = bytearray(log.read_bytes())
    data[-100] ^= 0xFF  # the last frame's page no longer matches its checksum
    # The VACUUM is the log's one transaction (the checkpoint before it emptied the log),
    # so without its committing frame nothing in the log is committed.
    assert committed_pages(bytes(data)) == (set(), 0)
    assert not log_rebuilds_database(_log_with(tmp_path, bytes(data)))


def test_what_is_not_a_log_rebuilds_nothing(tmp_path: Path) -> None:
    assert committed_pages(b"") == (set(), 0)
    assert committed_pages(b"not a log at all, just some bytes here") == (set(), 0)
    assert not log_rebuilds_database(_log_with(tmp_path, bytes(range(256)) * 64))
    assert not log_rebuilds_database(tmp_path / "missing-wal")


def test_only_a_partial_log_without_its_database_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "made").mkdir()
    _, partial = _database_with_log(tmp_path / "made", vacuum=False)
    root = tmp_path / "store"
    root.mkdir()
    assert orphaned_log_problem(root, DB) is None  # nothing there: a new store may start
    shutil.copy(partial, root / f"{DB}-wal")
    problem = orphaned_log_problem(root, DB)
    assert problem is not None and "holds only part of the store" in problem
    (root / DB).write_bytes(b"")  # with its database beside it, the log is SQLite's to read
    assert orphaned_log_problem(root, DB) is None


def test_a_log_that_commits_nothing_is_no_problem(tmp_path: Path) -> None:
    # Empty, or cut before its first commit: replaying it changes nothing, so a new store
    # may start beside it as before.
    root = tmp_path / "store"
    root.mkdir()
    (root / f"{DB}-wal").write_bytes(b"")
    assert orphaned_log_problem(root, DB) is None
