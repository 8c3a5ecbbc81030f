"""How the runner orders and prepares a grid: mediated episodes first within windows of
the plan, so memory stays bounded, and scorers' slow set-up done off the event loop
before any episode is in flight."""

from __future__ import annotations

import asyncio
import gc
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from disputelab.episode import Episode
from disputelab.evaluation import outcomes
from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.registry import (
    EVALUATORS,
    EpisodeToScore,
    Evaluator,
    ScoringContext,
    register_evaluator,
    warm_up,
)
from disputelab.experiments.collector import YOUNG_GC_THRESHOLD, heap_set_aside
from disputelab.experiments.runner import longest_first, run_experiment, scheduling_window
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec, grid_episodes
from disputelab.store.sqlite import Store


def test_mediated_episodes_are_started_before_their_unmediated_twins() -> None:
    spec = ExperimentSpec(name="g", scenarios=["tenancy"], mediators=["rule"], replicates=3)
    planned = grid_episodes(spec, ["tenancy"])
    ordered = longest_first(planned, window=len(planned))
    mediated = [ep for ep in planned if ep.baseline_id is not None]
    assert ordered[: len(mediated)] == mediated  # plan order kept within each group
    assert all(ep.baseline_id is None for ep in ordered[len(mediated) :])
    assert sorted(e.episode_id for e in ordered) == sorted(e.episode_id for e in planned)


def test_longest_first_sorts_within_windows_of_the_plan() -> None:
    spec = ExperimentSpec(name="g", scenarios=["tenancy"], mediators=["rule"], replicates=10)
    planned = grid_episodes(spec, ["tenancy"])
    ordered = longest_first(planned, window=6)
    for start in range(0, len(planned), 6):
        window, part = planned[start : start + 6], ordered[start : start + 6]
        assert sorted(e.episode_id for e in part) == sorted(e.episode_id for e in window)
        kinds = [ep.baseline_id is None for ep in part]
        assert kinds == sorted(kinds)  # mediated (False) first, then twins


def test_the_window_covers_twice_the_concurrency_and_never_less_than_64() -> None:
    assert scheduling_window(1) == 64
    assert scheduling_window(64) == 128
    assert scheduling_window(1000) == 2000


def test_the_runner_holds_a_bounded_number_of_played_episodes(tmp_path: Path) -> None:
    """A mediated episode waits in memory for its twin to be scored against. Sorting the
    whole grid longest first held every mediated episode at once; by windows, at most
    one window's worth."""
    spec = ExperimentSpec(
        name="held", scenarios=["tenancy"], mediators=["rule"], replicates=150, budget=6
    )
    most = 0

    def count(kind: str, ep: object, detail: object) -> None:
        nonlocal most
        most = max(most, sum(type(o) is Episode for o in gc.get_objects()))

    store = Store(tmp_path / "runs")
    summary = asyncio.run(
        run_experiment(
            store,
            plan_experiment(spec, base=tmp_path),
            ModelHub(None),
            concurrency=4,
            progress=count,
        )
    )
    assert summary.done == 300
    assert 0 < most <= scheduling_window(4) // 2 + 4  # against 150 mediated in the grid


def test_warming_the_rouge_scorers_builds_them_once_for_every_style() -> None:
    warm_up(["points-rouge"])
    assert outcomes._rouge.cache_info().currsize >= 2  # char and jieba


def _answer(body: dict[str, Any]) -> Scripted:
    return Scripted(content=json.dumps(fill(requested_schema(body), text="Let us talk.")))


def _warm_run(tmp_path: Path, llm: bool) -> dict[str, object]:
    """A run with a probe evaluator whose warm-up waits (a minute at most) until an
    episode is stored, noting what it saw, and whose score notes whether it came first."""
    seen: dict[str, object] = {}
    store = Store(tmp_path / "runs")
    warmed = threading.Event()

    def warm() -> None:
        seen["thread"] = threading.current_thread() is threading.main_thread()
        with sqlite3.connect(store.path) as db:  # its own connection: another thread
            for _ in range(1 if not llm else 600):
                seen["episodes"] = db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
                if seen["episodes"]:
                    break
                time.sleep(0.1)
        warmed.set()

    async def score(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
        seen.setdefault("scored before warmed", not warmed.is_set())
        return {"turns": MetricResult(float(len(item.episode.turns)), "counted")}

    name = "probe-warm-up"
    register_evaluator(Evaluator(name, "1", "counts turns", score, warm_up=warm))
    try:
        with fake_openai(_answer) as server:
            model = {"parties": f"openai:m@{server.url}"} if llm else {}
            spec = ExperimentSpec(
                name="w",
                scenarios=["tenancy"],
                evaluators=[name],
                replicates=1,
                budget=4,
                parties="llm" if llm else "rule",
                models=model,
            )
            hub = ModelHub(None)
            asyncio.run(run_experiment(store, plan_experiment(spec, base=tmp_path), hub))
    finally:
        EVALUATORS.unregister(name)  # leave the registry as the other tests expect it
    return seen


def test_with_model_calls_episodes_play_while_a_scorer_warms_up_and_scores_wait(
    tmp_path: Path,
) -> None:
    seen = _warm_run(tmp_path, llm=True)
    assert seen["thread"] is False
    assert isinstance(seen["episodes"], int) and seen["episodes"] > 0
    assert seen["scored before warmed"] is False


def test_rule_episodes_start_once_the_scorers_warm_up_is_done(tmp_path: Path) -> None:
    # Nothing to overlap with: played episodes would pile up unscored in memory.
    seen = _warm_run(tmp_path, llm=False)
    assert seen == {"thread": False, "episodes": 0, "scored before warmed": False}


def test_the_collector_is_tuned_for_a_run_and_restored_after_it() -> None:
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    with heap_set_aside():
        assert gc.get_freeze_count() > 0  # not walked by the collector's full passes
        assert gc.get_threshold() == (YOUNG_GC_THRESHOLD, *before[1:])
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before
    with pytest.raises(RuntimeError), heap_set_aside():
        raise RuntimeError("an episode's fault")
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before


def test_overlapping_runs_restore_the_collector_when_the_last_one_ends() -> None:
    before = gc.get_threshold()
    first, second = heap_set_aside(), heap_set_aside()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # the first to start ends first
    assert gc.get_threshold() == (YOUNG_GC_THRESHOLD, *before[1:])
    second.__exit__(None, None, None)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_a_heap_the_host_froze_stays_frozen() -> None:
    gc.freeze()
    try:
        with heap_set_aside():
            pass
        assert gc.get_freeze_count() > 0  # not thawed by the run
    finally:
        gc.unfreeze()
