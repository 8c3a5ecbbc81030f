"""Turns are committed in groups, and finished episodes are scored from memory; neither
changes what is stored."""

from __future__ import annotations

import asyncio
import math
import time
from pathlib import Path

import pytest

from disputelab.episode import Turn
from disputelab.evaluation.registry import EpisodeToScore
from disputelab.experiments.episodes import TurnCommits, commit_interval, score_protocol
from disputelab.experiments.runner import run_experiment
from disputelab.experiments.spec import ExperimentSpec, plan
from disputelab.llm.models import ModelHub
from disputelab.protocols.base import get_protocol
from disputelab.scenario.conditions import apply_condition
from disputelab.store.sqlite import Store
from tests.helpers import play, scenario


def _stored_turns(store: Store, eid: str) -> int:
    return int(
        store.db.execute("SELECT COUNT(*) FROM turns WHERE episode_id=?", (eid,)).fetchone()[0]
    )


def _started(tmp_path: Path) -> tuple[Store, list[Turn]]:
    store = Store(tmp_path / "runs")
    run = store.create_run("run")
    episode = play(scenario(), budget=10)
    store.start_episode("e", run, episode, {})
    return store, episode.turns


def test_with_no_interval_every_turn_is_committed_as_it_comes(tmp_path: Path) -> None:
    store, turns = _started(tmp_path)
    commits = TurnCommits(store, "e", every_s=0)
    for n, turn in enumerate(turns, 1):
        commits.add(turn)
        assert _stored_turns(store, "e") == n


def test_a_short_episodes_turns_wait_for_the_flush_and_go_in_together(tmp_path: Path) -> None:
    store, turns = _started(tmp_path)
    commits = TurnCommits(store, "e", every_s=3600)
    for turn in turns:
        commits.add(turn)
    assert _stored_turns(store, "e") == 0
    commits.flush()
    assert _stored_turns(store, "e") == len(turns)


def test_a_long_episode_commits_once_the_interval_has_passed(tmp_path: Path) -> None:
    store, turns = _started(tmp_path)
    commits = TurnCommits(store, "e", every_s=0.05)
    commits.add(turns[0])
    assert _stored_turns(store, "e") == 0
    time.sleep(0.06)  # a lower bound only: more time can only commit sooner
    commits.add(turns[1])
    assert _stored_turns(store, "e") == 2


@pytest.mark.parametrize(("value", "ok"), [("0", True), ("2.5", True), ("-1", False), ("x", False)])
def test_the_interval_comes_from_the_environment_and_is_checked(
    monkeypatch: pytest.MonkeyPatch, value: str, ok: bool
) -> None:
    monkeypatch.setenv("DISPUTELAB_COMMIT_EVERY_S", value)
    if ok:
        assert commit_interval() == float(value)
    else:
        with pytest.raises(ValueError, match="DISPUTELAB_COMMIT_EVERY_S must be"):
            commit_interval()


@pytest.mark.parametrize("turn_taking", ["cyclic", "motivated"])
def test_scores_from_memory_equal_scores_from_the_reloaded_episodes(
    tmp_path: Path, turn_taking: str
) -> None:
    spec = ExperimentSpec(
        name="mem",
        scenarios=["tenancy", "workplace"],
        conditions=["general", "posture:competing"],
        mediators=["rule"],
        replicates=2,
        params={"budget": 30, "turn_taking": turn_taking},
    )
    store = Store(tmp_path / "runs")
    asyncio.run(run_experiment(store, spec, tmp_path, ModelHub(None)))
    protocol = get_protocol(spec.protocol)
    fresh = Store(tmp_path / "rescored")
    fresh.create_run("experiment", run_id="mem")
    for ep in plan(spec, ["tenancy", "workplace"]):
        record = store.load_episode(ep.episode_id)
        twin = store.load_episode(ep.baseline_id).episode if ep.baseline_id else None
        conditioned = apply_condition(scenario(ep.scenario_id), ep.condition)
        item = EpisodeToScore(record.episode, conditioned, twin, ep.episode_id, ep.baseline_id)
        fresh.start_episode(ep.episode_id, "mem", record.episode, {})
        reloaded = asyncio.run(score_protocol(fresh, ep.episode_id, item, protocol))
        stored = {s.metric: s for s in store.scores(ep.episode_id)}
        assert set(stored) == set(reloaded), ep.episode_id
        for metric, result in reloaded.items():
            a, b = stored[metric].value, result.value
            assert (math.isnan(a) and math.isnan(b)) or a == b, (ep.episode_id, metric)
            assert stored[metric].explanation == result.explanation
