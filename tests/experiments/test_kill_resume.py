"""An experiment SIGKILLed again and again at random moments resumes to the same result.

Each round starts the real CLI in a subprocess, waits (polling the store read-only) until
a randomly chosen number of episodes and then of further turns are committed, and kills
it. The store must then hold every planned episode at most once, each with turns 0..n-1
exactly once, and every episode marked complete must be whole; episodes finished before a
kill must be left alone by the next resume. A last resume runs to the end and must leave
every planned episode complete and scored. Kill points depend on committed work, not on
wall-clock time, so a slow machine moves the moments but not the test's meaning.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from disputelab.experiments.episodes import EpisodePlan, play_episode
from disputelab.llm.models import ModelHub
from disputelab.plan.cast import Cast
from disputelab.plan.spec import ExperimentSpec, PlannedEpisode, grid_episodes
from disputelab.protocols.base import get_protocol
from disputelab.protocols.roundtable.evaluation import socrates
from disputelab.scenario.conditions import apply_condition
from disputelab.scenario.library import builtin_scenarios
from disputelab.store.sqlite import DB_NAME, Store
from tests.helpers import stored_turn_records

SCENARIOS = ["tenancy", "workplace"]
CONDITIONS = ["general", "posture:competing"]
REPLICATES = 32
BUDGET = 60
KILLS = 5
SPEC = f"""name: chaos
scenarios: [{", ".join(SCENARIOS)}]
conditions: [{", ".join(CONDITIONS)}]
mediators: [rule]
replicates: {REPLICATES}
budget: {BUDGET}
concurrency: 4
"""
CLI = [sys.executable, "-c", "from disputelab.cli import main; main()"]
UNMEDIATED_METRICS = {"resolved", "party_turns", "final_consensus"}
MEDIATED_METRICS = UNMEDIATED_METRICS | {
    "interventions",
    "consensus_gain",
    "intervention_timeliness",
    "intervention_effectiveness",
    # SoCRATES's intervention behaviour: frequency, first position, fifths of the talk
    "intervention_frequency",
    "first_intervention",
    *(f"interventions_q{i}" for i in range(1, 6)),
}
COMPLETE = ("resolved", "impasse", "budget")
COUNT_COMPLETE = f"SELECT COUNT(*) FROM episodes WHERE status IN {COMPLETE}"
COUNT_TURNS = "SELECT COALESCE(SUM(count), 0) FROM turn_chunks"
ROUND_TIMEOUT_S = 600.0  # only a hung child gets near this, even at load 10


@dataclass(frozen=True)
class Finished:
    """What identifies one run of a complete episode: a replay would change it."""

    started_at: float
    finished_at: float
    turns: int


def _planned() -> list[PlannedEpisode]:
    spec = ExperimentSpec(
        name="chaos",
        scenarios=SCENARIOS,
        conditions=CONDITIONS,
        mediators=["rule"],
        replicates=REPLICATES,
        budget=BUDGET,
    )
    return grid_episodes(spec, SCENARIOS)


@contextmanager
def _read_only(db: Path) -> Iterator[sqlite3.Connection]:
    with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=60)) as conn:
        yield conn


def _count(db: Path, sql: str) -> int | None:
    """One number from the live store, or None while it is not readable yet."""
    if not db.exists():
        return None
    try:
        with _read_only(db) as conn:
            return int(conn.execute(sql).fetchone()[0])
    except sqlite3.OperationalError:
        return None


def _wait_for(proc: subprocess.Popen[bytes], db: Path, sql: str, target: int) -> bool:
    """Poll until `sql` reaches `target`; False if the child exits first."""
    deadline = time.monotonic() + ROUND_TIMEOUT_S
    while proc.poll() is None and time.monotonic() < deadline:
        n = _count(db, sql)
        if n is not None and n >= target:
            return True
        time.sleep(0.02)
    return False


def _launch(store: Path, spec: Path, resume: bool, log: Path) -> subprocess.Popen[bytes]:
    args = [*CLI, "--store", str(store), "experiment", str(spec)]
    with log.open("ab") as sink:
        return subprocess.Popen(
            [*args, "--resume"] if resume else args,
            stdout=sink,
            stderr=subprocess.STDOUT,
            # Every turn committed on its own, so that kills, timed by counting committed
            # turns, land inside episodes: the restart of a half-written episode is what
            # this test is about. (By default a rule episode is written whole, at its end.)
            env={**os.environ, "COLUMNS": "200", "DISPUTELAB_COMMIT_EVERY_S": "0"},
        )


def _check_store(db: Path, planned: list[PlannedEpisode], final: bool) -> dict[str, Finished]:
    """Assert the store's invariants; return the complete episodes and how they were run."""
    by_id = {p.episode_id: p for p in planned}
    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(
            "SELECT episode_id, COUNT(*) OVER (PARTITION BY episode_id), status, stop_reason,"
            " started_at, finished_at FROM episodes WHERE run_id = 'chaos'"
        ).fetchall()
        turns: dict[str, list[tuple[int, int, str]]] = {}
        for eid, said in stored_turn_records(conn).items():
            turns[eid] = [(t.index, t.party_turn, t.role) for t in said]
        scores: dict[str, dict[str, float | None]] = {}
        for eid, metric, value in conn.execute(
            "SELECT episode_id, metric, value FROM scores WHERE evaluator = ? AND version = ?",
            (socrates.EVALUATOR, socrates.VERSION),
        ):
            scores.setdefault(eid, {})[metric] = value
    assert {r[1] for r in rows} <= {1}, "an episode id is stored more than once"
    stored = {r[0] for r in rows}
    assert stored <= set(by_id), f"episodes nobody planned: {sorted(stored - set(by_id))[:3]}"
    assert set(turns) <= stored, "turns belong to an episode that has no row"
    complete: dict[str, Finished] = {}
    for eid, _, status, stop_reason, started_at, finished_at in rows:
        ts = turns.get(eid, [])
        assert [t[0] for t in ts] == list(range(len(ts))), f"{eid}: turn indexes not 0..n-1"
        party = [pt for _, pt, role in ts if role == "party"]
        assert party == list(range(1, len(party) + 1)), f"{eid}: party turns skip or repeat"
        assert status != "failed", f"{eid} failed under rule agents"
        if status not in COMPLETE:
            continue
        assert finished_at is not None and ts, f"{eid} is complete without an end or turns"
        last_index, last_party_turn, last_role = ts[-1]
        assert last_role == "party", f"{eid}: a complete episode ends on a {last_role} turn"
        if status == "budget":
            assert last_party_turn == BUDGET, f"{eid}: budget stop at party turn {last_party_turn}"
        else:
            assert stop_reason.endswith(f"at party turn {last_party_turn}"), (
                f"{eid}: stopped {stop_reason!r} but its last turn is party turn {last_party_turn}"
            )
        got = scores.get(eid, {})
        want = MEDIATED_METRICS if by_id[eid].baseline_id else UNMEDIATED_METRICS
        # Scoring is the runner's last pass, so a killed run may have left none; an
        # episode's scores are written in one transaction, so never some of them.
        if final or got:
            assert set(got) == want, f"{eid}: scores {sorted(got)}, wanted {sorted(want)}"
        if got:
            assert got["party_turns"] == last_party_turn, f"{eid}: scored turns differ"
            if by_id[eid].baseline_id:
                assert got["consensus_gain"] is not None, f"{eid}: no gain against its twin"
        complete[eid] = Finished(started_at, finished_at, last_index + 1)
    if final:
        assert set(complete) == set(by_id), f"{len(by_id) - len(complete)} episodes unfinished"
    return complete


