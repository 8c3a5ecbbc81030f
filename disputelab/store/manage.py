"""Deleting and renaming stored runs, and which runs other runs made.

A run other runs were made for (an experiment and the grids of its ablations, a spec and
its sensitivity points) is one family: deleting or renaming the run does the same to the
runs derived from it, so that none is left pointing at a run that is gone. Each change is
one transaction, taken with the write lock (BEGIN IMMEDIATE) before anything is read, so a
process cannot claim an episode of the run between the check that nobody is writing it and
the change.

An episode's id starts with its run's id (`RUN/...` for an experiment, `RUN-...` for a
single run), so a rename rewrites every episode id of the run, in every table that names
one, and the names a stored config holds (an experiment's `name`, an ablation's
`ablation_of`).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from typing import Any

from disputelab.store.health import StoreError
from disputelab.store.leases import live_runs
from disputelab.store.schema import has_table

# What a run id may be: what an experiment's name may be, which single runs' generated
# ids (20261202-033705-1a2b3c) are too.
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"
MAX_ID_CHARS = 128
# Names a run reference already means something else in (`report last`).
RESERVED = frozenset({"last"})
# The tables whose rows belong to an episode, by its id.
EPISODE_TABLES = ("turns", "turn_chunks", "scores", "usage")
# A sensitivity point's grid is named NAME.sensitivity.DIGEST (stores from before runs
# recorded their parent are read by that name).
_POINT = re.compile(r"^(?P<parent>.+)\.sensitivity\.[0-9a-f]{12}$")


def id_problem(name: str) -> str | None:
    """Why `name` cannot be a run id, or None when it can."""
    if not name:
        return "a run id cannot be empty"
    if len(name) > MAX_ID_CHARS:
        return f"a run id is at most {MAX_ID_CHARS} characters, not {len(name)}"
    if name in RESERVED:
        return f"{name!r} already names the newest run; choose another id"
    if not re.match(ID_PATTERN, name):
        return (
            f"{name!r} is not a valid run id: use letters, digits, '.', '_' and '-', "
            "starting with a letter or digit"
        )
    return None


def legacy_parent(run_id: str, config_text: str) -> str:
    """The parent of a run stored before runs recorded one: an ablation's grid names the
    experiment it ablates in its config, a sensitivity point carries its spec's name."""
    try:
        config = json.loads(config_text)
    except (ValueError, TypeError):
        config = None
    if isinstance(config, dict) and isinstance(config.get("ablation_of"), str):
        return str(config["ablation_of"])
    point = _POINT.match(run_id)
    return point["parent"] if point else ""


def fill_parents(db: sqlite3.Connection) -> None:
    """Record the parent of every run stored before the column existed (its migration)."""
    rows = db.execute("SELECT run_id, config FROM runs WHERE parent = ''").fetchall()
    found = [(p, r) for r, c in rows if (p := legacy_parent(str(r), str(c)))]
    db.executemany("UPDATE runs SET parent = ? WHERE run_id = ?", found)


def family(db: sqlite3.Connection, run_id: str) -> list[str]:
    """`run_id` and every run derived from it (and from those), parents first."""
    out, todo = [run_id], [run_id]
    while todo:
        rows = db.execute(
            "SELECT run_id FROM runs WHERE parent = ? ORDER BY created_at, run_id", (todo.pop(),)
        ).fetchall()
        fresh = [str(r[0]) for r in rows if str(r[0]) not in out]
        out += fresh
        todo += fresh
    return out


def _refuse_live(db: sqlite3.Connection, runs: Sequence[str], verb: str) -> None:
    busy = [r for r in runs if r in live_runs(db)]
    if busy:
        raise StoreError(
            f"cannot {verb} run {busy[0]!r}: another process is writing it now; "
            "wait for it to finish or stop it first"
        )


def delete_runs(db: sqlite3.Connection, run_ids: Sequence[str]) -> list[str]:
    """Delete the runs, the runs derived from them, and every row of their episodes, in
    the caller's transaction; the ids deleted, in order. Refused (nothing deleted) when a
    live process writes any of them."""
    doomed = list(dict.fromkeys(r for run_id in run_ids for r in family(db, run_id)))
    _refuse_live(db, doomed, "delete")
    leases = has_table(db, "leases")
    for run_id in doomed:
        episodes = "SELECT episode_id FROM episodes WHERE run_id = ?"
        for table in (*EPISODE_TABLES, *(("leases",) if leases else ())):
            db.execute(f"DELETE FROM {table} WHERE episode_id IN ({episodes})", (run_id,))
        db.execute("DELETE FROM episodes WHERE run_id = ?", (run_id,))
        db.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
    return doomed


def renamed_ids(db: sqlite3.Connection, old: str, new: str) -> dict[str, str]:
    """Each run of `old`'s family and its id after the rename: a derived run named after
    its parent (`OLD.ablate.X`) takes the new name's prefix, another keeps its id."""
    ids = {old: new}
    for child in family(db, old)[1:]:
        ids[child] = new + child[len(old) :] if child.startswith(f"{old}.") else child
    return ids


