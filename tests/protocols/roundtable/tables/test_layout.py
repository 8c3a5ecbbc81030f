"""The roundtable tables: CIs clustered by scenario, tests on scenario means adjusted
across each table, and consensus gains that never mix normalised gains with raw changes.

Scores are written by the tests, so each rule is checked on known numbers, not on what
rule agents happen to do."""

from __future__ import annotations

import math
from pathlib import Path

from disputelab.evaluation.averaging import RAW_CHANGE
from disputelab.evaluation.metrics import consensus_gain
from disputelab.protocols.roundtable.evaluation import socrates
from disputelab.protocols.roundtable.tables.layout import axis_markdown
from disputelab.tables.grids import Scores, experiment_scores, metric_table
from tests.report.pages import store_with_gains


def _scores(cells: dict[tuple[str, str], dict[tuple[str, int], float]]) -> Scores:
    scores = Scores()
    for cell, episodes in cells.items():
        for key, gain in episodes.items():
            scores.values[cell][key] = {"consensus_gain": gain}
    return scores


def _row(lines: list[str], *labels: str) -> str:
    return next(line for line in lines if all(f"| {x} |" in line for x in labels))


def test_replicates_of_one_scenario_give_a_mean_without_an_interval() -> None:
    scores = _scores({("general", "rule"): {("tenancy", r): 50.0 + r for r in range(5)}})
    table, _ = metric_table(scores, ["general"], ("consensus_gain",))
    assert _row(table, "general", "rule").endswith("| 52.0 ± n/a (1 cluster) |")


def test_a_condition_is_tested_on_scenario_means_and_marked_after_holm() -> None:
    scenarios = [f"s{i}" for i in range(8)]
    reference = {(s, r): 10.0 + i for i, s in enumerate(scenarios) for r in range(3)}
    higher = {(s, r): 60.0 + i for i, s in enumerate(scenarios) for r in range(3)}
    scores = _scores(
        {
            ("general", "rule"): reference,
            ("posture:competing", "rule"): higher,
            ("posture:avoiding", "rule"): dict(reference),
        }
    )
    conditions = ["general", "posture:competing", "posture:avoiding"]
    table, notes = metric_table(scores, conditions, ("consensus_gain",))
    # 8 scenarios, all up: exact Wilcoxon p = 2 / 2^8 = 0.0078; with the avoiding test
    # (p = 1, no difference) Holm doubles it to 0.0156: one dagger, not two. The 24
    # episodes taken as independent pairs would have given p near 1e-5.
    competing = _row(table, "posture:competing", "rule").split("|")[4].strip()
    assert competing.startswith("63.5 ± ") and competing.endswith("†")
    assert not competing.endswith("††")
    assert "†" not in _row(table, "posture:avoiding", "rule")
    assert "Holm's adjustment across the 2 tests of this table" in notes[0]


def test_raw_changes_are_not_averaged_with_normalised_gains(tmp_path: Path) -> None:
    # Two normalised gains (50 and 70) and one episode whose unmediated twin had already
    # reached consensus, where the metric falls back to a raw change of -5.
    gains = [consensus_gain(0.75, 0.5), consensus_gain(0.85, 0.5), consensus_gain(0.95, 1.0)]
    assert [g.detail["rule"] for g in gains] == ["normalised", "normalised", "raw_change"]
    store = store_with_gains(tmp_path, gains)
    scores = experiment_scores(store, "g", (socrates.EVALUATOR,))[socrates.EVALUATOR]
    table, notes = metric_table(scores, ["general"], ("consensus_gain",))
    cell = _row(table, "general", "rule").split("|")[4].strip()
    assert cell.startswith("60.0 ± ") and cell.endswith(" (1ᵃ undef.)")
    assert notes[-1].endswith(f"ᵃ {RAW_CHANGE}.")


def test_the_axis_table_shows_paired_effects_with_cis_and_tests_nothing_twice() -> None:
    scenarios = [f"s{i}" for i in range(8)]
    reference = {(s, 0): 10.0 + i for i, s in enumerate(scenarios)}
    scores = _scores(
        {
            ("general", "rule"): reference,
            ("posture:competing", "rule"): {k: v - 5 for k, v in reference.items()},
            ("culture:US-KR", "rule"): {k: v + 1 for k, v in reference.items()},
        }
    )
    text = axis_markdown(scores, ["general", "posture:competing", "culture:US-KR"])
    # Every pair moves by exactly -5 (or +1): the effect and both CI bounds; 8 pairs.
    assert "| -5.0 [-5.0, -5.0] | 8 |" in text and "| +1.0 [+1.0, +1.0] | 8 |" in text
    # Its test is the first table's consensus_gain marker: no second family here.
    assert "†" not in text and "not repeated here" in text


def test_the_paired_effect_is_not_a_difference_of_means_over_different_episodes() -> None:
    # The condition's gain is undefined wherever the reference's was low; its cell mean
    # then averages only the high episodes and looks higher, though every pair fell by 1.
    scenarios = [f"s{i}" for i in range(6)]
    reference = {(s, r): 10.0 * r for s in scenarios for r in range(4)}
    condition = {k: (v - 1 if k[1] >= 2 else math.nan) for k, v in reference.items()}
    scores = _scores({("general", "rule"): reference, ("posture:avoiding", "rule"): condition})
    text = axis_markdown(scores, ["general", "posture:avoiding"])
    row = next(x for x in text.splitlines() if "| posture:avoiding |" in x)
    assert row.split("|")[4].strip().startswith("24.0 ± ")  # mean 24 against the ref's 15
    assert "| -1.0 [-1.0, -1.0] | 12 |" in row
    # 12 of 24 undefined against none in the reference: 50 points apart, flagged.
    assert "⚑" in row and "more than 20 points" in text


def test_a_mediated_row_is_tested_against_the_same_condition_without_a_mediator() -> None:
    scenarios = [f"s{i}" for i in range(8)]
    bare = {(s, 0): 0.10 + 0.01 * i for i, s in enumerate(scenarios)}
    scores = Scores()
    for cell, episodes in {
        ("general", "none"): bare,
        ("general", "rule"): {k: v + 0.3 for k, v in bare.items()},
    }.items():
        for key, value in episodes.items():
            scores.values[cell][key] = {"final_consensus": value}
    table, notes = metric_table(scores, ["general"], ("final_consensus",))
    # 8 scenarios all up: exact p = 2 / 2^8 = 0.0078, alone in its family: two marks.
    assert _row(table, "general", "rule").split("|")[4].strip().endswith("‡‡")
    assert "‡" not in _row(table, "general", "none")
    assert "‡ mediated against the same condition without a mediator" in notes[0]
    assert "across the 1 test of this table, one family" in notes[0]
