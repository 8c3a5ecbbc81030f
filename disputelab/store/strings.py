"""A table of distinct strings: each stored once, episodes refer to it by number.

Every episode of a cell carries the same scenario, so the store keeps each value that
repeats once in `strings` (an integer id, a 64-bit hash to find it by, the text) and an
episode's row names it by id. Stores of schema 7 named a turn's utterance, the repeating
part of its move and its consensus here too; since schema 8 a chunk of turns holds its
own values (`disputelab.store.chunks`), and those older rows are only read.

A value is written into its own row the first time a process meets it, as rows were
before the table existed, and into the table only when it comes again (or when the table
has it already: a lookup by its hash). A value that never repeats (most of a model's
utterances) thus costs no row in the table, and the episode that first brings a value
holds it itself: what a store loses to a damaged or missing string is only ever episodes
that repeated it. A value is therefore stored at most twice per process (once in a row
of its own, once in the table), and the table holds it once.

Ids grow with time (a string gets the next rowid when it is first written, and rows are
never deleted or renumbered: `id` is the rowid itself, which VACUUM keeps), and the file
grows page by page as it is written, so a string sits near the turn that first named it,
ahead of the turns of later episodes. VACUUM lays the table out ahead of the episodes and
turns in a store created with it (it comes first in the schema; a store brought up from
schema 6 has it last). A file cut short therefore keeps the strings of the episodes it
keeps. `disputelab.store.integrity` copies an episode only when every string it names
reads.

`Strings` keeps, per open store, the ids of strings it knows are committed (a lookup
instead of a query on every turn) and the text of ids it has read. A string written in a
transaction that rolls back is forgotten with it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from typing import Any

# How many entries each cache holds before it starts over: distinct rule strings number in
# the thousands, but LLM utterances never repeat and must not pile up in memory.
_CACHE_LIMIT = 100_000
_QUERY_IDS = 500  # ids per `IN (...)` query when reading


def string_hash(text: str) -> int:
    """A stable signed 64-bit hash of `text` (SQLite's INTEGER), the same in every process."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class Strings:
    """Interning into and reading from one store's `strings` table."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}  # committed strings, by text
        self._seen: set[int] = set()  # Python hashes of values written into their own row
        self._texts: dict[int, str] = {}  # strings read, by id
        self._parsed: dict[int, Any] = {}  # JSON strings read, decoded, by id

    def ref(self, db: sqlite3.Connection, text: str, fresh: dict[str, int]) -> int | None:
        """The id of `text`, writing it (inside the caller's transaction) if it repeats a
        value this process wrote before; None, the first time, when the row is to hold the
        value itself. Ids written now go into `fresh`, for `remember` once the transaction
        commits."""
        known = self._ids.get(text)
        if known is not None:
            return known
        known = fresh.get(text)
        if known is not None:
            return known
        digest = string_hash(text)
        for sid, stored in db.execute("SELECT id, text FROM strings WHERE hash = ?", (digest,)):
            if stored == text:  # another process (or an earlier run) wrote it already
                fresh[text] = int(sid)
                return int(sid)
        key = hash(text)  # a collision only puts a value in the table the first time
        if key not in self._seen:
            if len(self._seen) >= _CACHE_LIMIT:
                self._seen.clear()
            self._seen.add(key)
            return None
        cursor = db.execute("INSERT INTO strings (hash, text) VALUES (?, ?)", (digest, text))
        sid = int(cursor.lastrowid or 0)
        fresh[text] = sid
        return sid

    def remember(self, fresh: dict[str, int]) -> None:
        """Keep the ids of a transaction that committed."""
        if len(self._ids) + len(fresh) > _CACHE_LIMIT:
            self._ids.clear()
        self._ids.update(fresh)

    def load(self, db: sqlite3.Connection, ids: Iterable[int | None]) -> None:
        """Read the strings of `ids` not read yet; a ValueError names one that is missing
        (the store lost it: the caller reports the store damaged)."""
        wanted = sorted({i for i in ids if i is not None and i not in self._texts})
        if not wanted:
            return
        if len(self._texts) + len(wanted) > _CACHE_LIMIT:
            self._texts.clear()
            self._parsed.clear()
        for start in range(0, len(wanted), _QUERY_IDS):
            part = wanted[start : start + _QUERY_IDS]
            marks = ",".join("?" * len(part))
            query = f"SELECT id, text FROM strings WHERE id IN ({marks})"
            for sid, text in db.execute(query, part):
                if not isinstance(text, str):
                    raise ValueError(f"string {sid} is not text")
                self._texts[int(sid)] = text
        for sid in wanted:
            if sid not in self._texts:
                raise ValueError(f"string {sid}, which a row names, is missing")

    def text(self, sid: int) -> str:
        """A string read by `load`."""
        return self._texts[sid]

    def json(self, sid: int) -> Any:
        """A JSON string read by `load`, decoded once; callers copy what they change."""
        value = self._parsed.get(sid)
        if value is None:
            value = self._parsed[sid] = json.loads(self._texts[sid])
        return value
