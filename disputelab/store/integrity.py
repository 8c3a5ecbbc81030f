"""Check a store for damage, and copy what can still be read of it into a new store.

`check` runs SQLite's integrity_check and then reads every row the way `recover` does, so
it also finds values that no longer decode (text that is not UTF-8, JSON cut short),
which SQLite's own checks never look at. `recover` copies run by run, and an episode
only whole: its record and every one of its turns, with whatever of its scores and usage
reads. An episode with a turn missing would pass a shortened transcript off as the real
one, so it is reported lost instead. The tables' indexes witness which rows existed where
the tables' own pages are gone. An episode also needs every string it names (its
scenario, its turns' utterances and moves; see `disputelab.store.strings`) to read: the
strings go with it, and without one the episode is lost like one with a turn missing.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import json
import sqlite3
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from disputelab.episode import Status
from disputelab.store.chunks import decode_turns
from disputelab.store.health import (
    StoreError,
    damage_reason,
    file_problem,
    header_damage,
    identify,
    immutable_uri,
    is_damage,
    is_read_only_failure,
    not_a_file,
    page_size_mismatch,
    undecodable,
)
from disputelab.store.health import quick_check as _sqlite_check
from disputelab.store.leases import TABLE as LEASES_TABLE
from disputelab.store.pageone import rebuild
from disputelab.store.salvage import TableRead, read_index, read_table
from disputelab.store.schema import ADDED, SCHEMA, has_table, lost_table_problem
from disputelab.store.sqlite import DB_NAME, Store
from disputelab.store.strings import string_hash
from disputelab.store.wal import log_rebuilds_database, orphaned_log_problem

Row = dict[str, Any]

# The tables a store copies, parents first, and each one's JSON columns: a value that
# does not parse is as lost as a page that does not read.
_JSON_COLUMNS = {
    "strings": (),
    "runs": ("config",),
    "episodes": ("scenario", "agents", "agreement", "amounts", "initial_consensus"),
    "turns": ("action", "intervention", "consensus", "usage", "delivered", "turn_taking"),
    "turn_chunks": (),  # its record is checked whole: see `_chunk_problem`
    "scores": ("detail",),
    "usage": (),
}
# JSON columns written as objects always: any other value there is damage.
_OBJECTS = {
    "runs": ("config",),
    "episodes": ("scenario", "agents", "agreement"),
}
# The numbers recovery reckons with, which must be numbers (None: may be missing).
_NUMBERS = {
    "strings": {"id": False},
    "runs": {"created_at": False},
    "episodes": {"started_at": False, "finished_at": True},
    "turns": {"idx": False},
    "turn_chunks": {"first_idx": False, "count": False},
}
# The columns that name a string, with the column that holds the value in rows written
# before the table of strings (empty, or NULL, in rows that name one), and whether the
# string is JSON.
_REFS = {
    "episodes": {"scenario_ref": ("scenario", True)},
    "turns": {
        "text_ref": ("text", False),
        "action_ref": ("action", True),
        "intervention_ref": ("intervention", True),
        "consensus_ref": ("consensus", True),
    },
}
LOST_RUN_LABEL = "recovered; its run record was lost"


@dataclass(frozen=True)
class RunSalvage:
    """One run: how many of its episodes read whole, and why each other one does not."""

    run_id: str
    kind: str
    episodes: int
    lost: tuple[str, ...]  # one line per lost episode: its id (when known) and why
    record_lost: bool  # the run's own row is unreadable; a bare `run` stands in for it

    @property
    def whole(self) -> bool:
        return not self.lost and not self.record_lost


@dataclass
class Salvage:
    """What of a store reads: run by run, the rows lost table by table, the rows to copy."""

    runs: list[RunSalvage]
    lost_rows: dict[str, int]  # rows known to have existed that do not read, per table
    damaged: list[str]  # tables with pages that do not read (their row counts are unknown)
    rows: dict[str, list[Row]] = field(repr=False)

    @property
    def turns(self) -> int:
        """The turns to copy: rows of schema 7 and before, and those in chunks since."""
        return len(self.rows["turns"]) + sum(int(c["count"]) for c in self.rows["turn_chunks"])

    @property
    def whole(self) -> bool:
        return (
            not self.damaged
            and not any(self.lost_rows.values())
            and all(r.whole for r in self.runs)
        )


@dataclass(frozen=True)
class Diagnosis:
    """What `check` found: SQLite's complaints, or why the file is no store, and what reads."""

    problems: tuple[str, ...]
    salvage: Salvage | None  # None when the file is no store or its tables do not list

    @property
    def healthy(self) -> bool:
        return not self.problems and self.salvage is not None and self.salvage.whole


