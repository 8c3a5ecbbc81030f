"""A Ray actor may run on a host without the driver's files, so a plan that would read or
write files kept beside the store is refused before it is played, with one line saying
what to use instead. (No Ray needed: the refusal comes before any actor is started.)"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from disputelab.experiments.on_ray import RayExecutor
from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.protocols.bilateral.agents.library import builtin_pool_path
from disputelab.protocols.settlement.agents.memory import MemoryFile
from disputelab.store.sqlite import Store


def _settlement(tmp_path: Path, memory: str) -> tuple[int, list[str]]:
    spec = ExperimentSpec(
        name="settle",
        protocol="settlement",
        scenarios=["settle-gym-slip"],
        mediators=["mcts"],
        params={"memory": memory},
    )
    store = Store(tmp_path / "runs")
    try:
        plan = plan_experiment(spec, base=tmp_path)
        summary = asyncio.run(run_experiment(store, plan, ModelHub(None), executor=RayExecutor(1)))
    finally:
        store.close()
    return summary.failed, list(summary.errors)


def test_a_counsel_memory_kept_in_the_store_is_refused_on_ray(tmp_path: Path) -> None:
    failed, errors = _settlement(tmp_path, "store")
    assert failed > 0
    assert all("memory: store" in e and "--executor processes" in e for e in errors), errors
    assert MemoryFile(tmp_path / "runs").counts() == {}  # nothing learnt, nowhere


def test_a_saved_exemplar_pool_is_refused_on_ray(tmp_path: Path) -> None:
    saved = tmp_path / "runs" / "exemplars" / "mine.json"
    saved.parent.mkdir(parents=True)
    shutil.copy(builtin_pool_path(), saved)  # a pool saved in the store's folder
    spec = ExperimentSpec(
        name="bargain",
        protocol="bilateral",
        scenarios=["product-sale"],
        mediators=["remediator"],
        replicates=1,
        params={"pool": "mine"},
    )
    store = Store(tmp_path / "runs")
    try:
        plan = plan_experiment(spec, base=tmp_path)
        summary = asyncio.run(run_experiment(store, plan, ModelHub(None), executor=RayExecutor(1)))
    finally:
        store.close()
    assert summary.failed > 0 and summary.done == 0
    assert all("pool: mine is read from a file" in e for e in summary.errors), summary.errors
