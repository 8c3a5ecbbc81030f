"""A settlement experiment's report prints the paper's Table 1-3 layouts: methods x
metrics (titled as Table 2 when the opponent is the red team), the ablation rows, and the
paired planning-vs-direct difference."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import load_spec
from disputelab.protocols.settlement.tables import settlement_markdown
from disputelab.store.sqlite import Store

METHODS = ["direct", "mcts", "mcts-no-memory", "mcts-no-auditor", "mcts-no-aid"]


def _report(tmp_path: Path, parties: str) -> str:
    spec = tmp_path / f"{parties}.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "name": f"t-{parties}",
                "protocol": "settlement",
                "scenarios": [
                    "settle-gym-slip",
                    "settle-wage-arrears-zh",
                    "settle-dog-bite-courier",
                ],
                "mediators": METHODS,
                "parties": parties,
                "replicates": 2,
            }
        )
    )
    store = Store(tmp_path / "store")
    loaded = load_spec(spec)
    asyncio.run(run_experiment(store, plan_experiment(loaded, base=tmp_path), ModelHub(None)))
    return settlement_markdown(store, loaded.name, loaded.model_dump())


def test_the_report_has_the_three_table_layouts(tmp_path: Path) -> None:
    text = _report(tmp_path, "rule")
    assert "## Table 1 layout: negotiation performance" in text
    assert "| Method | SR↑ | Acc@10%↑ | Acc@20%↑ | Acc@30%↑ | SR×Acc@10↑" in text
    assert "| direct | 1.00" in text and "| mcts |" in text
    assert "## Table 3 layout: ablation study" in text
    for row in ("w/o Compliance", "w/o Aid", "w/o Tree", "w/o RoT", "Ours (full)"):
        assert f"| {row} |" in text
    assert "## Planning against direct counsel" in text
    assert "| SR↑ | +0.000" in text  # rule opponents: both settle every case


def test_a_red_team_run_is_titled_as_table_two(tmp_path: Path) -> None:
    text = _report(tmp_path, "redteam")
    assert "## Table 2 layout: under red-team stress testing" in text