def check(root: Path) -> Diagnosis:
    """Diagnose the store at `root`; a StoreError when it holds no database file at all,
    or something other than a file where its database file belongs."""
    path = _database(root)
    if problem := file_problem(path):
        return Diagnosis((problem,), None)
    with _reading(path) as (db, notes):
        problems = (*notes, *_sqlite_check(db, thorough=True))
        try:
            _identify(db, path)
        except StoreError as exc:
            return Diagnosis((*problems, str(exc)), None)
        if lost := _lost_table(db):
            problems = tuple(dict.fromkeys((*problems, f"the store is damaged: {lost}")))
        return Diagnosis(problems, salvage(db))


def recover(root: Path, out: Path) -> Salvage:
    """Copy every run of the store at `root` that reads, with its whole episodes, into a
    new store at `out`; the Salvage returned says what was lost."""
    if (out / DB_NAME).exists():
        raise StoreError(f"{out} already holds a store; recover into a new directory")
    path = _database(root)
    if problem := file_problem(path):
        raise StoreError(f"nothing to recover: {problem}")
    with _reading(path) as (db, _):
        _identify(db, path)
        found = salvage(db)
    new = Store(out)
    try:
        for table, rows in found.rows.items():
            refused = len(rows) - new.insert_rows(table, rows)  # e.g. a key read twice
            found.lost_rows[table] += refused
    finally:
        new.close()
    return found


@contextmanager
def _reading(path: Path) -> Iterator[tuple[sqlite3.Connection, tuple[str, ...]]]:
    """A snapshot of the database at `path`, set to read damage, with a line for each
    problem of its first page. Where that page is damaged (its header, or its list of
    tables), the snapshot is of a copy whose first page is rebuilt from what of it reads
    (`pageone`), unless the copy reads no better."""
    db = _snapshot(path)
    try:
        damage = header_damage(path) or _schema_damage(db, path)
        if damage is None and page_size_mismatch(path) and _sqlite_check(db):
            damage = "its file header is damaged (the page size field)"
        if damage is None:
            yield db, ()
            return
        note = f"the store is damaged: {damage}"
        with tempfile.TemporaryDirectory(prefix="disputelab-rebuilt-") as folder:
            copy = rebuild(path, Path(folder))
            rebuilt = _snapshot(copy) if copy is not None else None
            try:
                if rebuilt is None or not _reads_better(rebuilt, copy, db, path):
                    yield db, (note,)
                    return
                yield rebuilt, (f"{note}; its first page was rebuilt from what of it reads",)
            finally:
                if rebuilt is not None:
                    rebuilt.close()
    finally:
        db.close()


def _reads_better(
    rebuilt: sqlite3.Connection, copy: Path | None, db: sqlite3.Connection, path: Path
) -> bool:
    """Whether a rebuilt copy's list of tables reads where the original's does not, or
    the copy's names what a store has and the original's does not."""
    if copy is not None and _schema_damage(rebuilt, copy) is None:
        return True
    try:
        _identify(rebuilt, path)
    except StoreError:
        return False
    try:
        _identify(db, path)
    except StoreError:
        return True
    return header_damage(path) is not None


def _schema_damage(db: sqlite3.Connection, path: Path) -> str | None:
    """What is wrong with a store's list of tables: it does not read, or it lacks a table
    the store's schema version has, or a column every version has."""
    try:
        _identify(db, path)
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        version = int(row[0])
        for table, columns in _base_columns().items():
            found = {str(r[1]) for r in db.execute(f"PRAGMA table_info({table})")}
            if not found and (version < _SINCE.get(table, 0) or table in _OPTIONAL):
                continue  # a table this store never had
            if not found and table == "turn_chunks":
                return lost_table_problem(db)  # as every command says it
            if missing := sorted(columns - found):
                what = f"no column {missing[0]}" if found else "no such table"
                return f"its list of tables is damaged ({table}: {what})"
    except (sqlite3.DatabaseError, StoreError, UnicodeDecodeError, ValueError, TypeError) as e:
        reason = damage_reason(e) if not isinstance(e, StoreError) else "it does not read"
        return f"its list of tables is damaged ({reason})"
    return _parse_problem(path)


