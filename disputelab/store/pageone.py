"""Rebuild the first page of a damaged database file: its header and its list of tables.

Page 1 of an SQLite file holds the 100-byte header (page size, format, encoding) and then
the schema table, whose records name every table, its root page and the SQL that made it.
One damaged byte there can hide every table of the store, though every other page reads.
This reads the records of that page itself, the way SQLite lays them out
(https://www.sqlite.org/fileformat.html, "B-tree Pages" and "Record Format"): through
the page's cell pointers, and, where a pointer or the page's own header is damaged, by
trying every offset for a record of the schema table's shape. A new first page is made
by SQLite, with those records, and put in front of a copy of the file's other pages.
A record that does not read is lost with the table it names; its pages stay unread.

Only a copy is ever made: the damaged file itself is not written.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from disputelab.store.health import HEADER_BYTES, PAGE_SIZES, page_size_guess

_LEAF = 0x0D  # a table b-tree leaf page: the schema table of a small database
_TYPES = ("table", "index", "view", "trigger")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class SchemaRecord:
    """One row of the schema table (sqlite_schema)."""

    type: str
    name: str
    tbl_name: str
    rootpage: int
    sql: str | None


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """SQLite's variable-length integer at `at`, and the offset after it."""
    value = 0
    for i in range(9):
        if at + i >= len(data):
            raise ValueError("a varint runs past the page")
        byte = data[at + i]
        if i == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at + i + 1
    raise AssertionError("unreachable")


_INT_SIZES = {1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8}


def _record(data: bytes, at: int) -> tuple[list[object], int]:
    """The values of the record whose header starts at `at`, and the offset after it."""
    header_size, cursor = _varint(data, at)
    end_of_header = at + header_size
    types = []
    while cursor < end_of_header:
        serial, cursor = _varint(data, cursor)
        types.append(serial)
    if cursor != end_of_header or len(types) != 5:
        raise ValueError("not a record of the schema table")
    values: list[object] = []
    for serial in types:
        if serial == 0:
            values.append(None)
        elif serial in (8, 9):
            values.append(serial - 8)
        elif serial in _INT_SIZES:
            width = _INT_SIZES[serial]
            values.append(int.from_bytes(data[cursor : cursor + width], "big", signed=True))
            cursor += width
        elif serial >= 13 and serial % 2:
            width = (serial - 13) // 2
            values.append(data[cursor : cursor + width].decode("utf-8"))
            cursor += width
        else:
            raise ValueError("a value of a type the schema table never holds")
        if cursor > len(data):
            raise ValueError("a value runs past the page")
    return values, cursor


def _cell(page: bytes, at: int, pages: int) -> SchemaRecord:
    """The schema record in the cell at `at`; ValueError unless it reads whole, within the
    page, with values of the types a schema record has."""
    length, cursor = _varint(page, at)
    _rowid, cursor = _varint(page, cursor)
    values, end = _record(page, cursor)
    if end - cursor != length:
        raise ValueError("the cell's length is not its record's")
    kind, name, table, root, sql = values
    if not (isinstance(kind, str) and isinstance(name, str) and isinstance(table, str)):
        raise ValueError("a name that is not text")
    if kind not in _TYPES or not _NAME.match(name) or not _NAME.match(table):
        raise ValueError("not a schema record")
    if not isinstance(root, int) or not 0 <= root <= pages:
        raise ValueError("a root page outside the file")
    if not (sql is None or (isinstance(sql, str) and sql.startswith("CREATE "))):
        raise ValueError("not a schema statement")
    return SchemaRecord(kind, name, table, root, sql)


