"""The store's tables, how its schema grew, and how a new database file is made."""

from __future__ import annotations

import os
import secrets
import sqlite3
from pathlib import Path

DB_NAME = "disputelab.sqlite"
# 5: outcome amounts; 6: turns store the utterance once, compactly; 7: a table of distinct
# strings that turns and episodes refer to (see `disputelab.store.strings`); 8: turns
# written a commit's group at a time, one row of `turn_chunks` each (see
# `disputelab.store.chunks`); the `turns` table keeps the rows older versions wrote
SCHEMA_VERSION = 8

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS strings (
    id INTEGER PRIMARY KEY,
    hash INTEGER NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS strings_by_hash ON strings(hash);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    config TEXT NOT NULL DEFAULT '{}',
    planned INTEGER,
    source TEXT NOT NULL DEFAULT '',
    parent TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS episodes (
    episode_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(run_id),
    arm TEXT NOT NULL DEFAULT '',
    scenario_id TEXT NOT NULL,
    scenario TEXT NOT NULL,
    condition TEXT NOT NULL,
    protocol TEXT NOT NULL,
    agents TEXT NOT NULL,
    seed INTEGER NOT NULL,
    matched_episode_id TEXT,
    status TEXT NOT NULL,
    stop_reason TEXT NOT NULL DEFAULT '',
    agreement TEXT NOT NULL DEFAULT '{}',
    amounts TEXT,
    initial_consensus TEXT,
    error TEXT NOT NULL DEFAULT '',
    started_at REAL NOT NULL,
    finished_at REAL,
    wall_time_s REAL,
    scenario_ref INTEGER
);
CREATE INDEX IF NOT EXISTS episodes_by_run ON episodes(run_id);
CREATE TABLE IF NOT EXISTS turns (
    episode_id TEXT NOT NULL REFERENCES episodes(episode_id),
    idx INTEGER NOT NULL,
    party_turn INTEGER NOT NULL,
    speaker TEXT NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    action TEXT,
    intervention TEXT,
    consensus TEXT,
    latency_s REAL NOT NULL DEFAULT 0,
    usage TEXT,
    stage TEXT NOT NULL DEFAULT '',
    delivered TEXT,
    turn_taking TEXT,
    text_ref INTEGER,
    action_ref INTEGER,
    intervention_ref INTEGER,
    consensus_ref INTEGER,
    PRIMARY KEY (episode_id, idx)
);
CREATE TABLE IF NOT EXISTS turn_chunks (
    episode_id TEXT NOT NULL REFERENCES episodes(episode_id),
    first_idx INTEGER NOT NULL,
    count INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (episode_id, first_idx)
);
CREATE TABLE IF NOT EXISTS scores (
    episode_id TEXT NOT NULL REFERENCES episodes(episode_id),
    evaluator TEXT NOT NULL,
    version TEXT NOT NULL,
    judge_model TEXT NOT NULL DEFAULT '',
    metric TEXT NOT NULL,
    value REAL,
    explanation TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '{}',
    created_at REAL NOT NULL,
    PRIMARY KEY (episode_id, evaluator, version, judge_model, metric)
);
CREATE TABLE IF NOT EXISTS usage (
    episode_id TEXT NOT NULL REFERENCES episodes(episode_id),
    role TEXT NOT NULL,
    model TEXT NOT NULL,
    calls INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL,
    PRIMARY KEY (episode_id, role, model)
);
"""


TABLES = ("strings", "runs", "episodes", "turns", "turn_chunks", "scores", "usage")
# Columns a newer schema added to a table, each with its declaration.
ADDED = {
    "turns": {
        "stage": "TEXT NOT NULL DEFAULT ''",  # version 1 had no stages
        "delivered": "TEXT",  # version 2 delivered every turn as said
        "turn_taking": "TEXT",  # version 3 seated parties in a fixed cycle only
        # Version 6 held every value in the turn's own row.
        "text_ref": "INTEGER",
        "action_ref": "INTEGER",
        "intervention_ref": "INTEGER",
        "consensus_ref": "INTEGER",
    },
    "episodes": {
        "amounts": "TEXT",  # version 4 negotiated no numeric terms
        "scenario_ref": "INTEGER",  # version 6 held each episode's scenario in its row
    },
    "runs": {  # version 2 did not record an experiment's plan
        "planned": "INTEGER",
        "source": "TEXT NOT NULL DEFAULT ''",
        # The run another run made it for (an ablation's grid, a sensitivity point), ''
        # for a run of its own. Older versions ignore the column, so adding it needs no new
        # schema version: they still open the store.
        "parent": "TEXT NOT NULL DEFAULT ''",
    },
}
# Added columns a store is read without (as if every row held the default): a store on a
# read-only disk from before the column stays readable.
READ_WITHOUT = {("runs", "parent")}


# The oldest schema this version reads without migrating it: 7 lacks only `turn_chunks`,
# which a reader of such a store finds empty.
READS_AS_IS = 7


def schema_is_current(db: sqlite3.Connection) -> bool:
    """Whether the store's tables read as they are, without a migration (which a store
    opened read-only cannot have)."""
    for table, added in ADDED.items():
        columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
        if not columns >= {c for c in added if (table, c) not in READ_WITHOUT}:
            return False
    version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return version is not None and str(version[0]) in {
        str(v) for v in range(READS_AS_IS, SCHEMA_VERSION + 1)
    }


def has_table(db: sqlite3.Connection, name: str) -> bool:
    return bool(
        db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone()
    )


def holds_store(root: Path) -> bool:
    """Whether the directory `root` holds a store: its database, or only the write-ahead
    log of one (which opening the store replays)."""
    return any((root / name).exists() for name in (DB_NAME, f"{DB_NAME}-wal"))


def create_database(path: Path) -> None:
    """Make a new store's database whole under a temporary name, then link it into place:
    no process ever meets a half-made (say, empty) store file, and when another process
    made the store first, that one is kept."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.new")
    try:
        db = sqlite3.connect(tmp, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(SCHEMA)
            db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        finally:
            db.close()
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass  # another process made the store first
        except OSError:  # a file system without hard links: not atomic, but rarely raced
            if not path.exists():
                os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def lost_table_problem(db: sqlite3.Connection) -> str | None:
    """Why a store is damaged when it lacks a table its schema version always has: a
    store of schema 8 or later without `turn_chunks` has lost its turns (a new empty table
    must not quietly stand in for them)."""
    if not has_table(db, "meta"):
        return None
    version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if version is None or not str(version[0]).isdigit() or int(version[0]) < 8:
        return None
    return None if has_table(db, "turn_chunks") else "its table of turns (turn_chunks) is gone"
