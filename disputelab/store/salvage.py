"""Read what can still be read of a damaged SQLite table, row by row.

SQLite's own `.recover` lives in its command-line shell, not in Python's sqlite3, so this
walks a table in rowid order itself: in batches while the pages read, one row at a time
where they do not, and over a page SQLite cannot read at all by searching (in doubling
steps, then by halves) for the first rowid past it. A damaged page loses the rows on it,
not the rest of the table. Nothing here knows what a disputelab store holds.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

_BATCH = 256
_FIRST = -(2**63)  # rowids are signed 64-bit integers
_LAST = 2**63 - 1


@dataclass
class TableRead:
    """What could be read of one table: rows by rowid, and what was lost reading it."""

    name: str
    rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    unreadable: set[int] = field(default_factory=set)  # rowids whose values do not read
    # Stretches of pages that do not read, stepped over: rowids after the first up to the
    # second (None: to the end of the table). How many rows sat there is unknown.
    gaps: list[tuple[int, int | None]] = field(default_factory=list)
    error: str = ""  # why nothing at all could be read

    @property
    def damaged(self) -> bool:
        return bool(self.gaps or self.error)


def read_table(db: sqlite3.Connection, table: str) -> TableRead:
    """Every row of `table` that SQLite can still read, stepping over damaged pages."""
    read = TableRead(table)
    try:
        columns = [str(r[1]) for r in db.execute(f"PRAGMA table_info({_quote(table)})")]
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        read.error = str(exc)
        return read
    if not columns:
        read.error = f"no table {table}"
        return read
    _Walk(db, columns, read).run()
    return read


def read_index(
    db: sqlite3.Connection, table: str, columns: str
) -> tuple[list[tuple[Any, ...]], bool]:
    """The entries of the index of `table` that covers `columns` (e.g. 'run_id, rowid'), as
    far as its pages read, and whether they read to the end: a second witness, beside the
    table, to which rows existed."""
    name = _covering_index(db, table, [c.strip() for c in columns.split(",")])
    entries: list[tuple[Any, ...]] = []
    if name is None:
        return entries, False
    try:
        for entry in db.execute(f"SELECT {columns} FROM {_quote(table)} INDEXED BY {name}"):
            entries.append(tuple(entry))
    except (sqlite3.DatabaseError, UnicodeDecodeError):
        return entries, False  # the entries before the damage are still witnesses
    return entries, True


def _covering_index(db: sqlite3.Connection, table: str, columns: list[str]) -> str | None:
    """An index of `table` whose leading columns are `columns` (bar rowid), if any."""
    wanted = [c for c in columns if c != "rowid"]
    try:
        for index in db.execute(f"PRAGMA index_list({_quote(table)})").fetchall():
            name = str(index[1])
            keys = [str(r[2]) for r in db.execute(f"PRAGMA index_info({_quote(name)})")]
            if keys[: len(wanted)] == wanted:
                return _quote(name)
    except (sqlite3.DatabaseError, UnicodeDecodeError):
        pass
    return None


class _Walk:
    """One pass over a table in rowid order that survives damaged pages."""

    def __init__(self, db: sqlite3.Connection, columns: list[str], read: TableRead) -> None:
        self.db = db
        self.columns = columns
        self.read = read
        table = _quote(read.name)
        values = ", ".join(_quote(c) for c in columns)
        self.batch_sql = (
            f"SELECT rowid, {values} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT {_BATCH}"
        )
        self.next_sql = f"SELECT rowid FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT 1"
        self.row_sql = f"SELECT rowid, {values} FROM {table} WHERE rowid = ?"

    def run(self) -> None:
        after: int | None = _FIRST
        while after is not None:
            try:
                batch = self.db.execute(self.batch_sql, (after,)).fetchall()
            except (sqlite3.DatabaseError, UnicodeDecodeError):
                batch = None
            if batch is None or not _ascending(after, [int(r[0]) for r in batch]):
                after = self._one_by_one(after)
                continue
            if not batch:
                return
            for row in batch:
                self._keep(row)
            after = int(batch[-1][0])

    def _one_by_one(self, after: int) -> int | None:
        """Read up to a batch of rows singly, stepping over damage; the rowid to go on
        from, or None at the end of the table."""
        for _ in range(_BATCH):
            try:
                found = self._next(after)
            except _Unreadable:  # the page that holds the next row is damaged
                past = self._past_damage(after)
                self.read.gaps.append((after, past))
                if past is None:
                    return None
                after = past
                continue
            if found is None:
                return None
            after = found
            try:
                row = self.db.execute(self.row_sql, (after,)).fetchone()
            except (
                sqlite3.DatabaseError,
                UnicodeDecodeError,
            ):  # the row is there but its values are not
                self.read.unreadable.add(after)
                continue
            if row is not None:
                self._keep(row)
        return after

    def _past_damage(self, bad: int) -> int | None:
        """The least rowid past `bad` after which the table reads again (the rows up to
        it sat on the damaged page), or None when it never does."""
        step = 1
        good = bad + step
        while not self._seeks(good):
            if good >= _LAST:
                return None
            bad, step = good, step * 2
            good = min(bad + step, _LAST)
        while good - bad > 1:
            middle = (bad + good) // 2
            if self._seeks(middle):
                good = middle
            else:
                bad = middle
        return good

    def _seeks(self, after: int) -> bool:
        try:
            self._next(after)
        except _Unreadable:
            return False
        return True

    def _next(self, after: int) -> int | None:
        """The next rowid after `after`, None at the end; _Unreadable where the page is
        damaged (SQLite says so, or hands back a rowid that does not come after)."""
        try:
            found = self.db.execute(self.next_sql, (after,)).fetchone()
        except (sqlite3.DatabaseError, UnicodeDecodeError):
            raise _Unreadable from None
        if found is not None and int(found[0]) <= after:
            raise _Unreadable
        return None if found is None else int(found[0])

    def _keep(self, row: tuple[Any, ...]) -> None:
        self.read.rows[int(row[0])] = dict(zip(self.columns, row[1:], strict=True))


class _Unreadable(Exception):
    """The page a seek lands on does not read."""


def _ascending(after: int, rowids: list[int]) -> bool:
    """Whether rowids come after `after` in order, as from pages that read correctly."""
    return all(a < b for a, b in zip([after, *rowids], rowids, strict=False))


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
