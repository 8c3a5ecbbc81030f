"""A store whose disk is full says so, and says how to carry on, rather than calling it
an unusable store (tests/chaos/test_disk_full.py fills a real disk)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from disputelab.store.health import store_failure


def test_a_full_disk_is_named_with_what_to_do_next() -> None:
    exc = sqlite3.OperationalError("database or disk is full")
    exc.sqlite_errorcode = sqlite3.SQLITE_FULL  # as SQLite sets it
    message = str(store_failure(Path("/runs"), exc))
    assert message.startswith("the disk holding store /runs is full")
    assert "--resume" in message and "\n" not in message


def test_other_failures_keep_their_own_reason() -> None:
    exc = sqlite3.OperationalError("database is locked")
    exc.sqlite_errorcode = sqlite3.SQLITE_BUSY
    assert "disk" not in str(store_failure(Path("/runs"), exc))
