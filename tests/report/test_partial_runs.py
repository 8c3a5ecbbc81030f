"""A report on an unfinished experiment says so, counts what finished, and draws no
significance marker for a cell whose matched pairs are not all there.

The effects tested for significance are written into the scores by the tests, so the
marker rule is checked on a known difference, not on what rule agents happen to do."""

from __future__ import annotations

import asyncio
from pathlib import Path

from disputelab.evaluation.metrics import MetricResult
from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.protocols.roundtable.evaluation import socrates
from disputelab.protocols.roundtable.tables.layout import experiment_markdown
from disputelab.protocols.staged.tables import Cell, cell_text
from disputelab.store.sqlite import Store

CONDITIONS = ["general", "posture:accommodating"]


def _grid(tmp_path: Path, **fields: object) -> Store:
    store = Store(tmp_path)
    spec = ExperimentSpec.model_validate(
        {"name": "g", "scenarios": ["tenancy", "workplace"], "replicates": 6, **fields}
    )
    asyncio.run(run_experiment(store, plan_experiment(spec, base=tmp_path), ModelHub(None)))
    return store


def _set_gain(store: Store, condition: str, gain: float) -> None:
    """Give every mediated episode of `condition` a consensus gain near `gain`."""
    for i, eid in enumerate(sorted(store.complete_episode_ids("g"))):
        if f"/{condition}/rule/" in eid:
            score = MetricResult(gain + i % 3, "set by the test")
            store.add_scores(eid, socrates.EVALUATOR, socrates.VERSION, {"consensus_gain": score})


def _unfinish(store: Store, episode_id: str) -> None:
    store.db.execute(
        "UPDATE episodes SET status = 'incomplete' WHERE episode_id = ?", (episode_id,)
    )


def _row(text: str, *labels: str) -> str:
    return next(line for line in text.splitlines() if all(f"| {x} |" in line for x in labels))


def test_a_cell_missing_a_pair_gets_no_marker(tmp_path: Path) -> None:
    # Tests run on scenario means, so a marker needs scenarios, not replicates: every
    # built-in scenario, once each.
    store = _grid(tmp_path, scenarios=["builtin:*"], replicates=1, conditions=CONDITIONS, budget=20)
    n = len({eid.split("/")[1] for eid in store.complete_episode_ids("g")})
    _set_gain(store, "general", 10.0)
    _set_gain(store, "posture:accommodating", 90.0)
    # With every pair there, a difference this large is marked...
    complete = _row(experiment_markdown(store, "g", CONDITIONS), "posture:accommodating", "rule")
    assert f"| {n} |" in complete and "†" in complete
    # ...and with one pair missing, the same cell is not tested at all.
    _unfinish(store, "g/tenancy/posture:accommodating/rule/r0")
    row = _row(experiment_markdown(store, "g", CONDITIONS), "posture:accommodating", "rule")
    assert f"| {n - 1} |" in row and "†" not in row


def test_the_staged_tables_leave_out_markers_on_cells_missing_pairs() -> None:
    keys = [(f"case-{i}", 0) for i in range(12)]
    ref = Cell({k: {"consensus": 25.0} for k in keys})
    cell = Cell({k: {"consensus": 100.0} for k in keys})
    assert "†" in cell_text(cell, "consensus", ref)  # every pair there: tested
    del cell.values[keys[0]]
    assert "†" not in cell_text(cell, "consensus", ref)  # a pair missing: not tested


def test_runs_and_the_report_say_an_experiment_is_partial(tmp_path: Path) -> None:
    store = _grid(tmp_path, conditions=["general"], budget=30)
    _unfinish(store, "g/workplace/general/rule/r5")
    (run,) = store.runs()
    assert (run["status"], run["complete"], run["planned"]) == ("partial", 23, 24)