def rename_run(db: sqlite3.Connection, old: str, new: str) -> dict[str, str]:
    """Rename run `old` to `new` (and its derived runs with it) in the caller's
    transaction; the ids renamed. Refused when a live process writes the family, or an id
    it would take is invalid or taken."""
    if problem := id_problem(new):
        raise StoreError(problem)
    ids = renamed_ids(db, old, new)
    _refuse_live(db, list(ids), "rename")
    moving = {n for o, n in ids.items() if o != n}
    for target in moving:
        if problem := id_problem(target):
            raise StoreError(problem)
        if db.execute("SELECT 1 FROM runs WHERE run_id = ?", (target,)).fetchone():
            raise StoreError(f"a run {target!r} exists already; choose another id")
    names = {o: n for o, n in ids.items() if o != n} | {old: new}
    for was, now in ids.items():
        if was != now:
            _move_episodes(db, was, now)
        _rewrite_run(db, was, now, names)
    return ids


def _move_episodes(db: sqlite3.Connection, old: str, new: str) -> None:
    """Give the run's episodes ids that start with `new`, in every table naming one. A
    lease left on one is a dead process's (a live one refused the rename): it goes."""
    n = len(old)
    mine = "SELECT episode_id FROM episodes WHERE run_id = :old"
    if has_table(db, "leases"):
        db.execute(f"DELETE FROM leases WHERE episode_id IN ({mine})", {"old": old})
    # An id that does not start with the run's (a store another tool wrote) is kept.
    starts = "substr(episode_id, 1, :n) = :old"
    args = {"old": old, "new": new, "n": n, "from": n + 1}
    for table in EPISODE_TABLES:
        db.execute(
            f"UPDATE {table} SET episode_id = :new || substr(episode_id, :from)"
            f" WHERE {starts} AND episode_id IN ({mine})",
            args,
        )
    db.execute(
        "UPDATE episodes SET matched_episode_id = :new || substr(matched_episode_id, :from)"
        " WHERE run_id = :old AND substr(matched_episode_id, 1, :n) = :old",
        args,
    )
    db.execute(
        f"UPDATE episodes SET episode_id = :new || substr(episode_id, :from), run_id = :new"
        f" WHERE run_id = :old AND {starts}",
        args,
    )
    db.execute("UPDATE episodes SET run_id = :new WHERE run_id = :old", args)


def _rewrite_run(db: sqlite3.Connection, old: str, new: str, names: dict[str, str]) -> None:
    """The run's own row under its new id, with the names in it (its label, its config's
    `name` and `ablation_of`, its parent) renamed as `names` says."""
    row = db.execute("SELECT label, config, parent FROM runs WHERE run_id = ?", (old,)).fetchone()
    label, config_text, parent = str(row[0]), str(row[1]), str(row[2])
    config_text = _renamed_config(config_text, names)
    db.execute(
        "UPDATE runs SET run_id = ?, label = ?, config = ?, parent = ? WHERE run_id = ?",
        (new, names.get(label, label), config_text, names.get(parent, parent), old),
    )


def _renamed_config(text: str, names: dict[str, str]) -> str:
    """A stored config with the run names it holds renamed; one that does not parse (a
    damaged store, which `store check` reports) is kept as it is."""
    try:
        config: Any = json.loads(text)
    except ValueError:
        return text
    if not isinstance(config, dict):
        return text
    changed = False
    for key in ("name", "ablation_of"):
        value = config.get(key)
        if isinstance(value, str) and value in names:
            config[key] = names[value]
            changed = True
    return json.dumps(config) if changed else text


def _names_participant(value: Any, participant: str) -> bool:
    """Whether a stored agents map or run config names `participant` as the person at a
    seat: an agents key `SEAT_participant`, or a play request's `seats` map."""
    if not isinstance(value, dict):
        return False
    if any(k.endswith("_participant") and v == participant for k, v in value.items()):
        return True
    request = value.get("request")
    seats = request.get("seats") if isinstance(request, dict) else None
    return isinstance(seats, dict) and participant in seats.values()


def _loaded(text: object) -> Any:
    try:
        return json.loads(str(text))
    except ValueError:
        return None


def participant_rows(db: sqlite3.Connection, participant: str) -> tuple[list[str], list[str]]:
    """The episodes a person sat in and the runs whose config names them."""
    episodes = [
        str(e)
        for e, agents in db.execute("SELECT episode_id, agents FROM episodes")
        if _names_participant(_loaded(agents), participant)
    ]
    runs = [
        str(r)
        for r, config in db.execute("SELECT run_id, config FROM runs")
        if _names_participant(_loaded(config), participant)
    ]
    return episodes, runs


def forget_participant(db: sqlite3.Connection, participant: str) -> tuple[list[str], list[str]]:
    """Delete, in the caller's transaction, every episode `participant` sat in (whole:
    the other seats' turns answer theirs) and each run planned with them that is left
    with no episode; the episode and run ids deleted. Refused when a live process writes
    one of those runs. The caller turns on `secure_delete`, so the freed pages are
    zeroed rather than left readable in the file."""
    episodes, runs = participant_rows(db, participant)
    owners = {
        str(r)
        for e in episodes
        for (r,) in db.execute("SELECT run_id FROM episodes WHERE episode_id = ?", (e,))
    }
    _refuse_live(db, sorted(owners | set(runs)), "delete from")
    tables = (*EPISODE_TABLES, *(("leases",) if has_table(db, "leases") else ()))
    for episode in episodes:
        for table in tables:
            db.execute(f"DELETE FROM {table} WHERE episode_id = ?", (episode,))
        db.execute("DELETE FROM episodes WHERE episode_id = ?", (episode,))
    emptied = [
        r
        for r in runs
        if db.execute("SELECT 1 FROM episodes WHERE run_id = ? LIMIT 1", (r,)).fetchone() is None
    ]
    for run_id in emptied:
        db.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
    return episodes, emptied
