"""Acceptance: three models behind three scripted endpoints on 127.0.0.1, crossed as the
parties' model on a model axis, played through the API and ranked by `compare`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from disputelab import api
from disputelab.llm.models import ModelHub
from disputelab.store.sqlite import Store
from tests.compare.stubs import AGREEMENT, SCENARIOS


def _spec() -> dict[str, Any]:
    return {
        "name": "three-models",
        "scenarios": SCENARIOS,
        "mediators": ["none"],
        "parties": "llm",
        "models": {"parties": list(AGREEMENT)},
        "replicates": 3,
        "budget": 3,
    }


def test_compare_recovers_the_scripted_order_of_three_models(tmp_path: Path, hub: ModelHub) -> None:
    result = api.experiment(_spec(), store=tmp_path, hub=hub)
    assert result.failed == 0 and result.summaries[0].done == 3 * 5 * 3

    board = api.compare(experiment="three-models", metric="final_consensus", store=tmp_path)

    assert board.ranking == ["stub-b", "stub-a", "stub-c"]
    strongest, _, weakest = board.strengths
    assert strongest.low > weakest.high  # B's interval lies clear of C's
    b_minus_c = next(d for d in board.differences if (d.a, d.b) == ("stub-b", "stub-c"))
    assert b_minus_c.low > 0 and b_minus_c.pairs == 15 and b_minus_c.scenarios == 5
    assert board.usage["stub-b"]["calls"] == 3  # three party turns an episode


def test_the_models_play_the_same_scenarios_on_the_same_seeds(
    tmp_path: Path, hub: ModelHub
) -> None:
    api.experiment(
        {**_spec(), "replicates": 2, "scenarios": SCENARIOS[:2]}, store=tmp_path, hub=hub
    )
    store = Store(tmp_path, writable=False)
    cells: dict[tuple[str, int], set[str]] = {}
    for rec in store.episode_headers("three-models"):
        agents = rec.episode.agents
        assert agents["parties_model"] == agents["backbone"]  # the factor is recorded
        cells.setdefault((rec.episode.scenario_id, rec.episode.seed), set()).add(agents["backbone"])
    assert cells == {(s, r): set(AGREEMENT) for s in SCENARIOS[:2] for r in range(2)}


def test_the_leaderboard_renders_as_markdown_json_and_csv(tmp_path: Path, hub: ModelHub) -> None:
    api.experiment({**_spec(), "scenarios": SCENARIOS[:2]}, store=tmp_path, hub=hub)
    board = api.compare(["three-models"], metric="final_consensus", store=tmp_path)
    md = board.to_markdown()
    assert md.startswith("## Leaderboard: tracker:self-report.final_consensus by model")
    assert "| stub-b | stub-a | stub-c |" in md  # the metrics, arms side by side
    data = json.loads(board.to_json())
    assert [row["arm"] for row in data["leaderboard"]] == board.ranking
    assert data["leaderboard"][0]["cost_usd_per_episode"] is None  # no price: unknown
    lines = board.to_csv().splitlines()
    assert lines[0].startswith("rank,arm,strength,strength_low,strength_high")
    assert len(lines) == 4
