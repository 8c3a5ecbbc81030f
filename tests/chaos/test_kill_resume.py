"""An experiment SIGKILLed ten times at random moments and resumed each time ends as an
uninterrupted run of it ends: the same episodes, the same scores, nothing stored twice.

The kill moments are counted in committed work, not in seconds (after a drawn number of
complete episodes, then of further turns, polled read-only), so a slow machine moves them
but not what they mean; they come from a seeded generator, so every run of the suite
kills at the same points. Every turn is committed on its own, so most kills land inside
an episode, whose restart is the point of the test.
"""

from __future__ import annotations

import os
import random
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.chaos.store_view import count, finish, launch, read_store, scores, wait_until

SEED = 20261202
KILLS = 10
SPEC = """name: chaos
scenarios: [tenancy, workplace, boundary-wall]
conditions: [general, posture:competing]
mediators: [rule]
replicates: 10
budget: 40
concurrency: 4
"""
PLANNED = 3 * 2 * 10 * 2  # scenarios x conditions x replicates, each with its unmediated twin
COMPLETE_SQL = "SELECT COUNT(*) FROM episodes WHERE status IN ('resolved', 'impasse', 'budget')"
TURNS_SQL = "SELECT COALESCE(SUM(count), 0) FROM turn_chunks"
INTERRUPTED_SQL = (
    "SELECT COUNT(DISTINCT episode_id) FROM turn_chunks JOIN episodes USING (episode_id)"
    " WHERE status = 'incomplete'"
)
EACH_TURN = {"DISPUTELAB_COMMIT_EVERY_S": "0"}


def _kill_at(store: Path, spec: Path, log: Path, resume: bool, episodes: int, turns: int) -> int:
    """Run until `episodes` are complete and `turns` more are committed, then SIGKILL;
    the number of episodes left cut off mid-way."""
    proc = launch(store, spec, log, *(["--resume"] if resume else []), env=EACH_TURN)
    try:
        reached = wait_until(proc, store, COMPLETE_SQL, episodes)
        now = count(store, TURNS_SQL) or 0
        reached = reached and wait_until(proc, store, TURNS_SQL, now + turns)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert reached and proc.returncode == -signal.SIGKILL, (
        f"the child ended (status {proc.returncode}) before its kill at {episodes} episodes"
        f" + {turns} turns:\n{log.read_text()[-2000:]}"
    )
    return count(store, INTERRUPTED_SQL) or 0


@pytest.mark.slow
def test_ten_sigkills_and_resumes_end_as_an_uninterrupted_run(
    tmp_path: Path, chaos_summary: Callable[[str], None]
) -> None:
    rng = random.Random(SEED)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    killed, clean, log = tmp_path / "killed", tmp_path / "clean", tmp_path / "cli.log"
    marks = sorted(rng.sample(range(PLANNED // 20, PLANNED * 4 // 5), KILLS))
    offsets = [rng.randint(1, 60) for _ in range(KILLS)]
    cut_mid_episode, damage = 0, []
    for round_no, (mark, offset) in enumerate(zip(marks, offsets, strict=True)):
        cut_mid_episode += _kill_at(killed, spec, log, round_no > 0, mark, offset) > 0
        view = read_store(killed, "chaos")
        if view.stored_twice or view.bad_turns:
            damage.append(f"after kill {round_no + 1}: {(view.stored_twice + view.bad_turns)[0]}")
    assert finish(launch(killed, spec, log, "--resume"), log) == 0, log.read_text()[-2000:]
    assert finish(launch(clean, spec, log), log) == 0, log.read_text()[-2000:]

    after, want = read_store(killed, "chaos"), read_store(clean, "chaos")
    missing = sorted(set(want.status) - set(after.status))
    chaos_summary(
        f"seed {SEED}: {KILLS} kills ({cut_mid_episode} inside an episode), "
        f"{len(want.status)} episodes compared, {len(missing)} missing, "
        f"{len(after.stored_twice)} stored twice, {after.duplicate_turns} duplicate turns"
    )
    assert not damage, f"turns or episodes stored twice: {damage}"
    assert len(want.status) == PLANNED and want.complete == set(want.status)
    assert not missing and set(after.status) == set(want.status)
    assert after.complete == set(after.status), "an episode was left unfinished"
    assert not after.stored_twice, after.stored_twice
    assert after.duplicate_turns == 0 and not after.bad_turns, after.bad_turns[:5]
    assert after.turns == want.turns, "an episode's turns differ from the uninterrupted run's"
    got, expected = scores(killed, "chaos"), scores(clean, "chaos")
    differ = [e for e in expected if got.get(e) != expected[e]]
    assert not differ, f"{len(differ)} episodes scored differently, e.g. {differ[0]}"
    assert cut_mid_episode >= 2, "too few kills landed inside an episode to test restarts"
