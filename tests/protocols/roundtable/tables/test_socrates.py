"""SoCRATES's intervention-behaviour table (Table 7, with the progress bins) and its
per-domain table (Table 3), from a rule-agent experiment over two domains."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from disputelab.episode import Episode, Turn
from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.protocols.roundtable.evaluation.socrates import intervention_behaviour
from disputelab.protocols.roundtable.tables.layout import experiment_markdown_for
from disputelab.store.sqlite import Store


def episode_with_interventions(party_turns: int, after: list[int]) -> Episode:
    ep = Episode("s", "roundtable", 0, {"parties": "rule", "mediator": "rule"})
    turns: list[Turn] = []
    for k in range(1, party_turns + 1):
        turns.append(Turn(len(turns), k, "a", "party", "x"))
        if k in after:
            turns.append(Turn(len(turns), k, "mediator", "mediator", "y"))
    ep.turns = turns
    return ep


def test_frequency_first_position_and_bins() -> None:
    scores = intervention_behaviour(episode_with_interventions(20, [2, 3, 15]))
    assert scores["intervention_frequency"].value == 15.0  # 3 of 20 party turns
    assert scores["first_intervention"].value == 10.0  # after turn 2 of 20
    bins = [scores[f"interventions_q{i}"].value for i in range(1, 6)]
    assert bins == [200 / 3, 0.0, 0.0, 100 / 3, 0.0]


def test_a_silent_mediator_has_no_first_intervention() -> None:
    scores = intervention_behaviour(episode_with_interventions(10, []))
    assert scores["intervention_frequency"].value == 0.0
    assert "never spoke" in scores["first_intervention"].explanation


def test_the_report_has_the_behaviour_and_per_domain_tables(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs")
    spec = ExperimentSpec(
        name="two-domains",
        scenarios=["care-home-fees", "harbour-dredging", "dialysis-transport"],
        mediators=["rule"],
        replicates=1,
        budget=30,
    )
    asyncio.run(
        run_experiment(
            store, plan_experiment(spec, base=tmp_path), ModelHub(store.root / "c.sqlite")
        )
    )
    table = experiment_markdown_for(store, "two-domains", json.loads(spec.model_dump_json()))
    assert "## Intervention behaviour (SoCRATES Table 7)" in table
    assert "## Per domain (SoCRATES Table 3)" in table
    header = next(line for line in table.splitlines() if line.startswith("| mediator | env"))
    assert header.split("|")[2:5] == [" environmental ", " healthcare ", " all "]
    behaviour = next(
        line for line in table.splitlines() if line.startswith("| rule | ") and "%" not in line
    )
    assert behaviour.count("|") == 9
