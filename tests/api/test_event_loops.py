"""The synchronous functions work where an event loop is already running (a Jupyter cell
is one), and the async twins can be awaited there; both store the same run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import disputelab as dl


def test_run_works_inside_a_running_event_loop(tmp_path: Path) -> None:
    async def cell() -> tuple[dl.RunResult, dl.RunResult]:
        sync = dl.run("tenancy", mediator="rule", budget=12, store=tmp_path)
        awaited = await dl.run_async("tenancy", mediator="rule", budget=12, store=tmp_path)
        return sync, awaited

    sync, awaited = asyncio.run(cell())
    assert sync.run_id != awaited.run_id
    assert [t.text for t in sync.episode.turns] == [t.text for t in awaited.episode.turns]
    assert sync.metrics().equals(awaited.metrics())


def test_an_experiment_works_inside_a_running_event_loop(tmp_path: Path) -> None:
    spec = {"name": "in-a-cell", "scenarios": ["tenancy"], "replicates": 1, "budget": 12}

    async def cell() -> dl.ExperimentResult:
        return dl.experiment(spec, store=tmp_path)

    result = asyncio.run(cell())
    assert result.summaries[0].done == 2 and result.failed == 0
    assert "# Experiment `in-a-cell`" in result.tables()
