"""A store this user may not write (a published one, or one on a read-only disk) is still
read: `runs`, `report` and `store check` work, and a command that would write says why it
cannot. SQLite reads a WAL database through a shared-memory file it must be able to make
beside it; where it cannot, the store is read as an immutable file."""

from __future__ import annotations

import gzip
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from disputelab.store.sqlite import DB_NAME

NOBODY = 65534


def _as_other_user() -> list[str]:
    """The prefix that runs a command as a user without write access to the store."""
    if os.geteuid() != 0:
        return []  # the permissions below already apply to this user
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: no user to read the store as")
    prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    probe = subprocess.run(
        [*prefix, sys.executable, "-c", "import disputelab"], capture_output=True, cwd="/"
    )
    if probe.returncode != 0:
        pytest.skip(f"user {NOBODY} cannot run this checkout's Python (a private folder?)")
    return prefix


@pytest.fixture
def read_only_store() -> Iterator[Path]:
    """A store with one run, its WAL checkpointed away, files and folder read-only. Made
    outside pytest's tmp_path, whose folders only their owner may enter."""
    base = Path(tempfile.mkdtemp(prefix="ro-store-"))
    base.chmod(0o755)
    store = base / "store"
    made = subprocess.run(
        [sys.executable, "-m", "disputelab", "--store", str(store), "run", "tenancy"],
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr
    with sqlite3.connect(store / DB_NAME) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for extra in store.glob(f"{DB_NAME}-*"):
        extra.unlink()
    for path in store.iterdir():
        path.chmod(0o444)
    store.chmod(0o555)
    try:
        yield store
    finally:
        store.chmod(0o755)
        shutil.rmtree(base)


def _disputelab(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [*_as_other_user(), sys.executable, "-m", "disputelab", "--store", str(store)]
    env = {**os.environ, "HOME": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([*command, *args], capture_output=True, text=True, cwd="/", env=env)


def test_a_read_only_store_is_listed_reported_and_checked(read_only_store: Path) -> None:
    runs = _disputelab(read_only_store, "runs", "--format", "csv")
    assert runs.returncode == 0, runs.stderr
    assert "tenancy/none/seed0" in runs.stdout
    report = _disputelab(read_only_store, "report", "last")
    assert report.returncode == 0, report.stderr
    assert "party_turns" in report.stdout
    check = _disputelab(read_only_store, "store", "check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert "is healthy: 1 run, 1 episode" in check.stdout


def test_writing_into_a_read_only_store_says_why_it_cannot(read_only_store: Path) -> None:
    result = _disputelab(read_only_store, "run", "tenancy")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot be written by this user (read-only)" in lines[0]
    assert sorted(p.name for p in read_only_store.iterdir()) == [DB_NAME]


def test_a_read_only_store_with_a_write_ahead_log_is_refused_not_read_stale(
    read_only_store: Path,
) -> None:
    # Read as an immutable file, the store would leave out what the log holds: refused,
    # and the user told how to read it all.
    read_only_store.chmod(0o755)
    (read_only_store / DB_NAME).chmod(0o644)
    with sqlite3.connect(read_only_store / DB_NAME, isolation_level=None) as db:
        db.execute("PRAGMA wal_autocheckpoint = 0")
        db.execute("INSERT INTO meta VALUES ('note', 'written after the last checkpoint')")
        shutil.copy(read_only_store / f"{DB_NAME}-wal", read_only_store / "kept-wal")
    db.close()
    for extra in read_only_store.glob(f"{DB_NAME}-*"):
        extra.unlink()
    (read_only_store / "kept-wal").rename(read_only_store / f"{DB_NAME}-wal")
    for path in read_only_store.iterdir():
        path.chmod(0o444)
    read_only_store.chmod(0o555)
    for args in (("runs",), ("store", "check")):
        result = _disputelab(read_only_store, *args)
        assert result.returncode == 2, result.stdout + result.stderr
        assert "still in its write-ahead log" in result.stderr


def test_a_read_only_store_of_schema_7_reads_without_being_migrated() -> None:
    """A published store from before turn chunks (schema 8) cannot be brought up to date
    where it lies; it is read as it is."""
    base = Path(tempfile.mkdtemp(prefix="ro-store7-"))
    base.chmod(0o755)
    store = base / "store"
    store.mkdir()
    data = Path(__file__).parent / "data" / "schema7.sqlite.gz"
    (store / DB_NAME).write_bytes(gzip.decompress(data.read_bytes()))
    (store / DB_NAME).chmod(0o444)
    store.chmod(0o555)
    try:
        report = _disputelab(store, "report", "every-field", "--format", "json")
        assert report.returncode == 0, report.stderr
        assert "I can pay 1,200." in report.stdout
        check = _disputelab(store, "store", "check")
        assert check.returncode == 0, check.stdout + check.stderr
        with sqlite3.connect(f"file:{store / DB_NAME}?mode=ro", uri=True) as db:
            assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
                "7",
            )
    finally:
        store.chmod(0o755)
        shutil.rmtree(base)
