"""The SQLite store: runs, episodes, turns, scores and usage, committed as they happen.

WAL mode, and turns committed as they come (the runner groups an episode's turns, at
least once a second, and each group is one record: `disputelab.store.chunks`), mean a
killed process keeps what it finished. An episode row is
written as `incomplete` before its first turn and only changes status when the protocol
finishes it, so a half-run episode is never read as complete.

A damaged database is never written into: opening a store for writing runs SQLite's
quick_check first, and whatever fails to read later raises `DamagedStoreError`, whose
message names `store check` and `store recover` (see `disputelab.store.integrity`).
"""

from __future__ import annotations

import itertools
import json
import math
import secrets
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from disputelab.episode import Episode, Status, Turn, Usage
from disputelab.redact import redact, redact_deep
from disputelab.store.chunks import decode_turns, encode_turns
from disputelab.store.health import (
    DamagedStoreError,
    StoreError,
    damage_reason,
    file_problem,
    header_damage,
    identify,
    immutable_uri,
    is_read_only_failure,
    not_a_file,
    quick_check,
    store_failure,
    undecodable,
)
from disputelab.store.leases import live_runs
from disputelab.store.manage import delete_runs, fill_parents, forget_participant, rename_run
from disputelab.store.records import (
    HEADER,
    EpisodeRecord,
    PriceLike,
    ScoreLike,
    StoredScore,
    episode_header,
    run_status,
    stored_score,
)
from disputelab.store.rows import (
    dumps_or_none,
    loads_or_none,
    said,
)
from disputelab.store.schema import (
    ADDED,
    DB_NAME,
    SCHEMA,
    SCHEMA_VERSION,
    TABLES,
    create_database,
    has_table,
    lost_table_problem,
    schema_is_current,
)
from disputelab.store.strings import Strings
from disputelab.store.tx import immediate
from disputelab.store.wal import orphaned_log_problem

__all__ = [
    "DB_NAME",
    "SCHEMA_VERSION",
    "DamagedStoreError",
    "EpisodeRecord",
    "Store",
    "StoreError",
    "StoredScore",
]


