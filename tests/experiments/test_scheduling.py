"""How the runner orders and prepares a grid: mediated episodes first, and scorers' slow
set-up done off the event loop before any episode is in flight."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

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
from disputelab.experiments.runner import longest_first, run_experiment
from disputelab.experiments.spec import ExperimentSpec, plan
from disputelab.llm.models import ModelHub
from disputelab.store.sqlite import Store


def test_mediated_episodes_are_started_before_their_unmediated_twins() -> None:
    spec = ExperimentSpec(name="g", scenarios=["tenancy"], mediators=["rule"], replicates=3)
    planned = plan(spec, ["tenancy"])
    ordered = longest_first(planned)
    mediated = [ep for ep in planned if ep.baseline_id is not None]
    assert ordered[: len(mediated)] == mediated  # plan order kept within each group
    assert all(ep.baseline_id is None for ep in ordered[len(mediated) :])
    assert sorted(e.episode_id for e in ordered) == sorted(e.episode_id for e in planned)


def test_warming_the_rouge_scorers_builds_them_once_for_every_style() -> None:
    warm_up(["points-rouge"])
    assert outcomes._rouge.cache_info().currsize >= 2  # char and jieba


def test_an_evaluators_warm_up_runs_in_a_thread_before_the_first_episode(
    tmp_path: Path,
) -> None:
    seen: dict[str, object] = {}
    store = Store(tmp_path / "runs")

    def warm() -> None:
        seen["thread"] = threading.current_thread() is threading.main_thread()
        with sqlite3.connect(store.path) as db:  # its own connection: another thread
            seen["episodes"] = db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]

    async def score(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
        return {"turns": MetricResult(float(len(item.episode.turns)), "counted")}

    name = "probe-warm-up"
    register_evaluator(Evaluator(name, "1", "counts turns", score, warm_up=warm))
    try:
        spec = ExperimentSpec(name="w", scenarios=["tenancy"], evaluators=[name], replicates=1)
        asyncio.run(run_experiment(store, spec, tmp_path, ModelHub(None)))
    finally:
        EVALUATORS.unregister(name)  # leave the registry as the other tests expect it
    assert seen == {"thread": False, "episodes": 0}
