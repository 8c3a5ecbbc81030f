"""Inserting rows without binding their None values."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.store.sqlite import Store
from disputelab.store.tx import insert_skipping_nulls, nullable_columns

COLUMNS = ("k", "a", "b", "c")
NULLABLE = frozenset(("a", "b"))


def _table() -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    # k is not the rowid: the order rows went in shows in their rowids
    db.execute("CREATE TABLE t (k INTEGER, a, b TEXT, c REAL NOT NULL DEFAULT 0)")
    return db


values = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.text(max_size=5),
    st.floats(allow_nan=False),
)


@given(st.lists(st.tuples(values, st.one_of(st.none(), st.text(max_size=5))), max_size=30))
def test_every_row_reads_back_as_given_whichever_of_its_values_are_none(
    cells: list[tuple[object, str | None]],
) -> None:
    db = _table()
    rows = [(k, a, b, 1.5) for k, (a, b) in enumerate(cells)]
    insert_skipping_nulls(db, "t", COLUMNS, NULLABLE, rows)
    assert db.execute("SELECT k, a, b, c FROM t ORDER BY k").fetchall() == rows


@given(st.lists(st.tuples(values, st.one_of(st.none(), st.text(max_size=5))), min_size=1))
def test_the_last_row_is_inserted_last(cells: list[tuple[object, str | None]]) -> None:
    """Rows go in grouped, out of their order, but the last always gets the largest rowid:
    recovering a damaged store relies on an episode's final turn having it."""
    db = _table()
    rows = [(k, a, b, 1.5) for k, (a, b) in enumerate(cells)]
    insert_skipping_nulls(db, "t", COLUMNS, NULLABLE, rows)
    last = db.execute("SELECT k FROM t ORDER BY rowid DESC LIMIT 1").fetchone()
    assert last == (len(rows) - 1,)


def test_a_row_of_the_wrong_length_is_an_error_not_a_default() -> None:
    db = _table()
    for row in [(1, "a", "b"), (1, "a", "b", 1.5, "extra")]:
        with pytest.raises(ValueError, match="values for 4 columns"):
            insert_skipping_nulls(db, "t", COLUMNS, NULLABLE, [row])
    assert db.execute("SELECT COUNT(*) FROM t").fetchone() == (0,)


def test_a_none_in_a_column_that_is_not_nullable_is_bound_and_refused() -> None:
    db = _table()
    with pytest.raises(sqlite3.IntegrityError, match="NOT NULL"):
        insert_skipping_nulls(db, "t", COLUMNS, NULLABLE, [(1, None, None, None)])


def test_a_row_of_nothing_but_nones_takes_every_default() -> None:
    db = _table()
    insert_skipping_nulls(db, "t", ("a", "b"), NULLABLE, [(None, None), (None, None)])
    assert db.execute("SELECT a, b, c FROM t").fetchall() == [(None, None, 0.0)] * 2


def test_a_none_in_a_nullable_column_is_never_bound() -> None:
    db = _table()
    seen: list[str] = []
    db.set_trace_callback(seen.append)  # each statement with its bound values written in
    rows = [(k, None if k % 2 else "x", None, 0.5) for k in range(6)]
    insert_skipping_nulls(db, "t", COLUMNS, NULLABLE, rows)
    inserts = [s for s in seen if s.startswith("INSERT")]
    assert len(inserts) == 6 and not any("NULL" in s for s in inserts)
    assert {s.partition(" VALUES")[0] for s in inserts} == {
        "INSERT INTO t (k, a, c)",
        "INSERT INTO t (k, c)",
    }


def test_the_nullable_columns_are_those_that_allow_null_and_default_to_it() -> None:
    db = _table()
    db.execute("ALTER TABLE t ADD COLUMN d TEXT DEFAULT NULL")
    db.execute("ALTER TABLE t ADD COLUMN e TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE t ADD COLUMN f INTEGER DEFAULT 0")
    assert nullable_columns(db, "t") == {"k", "a", "b", "d"}


def test_a_stores_turns_leave_out_every_optional_column_and_nothing_else(tmp_path: Path) -> None:
    store = Store(tmp_path)
    assert nullable_columns(store.db, "turns") == {
        *("action", "intervention", "consensus", "usage", "delivered", "turn_taking"),
        *("text_ref", "action_ref", "intervention_ref", "consensus_ref"),
    }
