"""RoT on toy trees: leaves split around their mean, success and failure patterns distilled
into rules, experience and case cards, and retrieved by side, stage, gap and case type,
never from the same case."""

from __future__ import annotations

import pytest

from disputelab.protocols.settlement.agents.memory import (
    Entry,
    Features,
    MemoryBank,
    distill,
    split_leaves,
)

RISKY = "waiver: the claimant waives any future claim and statutory rights"


def leaf(
    value: float,
    concession: float,
    settled: bool,
    share: float | None = None,
    risky: tuple[str, ...] = (),
) -> Features:
    return Features(concession, settled, share, 0.2, risky, 0, value)


def test_leaves_split_at_mean_plus_and_minus_half_a_standard_deviation() -> None:
    values = [0.9, 0.8, 0.5, 0.2, 0.1]  # mean 0.5, sd 0.3162, delta 0.158
    high, low = split_leaves(values)
    assert high == [0, 1] and low == [3, 4]
    assert split_leaves([0.5, 0.5, 0.5]) == ([], [])
    assert split_leaves([0.7]) == ([], [])


TOY = [
    leaf(0.9, 0.10, True, 0.95),
    leaf(0.85, 0.12, True, 0.9),
    leaf(0.5, 0.3, False),
    leaf(0.15, 0.5, False, risky=(RISKY,)),
    leaf(0.1, 0.6, False, risky=(RISKY,)),
]


def _distilled() -> list[Entry]:
    return distill(
        TOY, "plaintiff", ("middle", "moderate"), "case-a", "labour", ("overtime",), {"t": "A"}
    )


def test_distillation_writes_experience_rules_from_failures_and_cards_from_successes() -> None:
    entries = _distilled()
    kinds = [(e.kind, e.payload.get("good")) for e in entries]
    assert ("E", "yes") in kinds and ("E", "no") in kinds
    good = next(e for e in entries if e.kind == "E" and e.payload["good"] == "yes")
    assert good.payload["concession"] == pytest.approx(0.11)
    assert good.key == "middle/moderate"
    rules = [e for e in entries if e.kind == "R"]
    assert len(rules) == 1 and rules[0].payload["clauses"] == [RISKY]
    cards = [e for e in entries if e.kind == "C"]
    assert len(cards) == 1
    assert cards[0].payload["amount_share"] == pytest.approx(0.925)
    assert cards[0].key == "labour" and cards[0].issues == ("overtime",)


def test_a_tree_whose_leaves_are_alike_teaches_nothing() -> None:
    same = [leaf(0.5, 0.1, True, 1.0)] * 4
    assert distill(same, "plaintiff", ("early", "wide"), "c", "labour", (), {}) == []


def test_retrieval_matches_side_stage_and_gap_and_never_returns_the_same_case() -> None:
    bank = MemoryBank(_distilled())
    assert bank.suggested_concession("plaintiff", "middle", "moderate") == pytest.approx(0.11)
    assert bank.suggested_concession("plaintiff", "late", "moderate") is None
    assert bank.suggested_concession("defendant", "middle", "moderate") is None
    assert bank.avoided_clauses("plaintiff") == {RISKY}
    assert bank.case_cards("plaintiff", "labour", ("overtime",), "case-a") == []  # same case
    assert len(bank.case_cards("plaintiff", "labour", ("overtime",), "case-b")) == 1
    assert bank.case_cards("plaintiff", "tort", (), "case-b") == []


def test_case_cards_rank_by_shared_issues() -> None:
    near = Entry(
        "C", "plaintiff", "labour", "near", {"amount_share": 0.9}, 0.5, "x", ("overtime", "breaks")
    )
    far = Entry("C", "plaintiff", "labour", "far", {"amount_share": 0.7}, 0.9, "y", ("dismissal",))
    bank = MemoryBank([far, near])
    assert [
        e.text for e in bank.case_cards("plaintiff", "labour", ("overtime", "breaks"), "z")
    ] == ["near", "far"]
    lines = bank.lines("plaintiff", "middle", "moderate", "labour", ("overtime",), "z")
    assert lines[0].startswith("[C]")