def _parse_problem(path: Path) -> str | None:
    """Why SQLite cannot parse the list of tables, as every command but these reads it
    (without writable_schema, which reads what parses and skips the rest)."""
    try:
        probe = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error:
        return None
    try:
        probe.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        error = undecodable(exc) if isinstance(exc, UnicodeDecodeError) else exc
        if is_damage(error):
            return f"its list of tables does not parse ({damage_reason(error)})"
    finally:
        probe.close()
    return None


_SINCE = {"strings": 7, "turn_chunks": 8}  # the schema version that added a table
_OPTIONAL = {"leases"}  # made the first time an experiment claims an episode


@functools.cache
def _base_columns() -> dict[str, frozenset[str]]:
    """The columns of each table that every schema version has: this version's, less
    those a later version added (`ADDED`)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(SCHEMA + ";" + LEASES_TABLE)
        tables = [
            str(r[0]) for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        ]
        return {
            table: frozenset(
                str(r[1])
                for r in db.execute(f"PRAGMA table_info({table})")
                if str(r[1]) not in ADDED.get(table, {})
            )
            for table in tables
        }
    finally:
        db.close()


def _lost_table(db: sqlite3.Connection) -> str | None:
    """lost_table_problem, or None when the schema version itself does not read: SQLite's
    own check reports that damage, and the episodes whose turns do not read are lost on
    their own account."""
    try:
        return lost_table_problem(db)
    except (sqlite3.DatabaseError, UnicodeDecodeError):
        return None


def salvage(db: sqlite3.Connection) -> Salvage:
    """Read every table row by row and decide, run by run, what can be copied whole."""
    # A store of schema 7 or before, read as it is, has no chunks of turns to read; one of
    # schema 8 without them has lost them.
    reads = {t: _read(db, t) for t in _JSON_COLUMNS}
    good = {t: _decoded(t, read) for t, read in reads.items()}
    turns = _EitherTurns(
        _Turns(db, reads["turn_chunks"], good["turn_chunks"], good["episodes"]),
        _Turns(db, reads["turns"], good["turns"], good["episodes"]),
    )
    strings = _Strings(good["strings"], good["turns"])
    whole, lost = _episodes(db, reads["episodes"], good["episodes"], turns, strings)
    records = {str(r["run_id"]): r for r in good["runs"].values()}
    runs = _runs(records, reads["runs"], whole, lost)
    kept = {str(e["episode_id"]) for e in whole}
    rows: dict[str, list[Row]] = {
        "strings": strings.named_by(whole),
        "runs": [
            records.get(r.run_id) or _bare_run(r.run_id, whole)
            for r in runs
            if r.episodes or not r.record_lost
        ],
        "episodes": whole,
    }
    for table in ("turns", "turn_chunks", "scores", "usage"):
        rows[table] = [r for r in good[table].values() if str(r["episode_id"]) in kept]
    lost_rows = {t: _lost_rows(db, t, reads[t], good[t]) for t in reads}
    damaged = [t for t, read in reads.items() if read.damaged]
    return Salvage(runs, lost_rows, damaged, rows)


def _read(db: sqlite3.Connection, table: str) -> TableRead:
    """What of a table reads; nothing, with the reason, where the list of tables gives it
    columns other than a store's (a name in it damaged)."""
    if table == "turn_chunks" and not has_table(db, table):
        return TableRead(table, error=_lost_table(db) or "")
    read = read_table(db, table)
    columns = set(next(iter(read.rows.values()), {}))
    if read.rows and (missing := sorted(_base_columns()[table] - columns)):
        return TableRead(table, error=f"the list of tables gives it no column {missing[0]}")
    return read


def _decoded(table: str, read: TableRead) -> dict[int, Row]:
    """The rows whose JSON columns parse and whose numbers are numbers (and, for
    episodes, whose status is known)."""
    good = {}
    for rowid, row in read.rows.items():
        try:
            for column in _JSON_COLUMNS[table]:
                if row.get(column) is not None and not _named(table, column, row):
                    value = json.loads(row[column])
                    if column in _OBJECTS.get(table, ()) and not isinstance(value, dict):
                        raise ValueError(f"{column} is not a JSON object")
            for ref in _REFS.get(table, {}):
                if not isinstance(row.get(ref), int | None):
                    raise ValueError(f"{ref} is not a number")
            for column, optional in _NUMBERS.get(table, {}).items():
                value = row.get(column)
                if not ((optional and value is None) or isinstance(value, int | float)):
                    raise ValueError(f"{column} is not a number")
            if table == "episodes":
                Status(row["status"])
            if table == "strings" and not isinstance(row.get("text"), str):
                raise ValueError("a string that is not text")
            if table == "turn_chunks":
                _check_chunk(row)
        except (ValueError, TypeError, KeyError, IndexError):
            continue
        good[rowid] = row
    return good