def _replay(planned: PlannedEpisode, where: Path) -> list[tuple[int, str, str]]:
    """The turns an uninterrupted run of one planned episode commits."""
    store = Store(where)
    scenario = apply_condition(builtin_scenarios()[planned.scenario_id], planned.condition)
    episode = asyncio.run(
        play_episode(
            store,
            ModelHub(None),
            "replay",
            EpisodePlan(
                planned.episode_id,
                scenario,
                "roundtable",
                get_protocol("roundtable").params({"budget": BUDGET}),
                Cast({"parties": "rule", "mediator": planned.mediator}),
                planned.seed,
                planned.condition,
            ),
        )
    )
    store.close()
    return [(t.party_turn, t.speaker, t.text) for t in episode.turns]


def _stored_turns(db: Path, eid: str) -> list[tuple[int, str, str]]:
    with closing(sqlite3.connect(db)) as conn:
        said = stored_turn_records(conn).get(eid, [])
    return [(t.party_turn, t.speaker, t.text) for t in said]


def test_repeated_sigkills_then_resume_leave_every_episode_once_and_whole(
    tmp_path: Path,
) -> None:
    rng = random.Random(20261122)
    planned = _planned()
    total = len(planned)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    store, log = tmp_path / "store", tmp_path / "cli.log"
    db = store / DB_NAME
    # Kill points: after this many complete episodes, then this many more committed turns
    # (so most kills land inside an episode, between two turn commits).
    episode_marks = sorted(rng.sample(range(total // 20, total * 4 // 5), KILLS))
    turn_offsets = [rng.randint(1, 2 * BUDGET) for _ in range(KILLS)]
    finished: dict[str, Finished] = {}
    interrupted: set[str] = set()
    for round_no, (mark, offset) in enumerate(zip(episode_marks, turn_offsets, strict=True)):
        proc = _launch(store, spec, resume=round_no > 0, log=log)
        try:
            reached = _wait_for(proc, db, COUNT_COMPLETE, mark)
            turns_now = _count(db, COUNT_TURNS) or 0
            reached = reached and _wait_for(proc, db, COUNT_TURNS, turns_now + offset)
        finally:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        assert reached and proc.returncode == -signal.SIGKILL, (
            f"round {round_no}: the child ended (status {proc.returncode}) before the kill "
            f"at {mark} episodes + {offset} turns:\n{log.read_text()[-2000:]}"
        )
        complete = _check_store(db, planned, final=False)
        kept = {eid: complete.get(eid) for eid in finished}
        assert kept == finished, f"round {round_no}: a resume re-ran or lost a complete episode"
        assert mark <= len(complete) < total, f"round {round_no}: kill missed the run's middle"
        with closing(sqlite3.connect(db)) as conn:
            interrupted |= {
                r[0]
                for r in conn.execute(
                    "SELECT DISTINCT episode_id FROM turn_chunks JOIN episodes USING (episode_id)"
                    " WHERE status = 'incomplete'"
                )
            }
        finished = complete
    assert len(interrupted) >= 2, "too few kills landed inside an episode to test restarts"

    proc = _launch(store, spec, resume=True, log=log)
    assert proc.wait(timeout=ROUND_TIMEOUT_S) == 0, log.read_text()[-2000:]
    output = " ".join(log.read_text().split())
    assert f"{total} episodes planned, {total - len(finished)} run," in output
    assert f"{len(finished)} already done, 0 failed" in output
    complete = _check_store(db, planned, final=True)
    assert {eid: complete[eid] for eid in finished} == finished
    # An episode cut off mid-way is replayed from scratch: its turns match a clean run.
    by_id = {p.episode_id: p for p in planned}
    for i, eid in enumerate(sorted(interrupted)[:3]):
        assert _stored_turns(db, eid) == _replay(by_id[eid], tmp_path / f"clean{i}"), eid
