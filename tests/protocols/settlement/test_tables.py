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
from disputelab.protocols.settlement.tables import settlement_markdown, zone_counts
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
    # The BATNA zone is [0.72 J, 0.88 J] with J the middle of the openings: gym-slip's
    # [11,520, 14,080] lies within 30% of 15,500, and dog-bite's [6,840, 8,360] within 20
    # and 30% of 8,200; wage-arrears' [54,720, 66,880] is 24% within 20% of 80,000, and
    # none of it within 10% (72,000 up).
    assert "## Acc@τ's floor and ceiling" in text
    assert (
        "| direct | 0 / 1 of 3 cases / 23% | 1 / 0 of 3 cases / 63% | 2 / 0 of 3 cases / 96% |"
        in text
    )


def test_zone_counts_count_cases_not_episodes() -> None:
    shares = {"a": [1.0, 1.0], "b": [0.0, 0.0], "c": [1.0, 0.5], "d": [0.0, 0.2], "e": []}
    forced, impossible, n, mean = zone_counts(shares)
    assert (forced, impossible, n) == (1, 1, 4)  # c and d are in neither: they can separate
    assert mean == (1.0 + 0.0 + 0.75 + 0.1) / 4


def test_a_red_team_run_is_titled_as_table_two(tmp_path: Path) -> None:
    text = _report(tmp_path, "redteam")
    assert "## Table 2 layout: under red-team stress testing" in text