def new_run_id() -> str:
    """Sortable by creation time, unique across processes."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class Store:
    """One SQLite database under a store directory."""

    def __init__(self, root: str | Path, writable: bool = True) -> None:
        """Open the store at `root`, or start one where there is none (no database file,
        or an empty or missing directory); a database file that is empty, or is not a
        store, is an error. `writable` runs SQLite's quick_check first and refuses a
        damaged store; read-only commands skip that cost, and their first write (if any)
        runs it then."""
        self.root = Path(root)
        self.path = self.root / DB_NAME
        self._checked = False  # quick_check found the database fit to write into
        self._strings = Strings()
        self._batch: dict[str, int] | None = None  # strings added by the open `batch`
        if self.root.exists() and not self.root.is_dir():
            kind = not_a_file(self.root) or "a file"
            raise StoreError(f"store {self.root} is {kind}; a store is a directory")
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                if problem := orphaned_log_problem(self.root, DB_NAME):
                    raise StoreError(problem)
                create_database(self.path)
            elif problem := file_problem(self.path):
                raise StoreError(problem)
            elif damage := header_damage(self.path):
                raise DamagedStoreError(self.root, damage, writing=writable)
            # One thread uses a store at a time, but not always the one that opened it:
            # the synchronous API runs its event loop in a thread of its own where a loop
            # is running already (a Jupyter cell).
            self.db = sqlite3.connect(
                self.path, isolation_level=None, timeout=30, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open store at {self.root}: {exc}") from None
        try:
            try:
                self._prepare(writable)
            except sqlite3.OperationalError as exc:
                if writable or not is_read_only_failure(exc, self.root):
                    raise
                self._open_immutable()
            # A read-only store of schema 7 has no table of turn chunks (and none to read),
            # and one from before runs recorded their parent, no such column.
            self._chunks = has_table(self.db, "turn_chunks")
            self._parents = any(
                r[1] == "parent" for r in self.db.execute("PRAGMA table_info(runs)")
            )
        except sqlite3.Error as exc:
            self.db.close()
            raise store_failure(self.root, exc, writing=writable) from None
        except UnicodeDecodeError as exc:  # SQLite's message names a damaged object
            self.db.close()
            raise store_failure(self.root, undecodable(exc), writing=writable) from None
        except StoreError:
            self.db.close()
            raise

    def _prepare(self, writable: bool) -> None:
        identify(self.db, self.path)
        if writable:
            self.check_writable()
        self._refuse_newer()
        if problem := lost_table_problem(self.db):
            raise DamagedStoreError(self.root, problem, writing=writable)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self._migrate()

    def _open_immutable(self) -> None:
        """Read a store this user may not write (a published one, or on a read-only
        disk): SQLite cannot make the shared-memory file a WAL database is read through,
        so the file is opened as immutable. That assumes nobody writes it meanwhile, which
        a folder this user may not write makes likely but does not ensure."""
        self.db.close()
        self.db = sqlite3.connect(
            immutable_uri(self.path), uri=True, isolation_level=None, check_same_thread=False
        )
        identify(self.db, self.path)
        self._refuse_newer()
        if problem := lost_table_problem(self.db):
            raise DamagedStoreError(self.root, problem, writing=False)
        if not schema_is_current(self.db):
            raise StoreError(
                f"store {self.root} cannot be written and was made by an older disputelab: "
                "copy it to a folder you may write to, and open the copy"
            )

    def check_writable(self) -> None:
        """Refuse to write into a damaged database (PRAGMA quick_check, once per open)."""
        if self._checked:
            return
        problems = quick_check(self.db)
        if problems:
            more = f", and {len(problems) - 1} more" if len(problems) > 1 else ""
            raise DamagedStoreError(self.root, problems[0].splitlines()[0] + more, writing=True)
        self._checked = True

    def _refuse_newer(self) -> None:
        """A store written by a newer disputelab is refused in one line, before anything
        is written to it: its rows may hold what this version would misread."""
        if not self.db.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
        ).fetchone():
            return
        version = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if version is not None and str(version[0]).isdigit() and int(version[0]) > SCHEMA_VERSION:
            raise StoreError(
                f"store {self.root} was written by a newer disputelab (store schema "
                f"{version[0]}, this one reads up to {SCHEMA_VERSION}); upgrade disputelab"
            )

    def _migrate(self) -> None:
        """Bring a store written by an older version up to this schema, in place; a store
        already up to date is not written to. Rows written before keep their values where
        they are (a turn's own columns), and read as they did: only new rows refer to the
        table of strings."""
        for table, added in ADDED.items():
            columns = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
            for column, declaration in added.items():
                if column not in columns:
                    self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
                    if (table, column) == ("runs", "parent"):
                        fill_parents(self.db)  # derived runs stored before it existed
        version = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if version != (str(SCHEMA_VERSION),):
            self.db.execute(
                "INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )

    def close(self) -> None:
        self.db.close()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Every write inside goes into one transaction, committed at the end (and rolled
        back whole on an error): an episode's start, turns, usage and end cost one commit
        instead of one each. A batch inside a batch joins it. Nothing inside may await."""
        if self._batch is not None:
            yield
            return
        fresh: dict[str, int] = {}
        with self._tx():
            self._batch = fresh
            try:
                yield
            finally:
                self._batch = None
        self._strings.remember(fresh)

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self.check_writable()
        if self._batch is not None:  # inside `batch`, which commits
            yield self.db
            return
        with immediate(self.db) as db:
            yield db

    @contextmanager
    def _interning(self) -> Iterator[tuple[sqlite3.Connection, dict[str, int]]]:
        """A write transaction that may add strings; their ids are remembered once it
        commits (a rollback forgets them with it)."""
        if self._batch is not None:
            yield self.db, self._batch
            return
        fresh: dict[str, int] = {}
        with self._tx() as db:
            yield db, fresh
        self._strings.remember(fresh)

    @contextmanager
    def _decoding(self, what: str) -> Iterator[None]:
        """A stored value that does not decode (JSON, a status) means a damaged store."""
        try:
            yield
        except (ValueError, TypeError, KeyError, IndexError) as exc:
            raise DamagedStoreError(self.root, f"{what}: {damage_reason(exc)}") from None

    def insert_rows(self, table: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Insert rows as a store (of this or an older schema) holds them, in one
        transaction, and say how many went in: columns this schema lacks are dropped, and
        a row that breaks a constraint (a key already there) is left out. How `store
        recover` copies."""
        if table not in TABLES:
            raise StoreError(f"no table {table!r} in a store")
        columns = {str(r[1]) for r in self.db.execute(f"PRAGMA table_info({table})")}
        inserted = 0
        with self._tx() as db:
            for row in rows:
                names = [c for c in row if c in columns]
                marks = ", ".join("?" * len(names))
                inserted += db.execute(
                    f"INSERT OR IGNORE INTO {table} ({', '.join(names)}) VALUES ({marks})",
                    [row[c] for c in names],
                ).rowcount
        return inserted

    # ---- writing ---------------------------------------------------------------------
    def create_run(
        self,
        kind: str,
        label: str = "",
        config: Mapping[str, Any] | None = None,
        run_id: str | None = None,
        parent: str = "",
    ) -> str:
        """Record a new run; `parent` names the run it is made for (an ablation's grid,
        a sensitivity point), which lists and deletes it with its own."""
        rid = run_id or new_run_id()
        with self._tx() as db:
            db.execute(
                "INSERT INTO runs (run_id, kind, label, created_at, config, parent)"
                " VALUES (?,?,?,?,?,?)",
                # Configs name models, and a model's URL may carry a password: what is
                # stored is always the redacted name.
                (
                    rid,
                    kind,
                    redact(label),
                    time.time(),
                    json.dumps(redact_deep(dict(config or {}))),
                    parent,
                ),
            )
        return rid

    def delete_runs(self, run_ids: Sequence[str]) -> list[str]:
        """Delete the runs with the runs derived from them and everything of their
        episodes, in one transaction; the ids deleted. StoreError, and nothing deleted,
        when another live process is writing one of them."""
        with self._tx() as db:
            return delete_runs(db, run_ids)

    def forget_participant(self, participant: str) -> tuple[list[str], list[str]]:
        """Delete every episode a person sat in and the runs planned with them that are
        left empty, in one transaction with SQLite's `secure_delete` on (the freed pages
        are zeroed), then truncate the write-ahead log, which held the old pages; the
        episode and run ids deleted."""
        self.check_writable()
        self.db.execute("PRAGMA secure_delete = ON")
        try:
            with self._tx() as db:
                gone = forget_participant(db, participant)
        finally:
            self.db.execute("PRAGMA secure_delete = OFF")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return gone

    def rename_run(self, old: str, new: str) -> dict[str, str]:
        """Give run `old` the id `new` (its derived runs follow), rewriting every row that
        names it, in one transaction; each old id with its new one. StoreError when `new`
        is invalid or taken, or a live process is writing the run."""
        with self._tx() as db:
            return rename_run(db, old, new)

    def start_episode(
        self,
        episode_id: str,
        run_id: str,
        episode: Episode,
        scenario: Mapping[str, Any] | str,
        arm: str = "",
        matched_episode_id: str | None = None,
    ) -> None:
        """Register an episode as incomplete before its first turn. Its scenario (its
        data, or that data as `compact_json` text), which every episode of a cell shares,
        is a string: in the episode's own row the first time this process stores it,
        named by id after that."""
        scenario_text = scenario if isinstance(scenario, str) else compact_json(scenario)
        with self._interning() as (db, fresh):
            scenario_ref = self._strings.ref(db, scenario_text, fresh)
            db.execute("DELETE FROM turns WHERE episode_id = ?", (episode_id,))
            db.execute("DELETE FROM turn_chunks WHERE episode_id = ?", (episode_id,))
            db.execute(
                "INSERT OR REPLACE INTO episodes (episode_id, run_id, arm, scenario_id, scenario,"
                " condition, protocol, agents, seed, matched_episode_id, status, started_at,"
                " scenario_ref) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    episode_id,
                    run_id,
                    arm,
                    episode.scenario_id,
                    "" if scenario_ref is not None else scenario_text,
                    episode.condition,
                    episode.protocol,
                    json.dumps(redact_deep(episode.agents)),
                    episode.seed,
                    matched_episode_id,
                    Status.INCOMPLETE.value,
                    time.time(),
                    scenario_ref,
                ),
            )

    def append_turn(self, episode_id: str, turn: Turn) -> None:
        """Commit one finished turn."""
        self.append_turns(episode_id, [turn])

    def append_turns(self, episode_id: str, turns: Sequence[Turn]) -> None:
        """Commit finished turns together, in one transaction and one record (a chunk: see
        `disputelab.store.chunks`), numbered from the first turn's index."""
        if not turns:
            return
        data = encode_turns(turns)
        first, count = turns[0].index, len(turns)
        with self._tx() as db:
            # A turn is stored once (as rows were, by their key): a chunk may not hold a
            # turn that one stored already holds, as a writer that lost its lease and
            # commits after another process restarted the episode would.
            if db.execute(
                "SELECT 1 FROM turn_chunks WHERE episode_id = ? AND first_idx < ?"
                " AND first_idx + count > ? LIMIT 1",
                (episode_id, first + count, first),
            ).fetchone():
                raise sqlite3.IntegrityError(
                    f"turns {first} to {first + count - 1} of episode {episode_id} are "
                    "stored already"
                )
            db.execute(
                "INSERT INTO turn_chunks (episode_id, first_idx, count, data) VALUES (?,?,?,?)",
                (episode_id, first, count, data),
            )

    def finish_episode(self, episode_id: str, episode: Episode) -> None:
        if episode.outcome is None:
            raise StoreError(f"episode {episode_id} has no outcome to record")
        o = episode.outcome
        with self._tx() as db:
            db.execute(
                "UPDATE episodes SET status=?, stop_reason=?, agreement=?, amounts=?,"
                " initial_consensus=?, finished_at=?, wall_time_s=?, error='' WHERE episode_id=?",
                (
                    o.status.value,
                    o.stop_reason,
                    json.dumps(o.agreement),
                    dumps_or_none(o.amounts or None),
                    dumps_or_none(episode.initial_consensus),
                    time.time(),
                    episode.wall_time_s,
                    episode_id,
                ),
            )

    def record_usage(
        self, episode_id: str, by_role: Mapping[str, tuple[str, Usage, PriceLike]]
    ) -> None:
        """Model usage per role; cost is NULL (unknown) when a price or token count is.
        Nothing to record (a rule episode) takes no transaction."""
        if not by_role:
            return
        with self._tx() as db:
            for role, (model, u, prices) in by_role.items():
                cost = prices.cost(u.input_tokens, u.output_tokens)
                db.execute(
                    "INSERT OR REPLACE INTO usage VALUES (?,?,?,?,?,?,?)",
                    (
                        episode_id,
                        role,
                        redact(model),
                        u.calls,
                        u.input_tokens,
                        u.output_tokens,
                        cost,
                    ),
                )

    def usage(self, episode_id: str) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT role, model, calls, input_tokens, output_tokens, cost_usd FROM usage"
            " WHERE episode_id=? ORDER BY role",
            (episode_id,),
        ).fetchall()
        keys = ("role", "model", "calls", "input_tokens", "output_tokens", "cost_usd")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    def fail_episode(self, episode_id: str, error: str) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE episodes SET status=?, error=?, finished_at=? WHERE episode_id=?",
                (Status.FAILED.value, redact(error), time.time(), episode_id),
            )

    def add_scores(
        self,
        episode_id: str,
        evaluator: str,
        version: str,
        results: Mapping[str, ScoreLike],
        judge_model: str = "",
    ) -> None:
        """Store scores beside earlier ones; the same evaluator version overwrites itself."""
        if not results:
            return
        now = time.time()
        with self._tx() as db:
            for metric, r in results.items():
                value = None if math.isnan(r.value) else float(r.value)
                db.execute(
                    "INSERT OR REPLACE INTO scores VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        episode_id,
                        evaluator,
                        version,
                        redact(judge_model),
                        metric,
                        value,
                        redact(r.explanation),
                        json.dumps(r.detail),
                        now,
                    ),
                )

    # ---- reading ---------------------------------------------------------------------
    def resolve_run(self, ref: str) -> str:
        """A run id, a unique prefix of one, or `last`."""
        if not ref.strip():
            raise StoreError("give a run: its id, a unique prefix of it, its label or last")
        if ref == "last":
            row = self.db.execute(
                "SELECT run_id FROM runs ORDER BY created_at DESC, run_id DESC LIMIT 1"
            ).fetchone()
            if row is None:
                raise StoreError(f"no runs in store {self.root}; run `disputelab run` first")
            return str(row[0])
        # A prefix compared as text, not a LIKE pattern: that would take `_` and `%` in
        # a spec's name as wildcards and ignore case.
        rows = self.db.execute(
            "SELECT run_id FROM runs WHERE substr(run_id, 1, length(?)) = ? OR label = ?",
            (ref, ref, ref),
        ).fetchall()
        ids = sorted({r[0] for r in rows})
        if ref in ids:
            return ref  # an exact id wins over longer ids it is a prefix of
        if len(ids) == 1:
            return str(ids[0])
        if not ids:
            raise StoreError(f"no run {ref!r} in store {self.root}; see `disputelab runs`")
        raise StoreError(f"run {ref!r} is ambiguous: {', '.join(ids[:5])}")

    def set_plan(self, run_id: str, planned: int, source: str = "") -> None:
        """Record how many episodes a run plans, and the file it was planned from."""
        with self._tx() as db:
            db.execute(
                "UPDATE runs SET planned = ?, source = ? WHERE run_id = ?",
                (planned, source, run_id),
            )

    def runs(self) -> list[dict[str, Any]]:
        """Every run with its episode counts and status: complete, partial or failed, or
        running while a live process plays one of its episodes."""
        done = (Status.INCOMPLETE.value, Status.FAILED.value)
        parent = "r.parent" if self._parents else "''"
        rows = self.db.execute(
            "SELECT r.run_id, r.kind, r.label, r.created_at, COUNT(e.episode_id),"
            " SUM(e.status NOT IN (?, ?)), SUM(e.status = ?), r.planned, r.source,"
            f" {parent}"
            " FROM runs r LEFT JOIN episodes e USING (run_id)"
            " GROUP BY r.run_id ORDER BY r.created_at",
            (*done, Status.FAILED.value),
        ).fetchall()
        keys = ("run_id", "kind", "label", "created_at", "episodes", "complete", "failed")
        live = live_runs(self.db)
        out = []
        for r in rows:
            d = dict(zip(keys, (*r[:5], r[5] or 0, r[6] or 0), strict=True))
            d["planned"] = r[7] if r[7] is not None else d["episodes"]
            d["source"] = r[8]
            d["parent"] = r[9]
            d["status"] = run_status(d["complete"], d["failed"], d["planned"])
            if d["run_id"] in live and d["status"] != "complete":
                d["status"] = "running"
            out.append(d)
        return out

    def run_summary(self, run_id: str) -> dict[str, Any]:
        """One run's counts and status, as `runs()` gives them."""
        for r in self.runs():
            if r["run_id"] == run_id:
                return r
        raise StoreError(f"no run {run_id!r} in store {self.root}")

    def episode_ids(self, run_id: str) -> list[str]:
        rows = self.db.execute(
            "SELECT episode_id FROM episodes WHERE run_id=? ORDER BY started_at, episode_id",
            (run_id,),
        ).fetchall()
        return [str(r[0]) for r in rows]

    def episode_cells(self, run_id: str) -> dict[str, tuple[str, str]]:
        """Each episode's condition and arm (mediated or unmediated), without its turns."""
        rows = self.db.execute(
            "SELECT episode_id, condition, arm FROM episodes WHERE run_id=?", (run_id,)
        ).fetchall()
        return {str(r[0]): (str(r[1]), str(r[2])) for r in rows}

    def complete_episode_ids(self, run_id: str) -> set[str]:
        """Episodes of a run that finished (resolved, impasse or budget)."""
        rows = self.db.execute(
            "SELECT episode_id FROM episodes WHERE run_id=? AND status NOT IN (?, ?)",
            (run_id, Status.INCOMPLETE.value, Status.FAILED.value),
        ).fetchall()
        return {str(r[0]) for r in rows}

    def run_info(self, run_id: str) -> tuple[str, dict[str, Any]]:
        """A run's kind and its stored configuration."""
        row = self.db.execute("SELECT kind, config FROM runs WHERE run_id=?", (run_id,)).fetchone()
        with self._decoding(f"run {run_id}"):
            if row is None:
                return "", {}
            config = json.loads(row[1])
            if not isinstance(config, dict):  # every run's config is written as an object
                raise ValueError(f"its configuration is a JSON {type(config).__name__}")
            return str(row[0]), config

    def load_episode(self, episode_id: str) -> EpisodeRecord:
        with self._decoding(f"episode {episode_id}"):
            return self._load_episode(episode_id)

    def episode_headers(self, run_id: str) -> list[EpisodeRecord]:
        """Every episode of a run, in the order they started, without turns or scenario:
        what a row of the csv or parquet report needs, read in one query rather than
        every turn of every episode."""
        with self._decoding(f"episodes of run {run_id}"):
            rows = self.db.execute(
                f"SELECT episode_id, {HEADER} FROM episodes WHERE run_id=?"
                " ORDER BY started_at, episode_id",
                (run_id,),
            ).fetchall()
            return [episode_header(str(r[0]), r[1:], {}) for r in rows]

    def run_scores(self, run_id: str) -> dict[str, list[StoredScore]]:
        """The scores of every episode of a run, by episode, in one query."""
        return dict(self.each_episodes_scores(run_id))

    def each_episodes_scores(
        self, run_id: str, evaluators: Sequence[str] | None = None
    ) -> Iterator[tuple[str, list[StoredScore]]]:
        """Each scored episode of a run with its scores (of `evaluators` alone, if
        given), in episode id order, from one query read as it goes: a run's scores
        are never all in memory at once."""
        only = ""
        if evaluators is not None:
            only = f" AND evaluator IN ({','.join('?' * len(evaluators))})"
        with self._decoding(f"scores of run {run_id}"):
            rows = self.db.execute(
                "SELECT s.episode_id, evaluator, version, judge_model, metric, value,"
                " explanation, detail FROM scores s JOIN episodes e"
                f" ON e.episode_id = s.episode_id WHERE e.run_id=?{only}"
                " ORDER BY s.episode_id, evaluator, version, metric",
                (run_id, *(evaluators or ())),
            )
            for eid, group in itertools.groupby(rows, key=lambda r: str(r[0])):
                yield eid, [stored_score(r[1:]) for r in group]

    def _load_episode(self, episode_id: str) -> EpisodeRecord:
        row = self.db.execute(
            f"SELECT {HEADER}, scenario, scenario_ref FROM episodes WHERE episode_id=?",
            (episode_id,),
        ).fetchone()
        if row is None:
            raise StoreError(f"no episode {episode_id!r}")
        # Rows of schema 7 and before; an episode written since has none.
        rows = self.db.execute(
            "SELECT idx, party_turn, speaker, role, text, action, intervention, consensus,"
            " latency_s, usage, stage, delivered, turn_taking, text_ref, action_ref,"
            " intervention_ref, consensus_ref FROM turns WHERE episode_id=? ORDER BY idx",
            (episode_id,),
        ).fetchall()
        strings = self._strings
        strings.load(self.db, [row[-1], *(r for t in rows for r in t[13:])])
        scenario = strings.text(row[-1]) if row[-1] is not None else row[-2]
        rec = episode_header(episode_id, row[:-2], json.loads(scenario))
        turns = [self._turn(t) for t in rows]
        if self._chunks:
            chunks = self.db.execute(
                "SELECT data FROM turn_chunks WHERE episode_id=? ORDER BY first_idx",
                (episode_id,),
            ).fetchall()
            for (data,) in chunks:
                turns.extend(decode_turns(data))
            if rows and chunks:  # an episode of schema 7 resumed by a newer version
                turns.sort(key=lambda t: t.index)
        rec.episode.turns.extend(turns)
        return rec

    def _turn(self, t: Sequence[Any]) -> Turn:
        """A turn from a row of schema 7 or before: the utterance, the repeating part of
        its move and its consensus named in the table of strings, or (the first time a
        process wrote them, and in every row before schema 7) held in the row itself."""
        strings = self._strings
        text = t[4] if t[13] is None else strings.text(t[13])
        action = loads_or_none(t[5])
        if t[14] is not None:
            action = {**strings.json(t[14]), **(action or {})}
        intervention = loads_or_none(t[6])
        if t[15] is not None:
            intervention = {**strings.json(t[15]), **(intervention or {})}
        consensus = loads_or_none(t[7]) if t[16] is None else dict(strings.json(t[16]))
        return Turn.from_dict(
            {
                "index": t[0],
                "party_turn": t[1],
                "speaker": t[2],
                "role": t[3],
                "text": text,
                "action": said(action, text),
                "intervention": said(intervention, text),
                "consensus": consensus,
                "latency_s": t[8],
                "usage": loads_or_none(t[9]),
                "stage": t[10],
                "delivered": loads_or_none(t[11]),
                "turn_taking": loads_or_none(t[12]),
            }
        )

    def scores(self, episode_id: str) -> list[StoredScore]:
        with self._decoding(f"scores of episode {episode_id}"):
            return self._scores(episode_id)

    def _scores(self, episode_id: str) -> list[StoredScore]:
        rows = self.db.execute(
            "SELECT evaluator, version, judge_model, metric, value, explanation, detail"
            " FROM scores WHERE episode_id=? ORDER BY evaluator, version, metric",
            (episode_id,),
        ).fetchall()
        return [stored_score(r) for r in rows]


def compact_json(data: Mapping[str, Any]) -> str:
    """A mapping's JSON as the store writes it (an episode's scenario, for one)."""
    return dumps_or_none(dict(data)) or "{}"
