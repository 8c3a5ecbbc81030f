"""The HTML report of a run with a model axis ranks its models."""

from __future__ import annotations

from pathlib import Path

from disputelab import api
from disputelab.report.html import run_html
from disputelab.store.sqlite import Store
from tests.compare.stubs import AGREEMENT, SCENARIOS, three_models


def test_a_run_with_a_model_axis_has_a_leaderboard(tmp_path: Path) -> None:
    spec = {
        "name": "axis",
        "scenarios": SCENARIOS[:2],
        "mediators": ["none"],
        "parties": "llm",
        "models": {"parties": list(AGREEMENT)},
        "replicates": 2,
        "budget": 3,
    }
    with three_models() as hub:
        api.experiment(spec, store=tmp_path, hub=hub)
    html = run_html(Store(tmp_path, writable=False), "axis")
    # The default metric is the one that tells the episodes apart (all are unresolved).
    heading = "Leaderboard: tracker:self-report.final_consensus by model"
    assert heading in html
    # Ranked within the leaderboard (the episodes' data, earlier on the page, names both).
    board = html[html.index(heading) :]
    assert board.index("stub-b") < board.index("stub-c")


def test_a_run_without_one_has_none(tmp_path: Path) -> None:
    api.experiment({"name": "plain", "scenarios": ["tenancy"], "replicates": 1}, store=tmp_path)
    assert "Leaderboard" not in run_html(Store(tmp_path, writable=False), "plain")