def _check_chunk(row: Row) -> None:
    """A chunk of turns reads only whole: its record decodes, and holds `count` turns
    numbered on from `first_idx`."""
    turns = decode_turns(row["data"])
    first = int(row["first_idx"])
    if [t.index for t in turns] != list(range(first, first + int(row["count"]))):
        raise ValueError("a chunk whose turns are not the ones its row names")


def _named(table: str, column: str, row: Row) -> bool:
    """Whether the row names a string for `column` instead of holding its value (an empty
    text then, which does not parse as JSON)."""
    return any(
        held == column and row.get(ref) is not None and row[column] == ""
        for ref, (held, _) in _REFS.get(table, {}).items()
    )


class _Strings:
    """The strings that read, and which of them each episode (with its turns) names."""

    def __init__(self, strings: dict[int, Row], turns: dict[int, Row]) -> None:
        self.text = {int(r["id"]): str(r["text"]) for r in strings.values()}
        self.turn_refs: dict[str, set[tuple[int, bool]]] = defaultdict(set)
        for turn in turns.values():
            self.turn_refs[str(turn["episode_id"])] |= _refs("turns", turn)
        self._json: dict[int, bool] = {}

    def missing(self, episode: Row) -> int:
        """How many of the strings the episode names do not read (or, named as JSON, do
        not parse)."""
        refs = _refs("episodes", episode) | self.turn_refs[str(episode["episode_id"])]
        return len({sid for sid, is_json in refs if not self._reads(sid, is_json)})

    def named_by(self, episodes: list[Row]) -> list[Row]:
        """The strings the episodes name, to copy with them."""
        ids: set[int] = set()
        for episode in episodes:
            refs = _refs("episodes", episode) | self.turn_refs[str(episode["episode_id"])]
            ids |= {sid for sid, _ in refs}
        return [
            {"id": sid, "hash": string_hash(self.text[sid]), "text": self.text[sid]}
            for sid in sorted(ids)
        ]

    def _reads(self, sid: int, is_json: bool) -> bool:
        if sid not in self.text:
            return False
        if not is_json:
            return True
        if sid not in self._json:
            try:
                json.loads(self.text[sid])
                self._json[sid] = True
            except ValueError:
                self._json[sid] = False
        return self._json[sid]


def _refs(table: str, row: Row) -> set[tuple[int, bool]]:
    """The strings a row names, each with whether it is JSON."""
    return {
        (int(row[ref]), is_json)
        for ref, (_, is_json) in _REFS[table].items()
        if row.get(ref) is not None
    }


def _lost_rows(db: sqlite3.Connection, table: str, read: TableRead, good: dict[int, Row]) -> int:
    """Rows known to exist (from the table or an index of it) that do not read."""
    indexed = {int(entry[0]) for entry in read_index(db, table, "rowid")[0]}
    return len((indexed | set(read.rows) | read.unreadable) - set(good))


def _episodes(
    db: sqlite3.Connection,
    read: TableRead,
    episodes: dict[int, Row],
    turns: _EitherTurns,
    strings: _Strings,
) -> tuple[list[Row], dict[str, list[str]]]:
    """The episodes that read whole, and, run by run, why each other one is lost."""
    whole: list[Row] = []
    lost: dict[str, list[str]] = defaultdict(list)
    for episode in episodes.values():
        why = turns.lost(episode)
        if why is None and (missing := strings.missing(episode)):
            why = f"{missing} of the strings it names {'does' if missing == 1 else 'do'} not read"
        if why:
            lost[str(episode["run_id"])].append(f"{episode['episode_id']}: {why}")
        else:
            whole.append(episode)
    # Records that do not read (or decode): the indexes still name most of them.
    run_of = {int(r): str(run) for run, r in read_index(db, "episodes", "run_id, rowid")[0]}
    name_of = {int(r): str(e) for e, r in read_index(db, "episodes", "episode_id, rowid")[0]}
    for rowid, row in read.rows.items():
        run_of[rowid], name_of[rowid] = str(row["run_id"]), str(row["episode_id"])
    for rowid, run_id in run_of.items():
        if rowid not in episodes:
            lost[run_id].append(f"{name_of.get(rowid, 'an episode')}: its record is unreadable")
    return whole, lost


