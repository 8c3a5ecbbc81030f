"""`compare_played`: arms, pairing and the leaderboard, from episodes as the store reads
them."""

from __future__ import annotations

import json
import math

import pytest

from disputelab.compare import CompareError, compare_played
from disputelab.compare.episodes import Played

METRIC = "tracker:self-report.final_consensus"


def _played(model: str, scenario: str, seed: int, value: float, run: str = "r") -> Played:
    return Played(
        run,
        f"{run}/{scenario}/{model}/{seed}",
        scenario,
        "general",
        seed,
        "none",
        model,
        True,
        True,
        {METRIC: value},
        {"calls": 2.0, "tokens": 30.0},
    )


def test_a_model_without_a_defined_value_is_listed_but_not_ranked() -> None:
    played = [
        _played(m, s, r, v)
        for s in ("s1", "s2")
        for r in (0, 1)
        for m, v in (("a", 1.0), ("b", 0.5), ("c", math.nan))
    ]
    board = compare_played(played, ["r"], "final_consensus", resamples=50)
    assert board.ranking == ["a", "b"]
    assert board.arms == ["a", "b", "c"]
    assert "| - | c | n/a |" in board.to_markdown()
    assert json.loads(board.to_json())["leaderboard"][2]["rank"] is None


def test_models_of_separate_runs_pair_on_scenario_and_seed() -> None:
    played = [_played("a", "s1", r, 1.0, "run-a") for r in (0, 1)]
    played += [_played("b", "s1", r, 0.0, "run-b") for r in (0, 1)]
    board = compare_played(played, ["run-a", "run-b"], METRIC, resamples=50)
    assert board.ranking == ["a", "b"] and board.differences[0].pairs == 2
    by_run = compare_played(played, ["run-a", "run-b"], METRIC, by="run", resamples=50)
    assert by_run.ranking == ["run-a", "run-b"]


def test_lower_is_better_reverses_the_ranking() -> None:
    played = [_played(m, "s1", 0, v) for m, v in (("a", 1.0), ("b", 0.0))]
    board = compare_played(played, ["r"], METRIC, higher_is_better=False, resamples=10)
    assert board.ranking == ["b", "a"]


def test_nothing_paired_is_an_error_that_says_so() -> None:
    played = [_played("a", "s1", 0, 1.0), _played("b", "s2", 0, 0.0)]
    with pytest.raises(CompareError, match="nothing is paired to compare"):
        compare_played(played, ["r"], METRIC)
