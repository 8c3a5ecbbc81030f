"""ProMediate's mode x method table (its Table 2) in a roundtable experiment's report."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.protocols.roundtable.tables.layout import experiment_markdown_for
from disputelab.store.sqlite import Store


def report(tmp_path: Path, evaluators: list[str]) -> str:
    store = Store(tmp_path / "runs")
    spec = ExperimentSpec(
        name="modes",
        scenarios=["tenancy", "care-home-fees"],
        conditions=["general", "posture:competing"],
        mediators=["rule"],
        evaluators=evaluators,
        replicates=1,
        preset="promediate",
        party_style="persona",  # the modes are personas; the preset's General has none
    )
    asyncio.run(
        run_experiment(
            store, plan_experiment(spec, base=tmp_path), ModelHub(store.root / "c.sqlite")
        )
    )
    return experiment_markdown_for(store, "modes", json.loads(spec.model_dump_json()))


def test_the_table_has_a_row_per_mode_and_method_with_its_n(tmp_path: Path) -> None:
    table = report(tmp_path, ["promediate"])
    section = table.split("## Mode x method (ProMediate Table 2)")[1]
    assert "Consensus source: **self-report tracker" in section
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]  # no header
    assert {tuple(c.strip() for c in r.strip("|").split("|")[:3]) for r in rows} == {
        ("general", "none", "2"),
        ("general", "rule", "2"),
        ("posture:competing", "none", "2"),
        ("posture:competing", "rule", "2"),
    }
    header = next(line for line in section.splitlines() if line.startswith("| condition"))
    assert "consensus_change" in header and "mediator_intelligence" in header
    # The competing mode is a different episode from the general one.
    general, competing = (r.split("|")[4] for r in rows if "| none |" in r)
    assert general != competing


def test_without_promediate_scores_there_is_no_table(tmp_path: Path) -> None:
    assert "ProMediate Table 2" not in report(tmp_path, [])
