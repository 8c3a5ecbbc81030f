"""SQLite write transactions as the store takes them."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from itertools import compress, repeat
from operator import is_not, or_
from typing import Any

_NONES = repeat(None)


@contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A transaction that takes the write lock at once (BEGIN IMMEDIATE), so that two
    processes never both read, then both write, then one fails; rolled back on error."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def nullable_columns(db: sqlite3.Connection, table: str) -> frozenset[str]:
    """The columns of `table` that may hold NULL and default to it, read from the table
    itself (a store brought up from an older schema included): those a None may be left
    out of an INSERT in."""
    return frozenset(
        str(name)
        for _, name, _, notnull, default, _ in db.execute(f"PRAGMA table_info({table})")
        if not notnull and (default is None or str(default).upper() == "NULL")
    )


def insert_skipping_nulls(
    db: sqlite3.Connection,
    table: str,
    columns: tuple[str, ...],
    nullable: frozenset[str],
    rows: Sequence[tuple[Any, ...]],
) -> None:
    """INSERT `rows` (values in the order of `columns`) into `table`, leaving a None in a
    `nullable` column (see `nullable_columns`) out of the statement rather than binding
    it. CPython 3.11's sqlite3 looks up an adapter for every bound None, and fails to find
    one: a rule turn has eight or so, and binding them was 1.6% of a rule episode's
    instructions. A None elsewhere is bound, so a NOT NULL column still refuses it.

    Rows are grouped by the columns they fill, one executemany per group, so they are not
    inserted in their order, with one exception: the last row is inserted last, and gets
    the largest rowid. `store check` and `store recover` rely on that: an episode's final
    turn has the largest rowid of its turns (see `disputelab.store.integrity._Turns`)."""
    bound = tuple(name not in nullable for name in columns)
    groups: dict[tuple[bool, ...], list[tuple[Any, ...]]] = {}
    filled: tuple[bool, ...] = ()
    for row in rows:
        if len(row) != len(columns):
            raise ValueError(f"a row of {len(row)} values for {len(columns)} columns of {table}")
        filled = tuple(map(or_, bound, map(is_not, row, _NONES)))
        group = groups.get(filled)
        if group is None:
            group = groups[filled] = []
        group.append(tuple(compress(row, filled)))
    if groups:
        groups[filled] = groups.pop(filled)  # the last row's group goes last
    for filled, values in groups.items():
        names = ", ".join(compress(columns, filled))
        if not names:
            db.executemany(f"INSERT INTO {table} DEFAULT VALUES", [()] * len(values))
            continue
        marks = ",".join("?" * len(values[0]))
        db.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", values)
