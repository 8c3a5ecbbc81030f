"""Deleting and renaming stored runs: all of a run goes, or none of it; a rename leaves
every row naming the run consistent; a run another live process writes is left alone;
and runs other runs made are known as theirs, in stores from before that was recorded too.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from disputelab import api
from disputelab.store.integrity import check
from disputelab.store.manage import EPISODE_TABLES, id_problem
from disputelab.store.sqlite import Store, StoreError

SPEC = {"name": "grid", "scenarios": ["tenancy"], "replicates": 1, "budget": 12}


def _grid_store(tmp_path: Path, ablate: bool = False) -> Store:
    """A store holding an experiment `grid` (with an ablation grid when `ablate`) and a
    single run beside it."""
    root = tmp_path / "runs"
    spec = {**SPEC, "conditions": ["general", "posture:competing"]} if ablate else SPEC
    api.experiment(spec, store=root, ablate=["posture:competing"] if ablate else None)
    api.run("workplace", store=root, budget=8)
    return Store(root)


def _rows(store: Store, table: str, run_id: str) -> int:
    """The rows of `table` that belong to run `run_id` (by its episodes)."""
    episodes = "SELECT episode_id FROM episodes WHERE run_id = ?"
    if table == "episodes":
        query = "SELECT COUNT(*) FROM episodes WHERE run_id = ?"
    else:
        query = f"SELECT COUNT(*) FROM {table} WHERE episode_id IN ({episodes})"
    return int(store.db.execute(query, (run_id,)).fetchone()[0])


def _prefixed(store: Store, table: str, prefix: str) -> int:
    query = f"SELECT COUNT(*) FROM {table} WHERE substr(episode_id, 1, ?) = ?"
    return int(store.db.execute(query, (len(prefix), prefix)).fetchone()[0])


def test_deleting_a_run_removes_every_row_of_it_and_leaves_the_store_healthy(
    tmp_path: Path,
) -> None:
    store = _grid_store(tmp_path)
    single = next(r["run_id"] for r in store.runs() if r["kind"] == "run")
    before = {t: _rows(store, t, single) for t in ("turn_chunks", "scores", "usage")}
    assert _rows(store, "episodes", "grid") and _rows(store, "turn_chunks", "grid")
    assert _rows(store, "scores", "grid")
    assert store.delete_runs(["grid"]) == ["grid"]
    assert [r["run_id"] for r in store.runs()] == [single]
    for table in ("episodes", *EPISODE_TABLES):
        assert _prefixed(store, table, "grid/") == 0, table
    # The other run is untouched.
    assert {t: _rows(store, t, single) for t in before} == before
    store.close()
    found = check(tmp_path / "runs")
    assert found.healthy, found.problems


def test_a_failed_delete_deletes_nothing(tmp_path: Path) -> None:
    store = _grid_store(tmp_path)
    episodes = _rows(store, "episodes", "grid")
    # The last statement of the transaction fails: what came before it is rolled back.
    store.db.execute(
        "CREATE TRIGGER refuse BEFORE DELETE ON runs BEGIN SELECT RAISE(ABORT, 'no'); END"
    )
    with pytest.raises(sqlite3.IntegrityError):
        store.delete_runs(["grid"])
    assert _rows(store, "episodes", "grid") == episodes
    assert _rows(store, "turn_chunks", "grid") > 0


@pytest.fixture
def held_lease(tmp_path: Path) -> Iterator[tuple[Store, subprocess.Popen[str]]]:
    """A store whose experiment `grid` has an episode claimed by another live process,
    which holds it until its stdin closes."""
    store = _grid_store(tmp_path)
    episode = store.episode_ids("grid")[0]
    code = (
        "import sqlite3, sys; from disputelab.store.leases import Leases;"
        "l = Leases(sqlite3.connect(sys.argv[1], isolation_level=None));"
        "assert l.claim(sys.argv[2])[0].value == 'mine'; print('held', flush=True);"
        "sys.stdin.read()"
    )
    # The episode is complete, which a claim refuses: mark it half-run, as a resume finds
    # an episode it replays.
    store.db.execute("UPDATE episodes SET status = 'incomplete' WHERE episode_id = ?", (episode,))
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(store.path), episode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    try:
        yield store, proc
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()


def test_a_run_another_live_process_writes_is_neither_deleted_nor_renamed(
    held_lease: tuple[Store, subprocess.Popen[str]],
) -> None:
    store, proc = held_lease
    episodes = _rows(store, "episodes", "grid")
    with pytest.raises(StoreError, match="another process is writing it"):
        store.delete_runs(["grid"])
    with pytest.raises(StoreError, match="another process is writing it"):
        store.rename_run("grid", "grid2")
    assert _rows(store, "episodes", "grid") == episodes
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait()  # the holder is gone: its claim is dead, and the run free
    assert store.delete_runs(["grid"]) == ["grid"]
    assert store.db.execute("SELECT COUNT(*) FROM leases").fetchone()[0] == 0


def test_renaming_rewrites_every_row_that_names_the_run(tmp_path: Path) -> None:
    store = _grid_store(tmp_path)
    counts = {t: _rows(store, t, "grid") for t in ("episodes", *EPISODE_TABLES)}
    matched = store.db.execute(
        "SELECT COUNT(*) FROM episodes WHERE run_id = 'grid' AND matched_episode_id IS NOT NULL"
    ).fetchone()[0]
    assert store.rename_run("grid", "trial") == {"grid": "trial"}
    assert {t: _rows(store, t, "trial") for t in counts} == counts
    for table in ("episodes", *EPISODE_TABLES):
        assert _prefixed(store, table, "grid/") == 0, table
        assert _prefixed(store, table, "trial/") == counts[table], table
    twins = store.db.execute(
        "SELECT COUNT(*) FROM episodes WHERE run_id = 'trial' AND matched_episode_id LIKE 'trial/%'"
    ).fetchone()[0]
    assert twins == matched > 0
    kind, config = store.run_info("trial")
    assert kind == "experiment" and config["name"] == "trial"
    assert store.resolve_run("trial") == "trial"  # its label follows it
    store.close()
    assert check(tmp_path / "runs").healthy


def test_a_renamed_experiment_takes_its_ablation_grids_along(tmp_path: Path) -> None:
    store = _grid_store(tmp_path, ablate=True)
    child = "grid.ablate.posture-competing"
    assert store.run_summary(child)["parent"] == "grid"
    renamed = store.rename_run("grid", "trial")
    assert renamed == {"grid": "trial", child: "trial.ablate.posture-competing"}
    summary = store.run_summary("trial.ablate.posture-competing")
    assert summary["parent"] == "trial"
    config = store.run_info("trial.ablate.posture-competing")[1]
    assert config["ablation_of"] == "trial" and config["name"] == summary["run_id"]
    assert store.delete_runs(["trial"]) == ["trial", "trial.ablate.posture-competing"]
    assert [r["kind"] for r in store.runs()] == ["run"]


@pytest.mark.parametrize(
    ("new", "why"),
    [("", "empty"), ("last", "newest run"), ("a b", "not a valid"), ("-x", "not a valid")],
)
def test_a_name_that_cannot_be_a_run_id_is_refused(new: str, why: str, tmp_path: Path) -> None:
    problem = id_problem(new)
    assert problem is not None and why in problem
    store = _grid_store(tmp_path)
    with pytest.raises(StoreError, match=why):
        store.rename_run("grid", new)
    assert store.run_summary("grid")["complete"] > 0


def test_renaming_onto_a_run_that_exists_is_refused(tmp_path: Path) -> None:
    store = _grid_store(tmp_path)
    single = next(r["run_id"] for r in store.runs() if r["kind"] == "run")
    with pytest.raises(StoreError, match="exists already"):
        store.rename_run("grid", single)
    assert {r["run_id"] for r in store.runs()} == {"grid", single}


def test_a_store_from_before_parents_were_recorded_learns_its_derived_runs(
    tmp_path: Path,
) -> None:
    store = _grid_store(tmp_path, ablate=True)
    point = "grid.sensitivity.0123456789ab"
    store.create_run("experiment", point, {"name": point}, run_id=point)
    store.close()
    # What an older version left: no parent column.
    db = sqlite3.connect(tmp_path / "runs" / "disputelab.sqlite", isolation_level=None)
    db.execute("ALTER TABLE runs DROP COLUMN parent")
    db.close()
    reopened = Store(tmp_path / "runs")
    parents = {r["run_id"]: r["parent"] for r in reopened.runs()}
    assert parents["grid.ablate.posture-competing"] == "grid"
    assert parents[point] == "grid"
    assert parents["grid"] == ""
