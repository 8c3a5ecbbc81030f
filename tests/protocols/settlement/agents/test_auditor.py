"""The compliance auditor catches planted illegal, unenforceable and coercive clauses,
missing essentials and vague wording, and proposes a revision it would pass."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from disputelab.protocols.settlement.agents.auditor import (
    DEFAULT_CLAUSES,
    _clause_violations,
    audit,
    clause_field,
    clause_violations,
    missing_fields,
)

CLEAN = tuple(DEFAULT_CLAUSES["en"].values())


def test_a_complete_package_passes() -> None:
    report = audit(20_000, CLEAN)
    assert report.flag == "pass"
    assert report.violations == ()


def test_a_planted_waiver_of_statutory_rights_is_vetoed_and_struck() -> None:
    planted = "waiver: the employee waives all statutory social insurance contributions"
    report = audit(20_000, (*CLEAN, planted))
    assert report.flag == "veto"
    assert [v.rule for v in report.violations] == ["NW-1"]
    assert report.violations[0].clause == planted
    assert planted not in report.revised
    assert audit(20_000, report.revised).flag == "pass"


def test_chinese_clauses_are_checked_too() -> None:
    zh = tuple(DEFAULT_CLAUSES["zh"].values())
    assert audit(50_000, zh, "zh").flag == "pass"
    planted = "waiver: 劳动者放弃要求用人单位缴纳社会保险的权利"
    assert audit(50_000, (*zh, planted), "zh").flag == "veto"


def test_coercion_concealment_and_grossly_excessive_damages_are_vetoed() -> None:
    for clause, rule in (
        ("acceptance: this offer lapses unless signed today", "VOL-1"),
        ("confidentiality: neither side will report the leak to the authorities", "ILL-2"),
        ("liability: liquidated damages of 15,000 for any late payment", "ILL-1"),
    ):
        report = audit(20_000, (*CLEAN, clause))
        assert report.flag == "veto", clause
        assert rule in {v.rule for v in report.violations}


def test_modest_liquidated_damages_are_fine() -> None:
    assert (
        audit(20_000, (*CLEAN, "liability: liquidated damages of 2,000 for late payment")).flag
        == "pass"
    )


def test_an_unverifiable_condition_is_a_warning_whose_revision_passes() -> None:
    risky = "enforcement: payment is made when the defendant's business conditions permit"
    clauses = (*(c for c in CLEAN if clause_field(c) != "enforcement"), risky)
    report = audit(20_000, clauses)
    assert report.flag == "warn"
    assert "ENF-1" in {v.rule for v in report.violations}
    assert audit(20_000, report.revised).flag == "pass"


def test_missing_essentials_veto_without_a_deadline_and_warn_otherwise() -> None:
    no_deadline = tuple(c for c in CLEAN if clause_field(c) != "deadline")
    assert audit(20_000, no_deadline).flag == "veto"
    no_method = tuple(c for c in CLEAN if clause_field(c) != "payment_method")
    assert audit(20_000, no_method).flag == "warn"
    assert audit(None, CLEAN).flag == "veto"
    assert missing_fields(no_method) == ["payment_method"]


def test_vague_wording_in_the_deadline_is_vetoed_elsewhere_warned() -> None:
    vague_deadline = ("deadline: as soon as possible", *CLEAN[1:])
    assert audit(20_000, vague_deadline).flag == "veto"
    vague_method = (CLEAN[0], "payment_method: by a method to be agreed", *CLEAN[2:])
    assert audit(20_000, vague_method).flag == "warn"


_CLAUSE_POOL = (
    *CLEAN,
    *DEFAULT_CLAUSES["zh"].values(),
    "liability: liquidated damages of 2,000 for late payment",
    "deadline: as soon as possible",
    "confidentiality: the parties waive all statutory rights",
    "no colon at all",
    "Payment_Method: bank transfer",
)


@given(
    amount=st.one_of(st.none(), st.floats(min_value=0, max_value=1e6, allow_nan=False)),
    clauses=st.lists(st.sampled_from(_CLAUSE_POOL), max_size=8).map(tuple),
    language=st.sampled_from(["en", "zh"]),
)
def test_a_remembered_audit_is_the_audit_worked_out_afresh(
    amount: float | None, clauses: tuple[str, ...], language: str
) -> None:
    """The planner audits the same drafts thousands of times, so audits are memoised:
    what comes back from the memo is exactly what the rules give."""
    fresh = audit.__wrapped__(amount, clauses, language)
    assert audit(amount, clauses, language) == fresh
    assert audit(amount, clauses, language) == fresh  # the second time, from the memo
    assert [clause_field(c) for c in clauses] == [clause_field.__wrapped__(c) for c in clauses]
    for c in clauses:
        assert clause_violations(c, amount) == list(_clause_violations.__wrapped__(c, amount))
