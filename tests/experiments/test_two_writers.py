"""Two processes working on one experiment at once run every episode exactly once.

Each process claims an episode in the store before running it; a process that finds an
episode claimed by a live process skips it and comes back for it once it is let go. Both
tests run the real command line in two subprocesses started together.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

from disputelab.llm.testing import Scripted, fake_openai
from tests.experiments.test_provider_faults import _good
from tests.helpers import stored_turns

CLI = [sys.executable, "-c", "from disputelab.cli import main; main()"]
SUMMARY = re.compile(r"(\d+) episodes planned, (\d+) run, (\d+) already done")


def _together(store: Path, spec: Path, concurrency: int) -> list[tuple[int, str]]:
    """Start two `experiment --resume` processes at once; their exit codes and output."""
    args = [*CLI, "--store", str(store), "experiment", str(spec), "--resume"]
    args += ["--concurrency", str(concurrency)]
    env = {**os.environ, "COLUMNS": "200"}
    procs = [
        subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        for _ in range(2)
    ]
    return [(p.wait(timeout=600), p.communicate()[0]) for p in procs]


def _ran(output: str) -> tuple[int, int]:
    """(planned, run by this process) from the final summary line."""
    match = SUMMARY.search(" ".join(output.split()))
    assert match, output
    return int(match.group(1)), int(match.group(2))


def _check_every_episode_once(store: Path, run_id: str, planned: int) -> None:
    with closing(sqlite3.connect(store / "disputelab.sqlite")) as db:
        rows = db.execute(
            "SELECT status, error FROM episodes WHERE run_id = ?", (run_id,)
        ).fetchall()
        indices: dict[str, list[int]] = {}
        for eid, idx in stored_turns(db):
            indices.setdefault(eid, []).append(idx)
        turns = [(eid, len(found), max(found)) for eid, found in indices.items()]
        leases = db.execute("SELECT COUNT(*) FROM leases").fetchone()[0]
    assert len(rows) == planned
    assert all(status not in ("failed", "incomplete") and not error for status, error in rows)
    assert all(n == last + 1 for _, n, last in turns)  # no turn written twice or skipped
    assert leases == 0  # both processes let go of everything they claimed


def test_two_resumes_of_a_rule_experiment_share_it_without_duplicates(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: shared\nscenarios: ['builtin:*']\nconditions: [general, posture:competing]\n"
        "mediators: [rule]\nreplicates: 6\nbudget: 40\n"
    )
    store = tmp_path / "runs"
    results = _together(store, spec, concurrency=4)
    assert [code for code, _ in results] == [0, 0], results
    (planned, a), (_, b) = (_ran(out) for _, out in results)
    assert a + b == planned  # each episode was run by exactly one of them
    _check_every_episode_once(store, "shared", planned)


def test_two_resumes_of_an_llm_experiment_wait_for_each_others_episodes(
    tmp_path: Path,
) -> None:
    def slow(body: dict[str, object]) -> Scripted:
        reply = _good(body)  # type: ignore[arg-type]
        reply.delay_s = 0.05
        return reply

    with fake_openai(slow) as server:
        spec = tmp_path / "spec.yaml"
        spec.write_text(
            "name: llm-shared\nscenarios: [tenancy, workplace]\nconditions: [general]\n"
            f"mediators: [none]\nparties: llm\nmodels: {{parties: 'openai:m@{server.url}'}}\n"
            "replicates: 6\nbudget: 4\n"
        )
        store = tmp_path / "runs"
        results = _together(store, spec, concurrency=3)
    assert [code for code, _ in results] == [0, 0], results
    (planned, a), (_, b) = (_ran(out) for _, out in results)
    assert planned == 12 and a + b == planned
    _check_every_episode_once(store, "llm-shared", planned)


def test_an_episode_held_elsewhere_is_waited_for_then_run_here(tmp_path: Path) -> None:
    """In one process, deterministically: another claimant holds one planned episode and
    lets go of it a moment later; the runner runs the rest, waits, then runs that one."""
    import asyncio
    import threading

    from disputelab.experiments.runner import run_experiment
    from disputelab.llm.models import ModelHub
    from disputelab.plan.experiment import plan_experiment
    from disputelab.plan.spec import ExperimentSpec, grid_episodes
    from disputelab.store.leases import Claim, Leases
    from disputelab.store.sqlite import Store

    spec = ExperimentSpec(name="held", scenarios=["tenancy"], mediators=["none"], replicates=3)
    store = Store(tmp_path / "runs")
    held = grid_episodes(spec, ["tenancy"])[1].episode_id
    connection = sqlite3.connect(
        store.path, isolation_level=None, timeout=5, check_same_thread=False
    )
    other = Leases(connection)  # released from the timer's thread below
    assert other.claim(held)[0] is Claim.MINE
    threading.Timer(1.0, other.release, args=(held,)).start()

    summary = asyncio.run(
        run_experiment(store, plan_experiment(spec, base=tmp_path), ModelHub(None), resume=True)
    )
    assert (summary.waited, summary.done, summary.elsewhere) == (1, 3, 0)
    assert held in store.complete_episode_ids("held")
