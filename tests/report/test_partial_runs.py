"""A report on an unfinished experiment says so, counts what finished, and draws no
significance marker for a cell whose matched pairs are not all there."""

from __future__ import annotations

import asyncio
from pathlib import Path

from disputelab.experiments.runner import run_experiment
from disputelab.experiments.spec import ExperimentSpec
from disputelab.llm.models import ModelHub
from disputelab.report.legal_tables import staged_markdown
from disputelab.report.tables import experiment_markdown
from disputelab.store.sqlite import Store


def _grid(tmp_path: Path, **fields: object) -> Store:
    store = Store(tmp_path)
    spec = ExperimentSpec.model_validate(
        {"name": "g", "scenarios": ["tenancy", "workplace"], "replicates": 6, **fields}
    )
    asyncio.run(run_experiment(store, spec, tmp_path, ModelHub(None)))
    return store


def _unfinish(store: Store, episode_id: str) -> None:
    store.db.execute(
        "UPDATE episodes SET status = 'incomplete' WHERE episode_id = ?", (episode_id,)
    )


def _row(text: str, *labels: str) -> str:
    return next(line for line in text.splitlines() if all(f"| {x} |" in line for x in labels))


def test_a_cell_missing_a_pair_gets_no_marker(tmp_path: Path) -> None:
    conditions = ["general", "posture:accommodating"]
    store = _grid(tmp_path, conditions=conditions, budget=40)
    # With every pair there, this effect is strong enough to be marked...
    complete = _row(experiment_markdown(store, "g", conditions), "posture:accommodating", "rule")
    assert "| 12 |" in complete and "†" in complete
    # ...and with one pair missing, the same cell is not tested at all.
    _unfinish(store, "g/tenancy/posture:accommodating/rule/r0")
    text = experiment_markdown(store, "g", conditions)
    row = _row(text, "posture:accommodating", "rule")
    assert "| 11 |" in row and "†" not in row
    assert "posture:accommodating | rule | " in text


def test_the_staged_tables_leave_out_markers_on_cells_missing_pairs(tmp_path: Path) -> None:
    store = _grid(
        tmp_path,
        protocol="staged",
        conditions=["strategy:compromising@all", "strategy:accommodating@all"],
        rounds=3,
    )
    config = store.run_info("g")[1]

    def accommodating() -> list[str]:
        text = staged_markdown(store, "g", config)
        return [
            line for line in text.splitlines() if "ccommodating" in line and line.startswith("|")
        ]

    assert any("†" in line for line in accommodating())  # marked while every pair is there
    _unfinish(store, "g/tenancy/strategy:accommodating@all/rule/r0")
    assert accommodating() and not any("†" in line for line in accommodating())


def test_runs_and_the_report_say_an_experiment_is_partial(tmp_path: Path) -> None:
    store = _grid(tmp_path, conditions=["general"], budget=30)
    _unfinish(store, "g/workplace/general/rule/r5")
    (run,) = store.runs()
    assert (run["status"], run["complete"], run["planned"]) == ("partial", 23, 24)