class _Turns:
    """Whether every turn of an episode reads. A gap in its turn numbers gives a lost turn
    away; a lost last turn leaves none, so something must witness it: the turns index when
    it reads to the end, the table itself when none of its pages is damaged, and otherwise
    time. Turns get ever larger rowids, so an episode whose turns all came before another
    episode started has them all before that one's first turn; if no damage lies between
    its last turn read and that turn, nothing of it was lost."""

    def __init__(
        self,
        db: sqlite3.Connection,
        read: TableRead,
        good: dict[int, Row],
        episodes: dict[int, Row],
    ) -> None:
        self.rowids: dict[str, dict[int, int]] = defaultdict(dict)  # episode -> idx -> rowid
        chunks = read.name == "turn_chunks"  # a row of it holds turns first_idx, ... on
        first = "first_idx" if chunks else "idx"
        self.overlapping: set[str] = set()  # episodes with a turn in two chunks
        self.table_lost = read.error if chunks else ""
        for rowid, turn in good.items():
            count = int(turn["count"]) if chunks else 1
            held = self.rowids[str(turn["episode_id"])]
            for idx in range(int(turn[first]), int(turn[first]) + count):
                if idx in held:
                    self.overlapping.add(str(turn["episode_id"]))
                held[idx] = rowid
        self.known: dict[str, set[int]] = defaultdict(set)  # also the turns that do not read
        entries, whole_index = (
            read_index(db, read.name, f"episode_id, {first}") if not read.error else ([], True)
        )
        entries += [(t["episode_id"], t[first]) for t in read.rows.values()]
        # A lost row of turns is one turn; a lost chunk held an unknown number of them.
        self.exact = not chunks
        for episode_id, idx in entries:
            if isinstance(idx, int):
                self.known[str(episode_id)].add(idx)
        bad = read.unreadable | (set(read.rows) - set(good))
        self.gaps = [*read.gaps, *((rowid - 1, rowid) for rowid in bad)]
        self.witnessed = whole_index or not self.gaps
        # Each episode's start and first turn, latest start first: see `_first_turn_after`.
        firsts = [
            (float(e["started_at"]), min(self.rowids[str(e["episode_id"])].values()))
            for e in episodes.values()
            if self.rowids[str(e["episode_id"])]
        ]
        firsts.sort(reverse=True)
        self.starts = [-start for start, _ in firsts]
        self.first_turns = list(itertools.accumulate((f for _, f in firsts), min))

    def holds(self, episode_id: str) -> bool:
        """Whether this table holds (or held) any of the episode's turns."""
        return bool(self.rowids[episode_id] or self.known[episode_id])

    def lost(self, episode: Row) -> str | None:
        """Why not every turn of the episode reads, or None when they all do."""
        eid = str(episode["episode_id"])
        if self.table_lost:
            return "its turns are gone with the table that held them (turn_chunks)"
        if eid in self.overlapping:
            return "two chunks of its turns hold the same turn"
        have = self.rowids[eid]
        count = max(self.known[eid] | set(have), default=-1) + 1
        missing = count - len(set(have) & set(range(count)))
        if missing:
            if not self.exact:  # how many turns the lost chunk held is lost with it
                gone = min(set(range(count)) - set(have))
                return f"its turns from number {gone} on are unreadable (a lost chunk of turns)"
            return f"{missing} of {'' if self.witnessed else 'at least '}{count} turns unreadable"
        if self.witnessed or self._before_damage(episode, max(have.values(), default=None)):
            return None
        return "its last turns may lie on a page that does not read"

    def _before_damage(self, episode: Row, last: int | None) -> bool:
        after = [a for a, b in self.gaps if last is None or b is None or b > last]
        if not after:
            return True
        if episode["finished_at"] is None:
            return False
        later = self._first_turn_after(float(episode["finished_at"]))
        return later is not None and later <= min(after)

    def _first_turn_after(self, time: float) -> int | None:
        """The least rowid of a turn of an episode that started after `time`."""
        n = bisect.bisect_left(self.starts, -time)  # starts that are later than `time`
        return self.first_turns[n - 1] if n else None


