"""What a write-ahead log found without its database can give back.

SQLite replays a `-wal` file over whatever database file sits beside it, without checking
that the two belong together. A store directory that has lost its database but kept the
log (a copy that caught one file and not the other) is therefore safe to open only when
the log holds every page of the database as of its last commit, as it does after a VACUUM
in WAL mode: replayed over a new, empty file, it rebuilds the store whole. A log that
holds only the pages changed since the last checkpoint would be replayed over the new
file's own pages and leave a store that is neither the old one nor a new one.

The log's layout (https://www.sqlite.org/fileformat.html, "The WAL File Format"): a
32-byte header (magic, version, page size, checkpoint sequence, two salts, a checksum),
then frames of a 24-byte header (page number; the database size in pages for the frame
that commits a transaction, else 0; the salts; a running checksum) and one page. A frame
counts only while its salts match the header's and the running checksum holds, which is
how SQLite itself tells the log's valid frames from stale or torn ones.
"""

from __future__ import annotations

import struct
from pathlib import Path

_HEADER = 32
_FRAME_HEADER = 24
_MAGIC_LITTLE = 0x377F0682
_MAGIC_BIG = 0x377F0683
_MASK = 0xFFFFFFFF


def _checksum(data: bytes, s0: int, s1: int, big_endian: bool) -> tuple[int, int]:
    """SQLite's WAL checksum of `data` (a multiple of 8 bytes), continuing from (s0, s1)."""
    words = struct.unpack((">" if big_endian else "<") + f"{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & _MASK
        s1 = (s1 + words[i + 1] + s0) & _MASK
    return s0, s1


def committed_pages(log: bytes) -> tuple[set[int], int]:
    """The pages the log's committed frames hold, and the database's size in pages at
    its last commit (0 when the log commits nothing or is not a WAL file)."""
    if len(log) < _HEADER:
        return set(), 0
    magic, _version, page_size, _seq, salt1, salt2, c0, c1 = struct.unpack(">8I", log[:_HEADER])
    if magic not in (_MAGIC_LITTLE, _MAGIC_BIG) or page_size < 512:
        return set(), 0
    big = magic == _MAGIC_BIG
    s0, s1 = _checksum(log[:24], 0, 0, big)
    if (s0, s1) != (c0, c1):
        return set(), 0
    pages: set[int] = set()
    pending: set[int] = set()
    size = 0
    at = _HEADER
    while at + _FRAME_HEADER + page_size <= len(log):
        page, commit, f1, f2, fc0, fc1 = struct.unpack(">6I", log[at : at + _FRAME_HEADER])
        if (f1, f2) != (salt1, salt2):
            break
        s0, s1 = _checksum(log[at : at + 8], s0, s1, big)
        body = log[at + _FRAME_HEADER : at + _FRAME_HEADER + page_size]
        s0, s1 = _checksum(body, s0, s1, big)
        if (s0, s1) != (fc0, fc1):
            break  # a torn or stale frame: SQLite stops reading here too
        pending.add(page)
        if commit:
            pages |= pending
            pending = set()
            size = commit
        at += _FRAME_HEADER + page_size
    return pages, size


def log_rebuilds_database(wal: Path) -> bool:
    """Whether the write-ahead log at `wal` holds every page of its database as of its
    last commit, so that replaying it over an empty file rebuilds the database whole."""
    try:
        pages, size = committed_pages(wal.read_bytes())
    except OSError:
        return False
    return size > 0 and pages.issuperset(range(1, size + 1))


def orphaned_log_problem(root: Path, db_name: str) -> str | None:
    """Why the store at `root` cannot be opened from its write-ahead log alone (None when
    its database is there, or no log is, or the log rebuilds the database whole)."""
    wal = root / f"{db_name}-wal"
    if (root / db_name).exists() or not wal.is_file() or log_rebuilds_database(wal):
        return None
    try:
        if committed_pages(wal.read_bytes())[1] == 0:
            return None  # it commits nothing: replaying it changes nothing, a store may start
    except OSError:
        pass
    return (
        f"{root} holds the write-ahead log of a store ({wal.name}) but not its database "
        f"({db_name}), and the log holds only part of the store: restore {db_name} beside "
        "it, or move the log away to start a new store there; nothing was opened or changed"
    )
