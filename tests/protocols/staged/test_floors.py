"""Floors and ceilings in the staged tables: ROUGE-L's constant-text floor (fixed sentences
that ignore the case, scored against the same gold points as the mediator, the best one's
mean shown beside ROUGE-L) and Sat's structural range with rule parties, beside Sat."""

from __future__ import annotations

import math

import pytest

from disputelab.episode import Episode
from disputelab.evaluation.outcomes import rouge_l_f1
from disputelab.protocols.staged.evaluation.agentmediation import (
    CONSTANT_METRIC,
    constant_points,
    constant_rouge,
    score_staged,
)
from disputelab.protocols.staged.tables import (
    Cell,
    expertise_table,
    floor_note,
    floor_text,
    generic_table,
    rouge_floor,
    sat_range,
    sat_range_text,
)
from disputelab.scenario.library import builtin_scenarios


def test_each_fixed_sentence_is_scored_like_a_mediators_points() -> None:
    gold = "本案的主要争议焦点为被告是否应当支付拖欠的货款及逾期利息。"
    result = constant_rouge(gold, "zh")
    expected = [rouge_l_f1(text, gold).value for text in constant_points("zh")]
    assert result.detail["per_constant"] == expected
    assert result.value == expected[0] and 0 < max(expected) < 1
    assert constant_points("en-GB") == constant_points("en") == constant_points("fr")


def _cell(per_case: dict[str, list[float]], language: str = "zh") -> Cell:
    cell = Cell()
    for case, scores in per_case.items():
        for rep in (0, 1):  # replicates of a case count once
            cell.values[(case, rep)] = {"points_rouge_l": 0.3}
            cell.constants[(case, rep)] = (language, scores)
    return cell


def test_the_floor_is_the_best_sentences_mean_over_cases() -> None:
    cell = _cell({"a": [0.2, 0.5, 0.1, 0.0], "b": [0.4, 0.1, 0.1, 0.0], "c": [0.3, 0.3, 0.1, 0.0]})
    floor = rouge_floor([cell])
    assert floor is not None
    assert floor.index == 0 and floor.value == pytest.approx(0.3)  # 0.3 beats 0.3 - 0.0333
    assert floor.cases == 3
    assert floor_text(floor) == "0.3000 (#1)"
    assert constant_points("zh")[0] in floor_note(floor)
    assert rouge_floor([None, Cell()]) is None and floor_text(None) == "-"


def test_the_floor_is_shown_beside_rouge_l_in_table_7_and_all_cells() -> None:
    levels = ("none", "ek-top3", "ek-top5", "ek-top10")
    cells = {
        (f"expertise:{lev}", "rule"): _cell({"a": [0.2, 0.6], "b": [0.4, 0.2]}) for lev in levels
    }
    (head, _, row), _ = expertise_table(cells, ["rule"])
    assert head.split("|")[2:4] == [" ROUGE-L F1↑ ", " ROUGE-L floor "]
    assert row.split("|")[3].strip() == "0.4000 (#2)"
    (head, _, *rows), _ = generic_table(cells, [f"expertise:{lev}" for lev in levels])
    at = [h.strip() for h in head.split("|")].index("ROUGE-L floor")
    assert all(r.split("|")[at].strip() == "0.4000 (#2)" for r in rows)


def test_a_staged_episode_scores_the_floor_on_the_cases_gold() -> None:
    legal = [s for s in builtin_scenarios().values() if s.legal and s.legal.points_of_contention]
    scenario = legal[0]
    scores = score_staged(Episode(scenario.id, "x", 0, {}), scenario)
    gold = "".join(scenario.legal.points_of_contention)  # type: ignore[union-attr]
    assert scores[CONSTANT_METRIC].detail["per_constant"] == [
        rouge_l_f1(t, gold).value for t in constant_points(scenario.language)
    ]
    assert not math.isnan(scores[CONSTANT_METRIC].value)


def test_sat_range_pools_parties_like_sat_and_is_shown_beside_it() -> None:
    """Two cases: 2 parties reaching summed levels 0-4 (unrejected 1-3), 3 parties 0-6
    (unrejected 3-6): pooled over 5 parties, x25 -> 0-50, unrejected 20-45."""
    cell = _cell({"a": [0.1], "b": [0.1]})
    cell.reach = {("a", 0): (2, 0, 4, 1, 3), ("a", 1): (2, 0, 4, 1, 3), ("b", 0): (3, 0, 6, 3, 6)}
    assert sat_range([cell]) == (0.0, 50.0, 20.0, 45.0)
    assert sat_range_text(sat_range([cell])) == "0.0-50.0; unrejected 20.0-45.0"
    cell.reach[("b", 0)] = (3, 0, 6, math.nan, math.nan)
    assert sat_range_text(sat_range([cell])) == "0.0-50.0; unrejected none"
    (head, _, row), _ = generic_table({("general", "rule"): cell}, ["general"])
    at = [h.strip() for h in head.split("|")].index("Sat range")
    assert at == [h.strip() for h in head.split("|")].index("Sat↑") + 1
    assert row.split("|")[at].strip() == "0.0-50.0; unrejected none"
    assert sat_range([Cell()]) is None and sat_range_text(None) == "-"


def test_all_cells_has_one_separator_per_column() -> None:
    (head, rule, _), _ = generic_table({("general", "rule"): _cell({"a": [0.1]})}, ["general"])
    assert head.count("|") == rule.count("|")