@dataclass(frozen=True)
class _EitherTurns:
    """An episode's turns are chunks (schema 8) or rows (before): it is judged by the
    table that holds them, and one that holds none by both."""

    chunks: _Turns
    rows: _Turns

    def lost(self, episode: Row) -> str | None:
        eid = str(episode["episode_id"])
        for table in (self.chunks, self.rows):
            if table.holds(eid):
                return table.lost(episode)
        return self.chunks.lost(episode) or self.rows.lost(episode)


def _runs(
    records: dict[str, Row], read: TableRead, whole: list[Row], lost: dict[str, list[str]]
) -> list[RunSalvage]:
    """Every run known by its record or by its episodes, oldest first."""
    copied: dict[str, int] = defaultdict(int)
    for episode in whole:
        copied[str(episode["run_id"])] += 1
    known = set(records) | {str(r.get("run_id")) for r in read.rows.values()}
    runs = [
        RunSalvage(
            run_id,
            str(records[run_id]["kind"]) if run_id in records else "run",
            copied[run_id],
            tuple(sorted(lost.get(run_id, ()))),
            run_id not in records,
        )
        for run_id in known | set(copied) | set(lost)
    ]
    created = {run_id: float(r["created_at"]) for run_id, r in records.items()}
    return sorted(runs, key=lambda r: (created.get(r.run_id, 0.0), r.run_id))


def _bare_run(run_id: str, whole: list[Row]) -> Row:
    """A stand-in record for a run whose own was lost, dated by its first episode."""
    started = [float(e["started_at"]) for e in whole if e["run_id"] == run_id]
    return {
        "run_id": run_id,
        "kind": "run",
        "label": LOST_RUN_LABEL,
        "created_at": min(started, default=0.0),
        "config": "{}",
    }


def _snapshot(path: Path) -> sqlite3.Connection:
    """A connection whose reads all see the store as of its first one: one read
    transaction for the whole check. Read one table at a time, a store that a running
    experiment writes to meanwhile would show turns of episodes it never listed, and look
    damaged when it is not."""
    db = sqlite3.connect(path, isolation_level=None)
    # Set before the first read: writable_schema also lets a list of tables that does not
    # parse be read as far as it does.
    _reading_damage(db)
    try:
        db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.OperationalError as exc:
        if not is_read_only_failure(exc, path.parent):
            db.close()
            raise
        # A store this user may not write: read the file as it is (see Store).
        db.close()
        db = sqlite3.connect(immutable_uri(path), uri=True, isolation_level=None)
        _reading_damage(db)
    except (sqlite3.DatabaseError, UnicodeDecodeError):
        pass  # damage: the checks that follow say what it is
    db.execute("BEGIN")  # deferred: the snapshot is taken at the first read
    return db


def _reading_damage(db: sqlite3.Connection) -> None:
    """Set a connection to read as much of a damaged file as can be read, and write none:
    writable_schema lets SQLite open a file shorter than its header says (the rest of it
    lost), cell_size_check makes it refuse a garbled cell rather than misread it."""
    db.execute("PRAGMA query_only = ON")
    db.execute("PRAGMA writable_schema = ON")
    db.execute("PRAGMA cell_size_check = ON")


def _database(root: Path) -> Path:
    path = root / DB_NAME
    if not_a_file(path) and (problem := file_problem(path)):
        raise StoreError(problem)  # never opened: a FIFO would wait for ever
    if not path.is_file():
        wal = root / f"{DB_NAME}-wal"
        problem = orphaned_log_problem(root, DB_NAME)
        if problem is None and wal.is_file() and log_rebuilds_database(wal):
            problem = (
                f"{root} holds only the write-ahead log of a store ({wal.name}), which holds "
                f"all of it: a command that opens the store, such as `disputelab runs`, "
                f"rebuilds {DB_NAME} from it; check again after"
            )
        raise StoreError(problem or f"no store at {root}: it holds no {DB_NAME}")
    return path


def _identify(db: sqlite3.Connection, path: Path) -> None:
    """A StoreError unless the database lists its tables and they are a store's (or its
    runs and episodes, for a store whose other records of its tables were lost)."""
    try:
        listed = db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        if {"runs", "episodes"} <= {str(r[0]) for r in listed}:
            return
        is_store = identify(db, path)
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:
        reason = damage_reason(exc)
        raise StoreError(f"{path}: not even its list of tables reads ({reason})") from None
    if not is_store:
        raise StoreError(f"{path} is not a disputelab store: it holds no tables")
