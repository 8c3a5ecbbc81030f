"""AgentMediation's tables: Table 7 in the paper's layout (one row per mediator and
retriever, each against the same w/o EK reference), and the cells every staged table
shares: paired tests, cases counted once, and CIs on the statistic the cell shows."""

from __future__ import annotations

import math

import pytest

from disputelab.protocols.staged.tables import Cell, cause_table, cell_text, expertise_table
from disputelab.tables.cells import Markers, Undefined


def _cell(recall: list[float], rouge: list[float] | None = None) -> Cell:
    rouge = rouge or [0.3] * len(recall)
    return Cell(
        {
            (f"am-{i:03d}", 1): {"legal_basis_recall": r, "points_rouge_l": g}
            for i, (r, g) in enumerate(zip(recall, rouge, strict=True))
        }
    )


def test_bm25_and_stored_retrieval_each_get_a_row() -> None:
    cells = {("expertise:none", "rule"): _cell([0.0, 0.1, 0.0])}
    for k, (bm25, stored) in {3: (0.2, 0.1), 5: (0.3, 0.15), 10: (0.4, 0.2)}.items():
        cells[(f"expertise:ek-top{k}", "rule")] = _cell([bm25] * 3)
        cells[(f"expertise:stored-top{k}", "rule")] = _cell([stored] * 3)
    (_, _, bm25_row, stored_row), _ = expertise_table(cells, ["rule"])
    assert bm25_row.startswith("| rule, BM25 |") and stored_row.startswith("| rule, stored list |")
    assert "0.4000" in bm25_row and "0.2000" in stored_row and "0.4000" not in stored_row
    # Both rows share the w/o EK reference.
    assert bm25_row.split("|")[4] == stored_row.split("|")[4]


def test_one_retriever_keeps_the_plain_mediator_row() -> None:
    cells = {("expertise:none", "rule"): _cell([0.0, 0.1])}
    cells.update({(f"expertise:ek-top{k}", "rule"): _cell([0.2, 0.3]) for k in (3, 5, 10)})
    (_, _, row), _ = expertise_table(cells, ["rule"])
    assert row.startswith("| rule |")


def test_table_7_rouge_l_counts_each_case_once_not_once_per_expertise_level() -> None:
    # The rule mediator's points do not depend on retrieval: four identical copies of
    # each case. Pooled, they would halve the CI; counted once, it is one level's CI.
    rouge = [0.1, 0.5, 0.3, 0.2, 0.6, 0.4]
    one_level = _cell([0.0] * 6, rouge)
    levels = ("none", "ek-top3", "ek-top5", "ek-top10")
    cells = {(f"expertise:{lev}", "rule"): _cell([0.0] * 6, rouge) for lev in levels}
    (_, _, row), _ = expertise_table(cells, ["rule"])
    assert row.split("|")[2].strip() == cell_text(one_level, "points_rouge_l", None)


def test_table_7_rouge_l_of_a_case_is_its_mean_over_the_levels() -> None:
    levels = ("none", "ek-top3", "ek-top5", "ek-top10")
    cells = {
        (f"expertise:{lev}", "rule"): _cell([0.0, 0.0], [0.1 * (i + 1), 0.2])
        for i, lev in enumerate(levels)
    }
    (_, _, row), _ = expertise_table(cells, ["rule"])
    # Case 0: mean of 0.1, 0.2, 0.3, 0.4 = 0.25; case 1: 0.2; the cell: 0.225.
    assert row.split("|")[2].strip().startswith("0.2250 ± ")


def _sat_cell(parties: dict[str, list[int]]) -> Cell:
    """Cases with their parties' satisfaction levels (0-4)."""
    cell = Cell()
    for case, levels in parties.items():
        scores = [lev / 4 * 100 for lev in levels]
        cell.values[(case, 0)] = {"satisfaction": sum(scores) / len(scores)}
        cell.parties[(case, 0)] = scores
    return cell


def test_sat_pools_every_party_and_its_interval_is_on_that_same_mean() -> None:
    # Case a: parties at 0 and 100; cases b-e: one party at 100 each. Pooled over the
    # six parties (the paper's formula): 500 / 6 = 83.3, not the mean of case means (90).
    # The interval is on that pooled mean: residuals (cluster sum - size x mean) are
    # -66.7 for a and +16.7 for the others, so SE = sqrt(5/4 x 5555.6) / 6 = 13.9 and
    # the half-width t(0.975, 4) x 13.9 = 2.776 x 13.9 = 38.6.
    cell = _sat_cell({"a": [0, 4], "b": [4], "c": [4], "d": [4], "e": [4]})
    assert cell_text(cell, "satisfaction", None) == "83.3 ± 38.6"
    two = _sat_cell({"a": [0, 4], "b": [4]})
    assert cell_text(two, "satisfaction", None) == "66.7 ± n/a (2 clusters)"


def test_success_is_compared_by_mcnemar_on_paired_cases() -> None:
    keys = [(f"am-{i:03d}", 0) for i in range(10)]
    ref = Cell({k: {"success": 100.0} for k in keys})
    worse = Cell({k: {"success": 0.0} for k in keys})
    # 10 discordant cases, all one way: exact p = 2 x (1/2)^10 = 0.002, a family of one.
    assert cell_text(worse, "success", ref).endswith("0.0 ± 0.0††")
    worse.values[keys[0]]["success"] = math.nan
    worse.why[keys[0]]["success"] = "no verdicts (episode incomplete)"
    undefined = Undefined()
    text = cell_text(worse, "success", ref, Markers(), undefined)
    assert text.endswith(" (1ᵃ undef.)")
    assert undefined.footnote().endswith("ᵃ no verdicts (episode incomplete).")


def test_cause_table_tests_are_paired_and_adjusted_across_the_table() -> None:
    keys = [(f"am-{i:03d}", 0) for i in range(12)]

    def cell(success: float, score: float) -> Cell:
        metrics = ("satisfaction", "consensus", "litigation_risk")
        return Cell(
            {
                k: {"success": success, **dict.fromkeys(metrics, score + i)}
                for i, k in enumerate(keys)
            }
        )

    cells = {
        ("general", "rule"): cell(100.0, 50.0),
        ("cause:information", "rule"): cell(100.0, 50.0),
        ("cause:resource", "rule"): cell(0.0, 10.0),
    }
    table, notes = cause_table(cells, "rule", ["cause:information", "cause:resource"])
    resource = next(line for line in table if line.startswith("| + Resource"))
    # 4 tests in the table: resource against information (the reference row is not
    # tested against itself, the default row against nothing). All 12 cases move one
    # way: exact p = 2 / 2^12 = 0.0005 for McNemar and Wilcoxon alike; x 4 is < 0.01.
    assert resource.count("††") == 4
    footnote = notes[0]
    assert "Holm's adjustment across the 4 tests of this table" in footnote
    assert "McNemar (exact): 1" in footnote
    assert "Wilcoxon signed-rank on scenario means: 3" in footnote


@pytest.mark.parametrize("metric", ["consensus", "legal_basis_recall"])
def test_a_cell_of_one_case_has_no_interval(metric: str) -> None:
    cell = Cell({("am-001", 0): {metric: 0.5}})
    assert cell_text(cell, metric, None).endswith("± n/a (1 cluster)")