def schema_records(page: bytes, pages: int) -> list[SchemaRecord]:
    """The records of the schema table found on page 1 (`page`, the file's first page of
    `pages`): those the page's cell pointers lead to, and, where the page's header or a
    pointer is damaged, any other found by trying every offset, for the names no pointer
    led to. (Not otherwise: the free space of a sound page may hold records of tables
    dropped long ago.) A first page that is an interior page (a schema too big for one
    page) is not read: its records lie on other pages."""
    found: dict[str, SchemaRecord] = {}
    damaged = page[HEADER_BYTES] != _LEAF
    if page[HEADER_BYTES] in (0x02, 0x05, 0x0A):
        return []  # an interior page: nothing of ours to read here
    if not damaged:
        count = int.from_bytes(page[HEADER_BYTES + 3 : HEADER_BYTES + 5], "big")
        room = (len(page) - HEADER_BYTES - 8) // 2
        damaged = count > room
        for i in range(min(count, room)):
            pointer = HEADER_BYTES + 8 + 2 * i
            try:
                record = _cell(page, int.from_bytes(page[pointer : pointer + 2], "big"), pages)
            except (ValueError, IndexError):
                damaged = True
                continue
            found.setdefault(record.name, record)
    for at in range(HEADER_BYTES + 8, len(page)) if damaged else ():
        try:
            record = _cell(page, at, pages)
        except (ValueError, IndexError):
            continue
        found.setdefault(record.name, record)
    return list(found.values())


def rebuild(path: Path, into: Path) -> Path | None:
    """A copy of the database at `path` (and of its write-ahead log, where it has one),
    in the folder `into`, whose first page is made anew from the schema records that
    still read on the old one; None when none do."""
    with path.open("rb") as f:
        header = f.read(HEADER_BYTES).ljust(HEADER_BYTES, b"\0")
        guess = page_size_guess(f)
    declared = int.from_bytes(header[16:18], "big")
    page_size = guess or (65536 if declared == 1 else declared)
    if page_size not in PAGE_SIZES:
        page_size = 4096
    pages = -(-path.stat().st_size // page_size)
    wal = path.with_name(f"{path.name}-wal")
    logged = wal.is_file() and wal.stat().st_size > 0
    # Pages a log holds may lie past the end of the file; the header counts them.
    counted = int.from_bytes(header[28:32], "big") if logged else 0
    with path.open("rb") as f:
        first = f.read(page_size).ljust(page_size, b"\0")
    records = [r for r in schema_records(first, max(pages, counted)) if r.rootpage != 1]
    if not records:
        return None
    page = _new_first_page(records, page_size, into / "page1.sqlite")
    if page is None:
        return None
    copy = into / path.name
    shutil.copyfile(path, copy)
    with copy.open("r+b") as f:
        f.write(_counted(page, pages, logged))
        f.truncate(pages * page_size)  # a last page cut short reads as zeros
    if logged:
        shutil.copyfile(wal, into / wal.name)
    return copy


def _new_first_page(records: list[SchemaRecord], page_size: int, scratch: Path) -> bytes | None:
    """The first page of a new database of `page_size` whose schema table holds `records`
    as they are (SQLite stores them without parsing them); None when they do not fit on
    one page."""
    db = sqlite3.connect(scratch, isolation_level=None)
    try:
        db.execute(f"PRAGMA page_size = {int(page_size)}")
        db.execute("PRAGMA journal_mode = DELETE")
        db.execute("PRAGMA writable_schema = ON")
        db.execute("BEGIN")
        for r in records:
            db.execute(
                "INSERT INTO sqlite_master (type, name, tbl_name, rootpage, sql)"
                " VALUES (?, ?, ?, ?, ?)",
                (r.type, r.name, r.tbl_name, r.rootpage, r.sql),
            )
        db.execute("COMMIT")
    finally:
        db.close()
    data = scratch.read_bytes()
    scratch.unlink()
    return data if len(data) == page_size else None


def _counted(page: bytes, pages: int, logged: bool) -> bytes:
    """The new first page with its header counting the file's `pages`, and that count
    marked valid (the change counter it is valid for, equal to the file's); with
    `logged`, in WAL mode, so that SQLite reads the log beside it."""
    header = bytearray(page)
    header[28:32] = pages.to_bytes(4, "big")
    header[92:96] = header[24:28]
    if logged:
        header[18:20] = b"\x02\x02"
    return bytes(header)
