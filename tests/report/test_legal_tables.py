"""Table 7 in the paper's layout: one row per mediator and retriever the experiment ran,
each against the same w/o EK reference."""

from __future__ import annotations

from disputelab.report.legal_tables import Cell, expertise_table


def _cell(recall: list[float]) -> Cell:
    return Cell(
        {
            (f"am-{i:03d}", 1): {"legal_basis_recall": r, "points_rouge_l": 0.3}
            for i, r in enumerate(recall)
        }
    )


def test_bm25_and_stored_retrieval_each_get_a_row() -> None:
    cells = {("expertise:none", "rule"): _cell([0.0, 0.1, 0.0])}
    for k, (bm25, stored) in {3: (0.2, 0.1), 5: (0.3, 0.15), 10: (0.4, 0.2)}.items():
        cells[(f"expertise:ek-top{k}", "rule")] = _cell([bm25] * 3)
        cells[(f"expertise:stored-top{k}", "rule")] = _cell([stored] * 3)
    _, _, bm25_row, stored_row = expertise_table(cells, ["rule"])
    assert bm25_row.startswith("| rule, BM25 |") and stored_row.startswith("| rule, stored list |")
    assert "0.4000" in bm25_row and "0.2000" in stored_row and "0.4000" not in stored_row
    # Both rows share the w/o EK reference.
    assert bm25_row.split("|")[3] == stored_row.split("|")[3]


def test_one_retriever_keeps_the_plain_mediator_row() -> None:
    cells = {("expertise:none", "rule"): _cell([0.0, 0.1])}
    cells.update({(f"expertise:ek-top{k}", "rule"): _cell([0.2, 0.3]) for k in (3, 5, 10)})
    _, _, row = expertise_table(cells, ["rule"])
    assert row.startswith("| rule |")
