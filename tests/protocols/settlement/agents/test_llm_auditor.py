"""The model auditor's verdicts: one per clause or refused, and the audit they make,
applied as the rule auditor's (revisions taken, unverifiable clauses struck, missing
essentials filled and, when the amount or the deadline is missing, a veto)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.protocols.settlement.agents.auditor import clause_field
from disputelab.protocols.settlement.agents.llm_auditor import (
    AuditReply,
    ClauseVerdict,
    checked_verdicts,
    judged_audit,
)

CLAUSES = (
    "deadline: when business permits",
    "payment_method: bank transfer",
    "liability: statutory interest on late payment",
    "enforcement: court confirmation",
    "a third party shall guarantee the payment",
)


def _reply(*verdicts: tuple[int, str, str]) -> AuditReply:
    return AuditReply(
        verdicts=[ClauseVerdict(clause=i, verdict=v, revised=r) for i, v, r in verdicts]  # type: ignore[arg-type]
    )


def test_every_clause_needs_exactly_one_verdict() -> None:
    with pytest.raises(ValueError, match="no verdict for clause 2"):
        checked_verdicts(_reply((1, "ok", "")), CLAUSES[:2])
    with pytest.raises(ValueError, match="clause 1 has two verdicts"):
        checked_verdicts(_reply((1, "ok", ""), (1, "ok", ""), (2, "ok", "")), CLAUSES[:2])
    with pytest.raises(ValueError, match="clause 3 is not one of"):
        checked_verdicts(_reply((1, "ok", ""), (3, "ok", "")), CLAUSES[:2])


def test_a_revision_must_differ_and_keep_its_field() -> None:
    with pytest.raises(ValueError, match="keep the field 'deadline"):
        checked_verdicts(_reply((1, "revise", "payment_method: cash")), CLAUSES[:1])
    with pytest.raises(ValueError, match="differs"):
        checked_verdicts(_reply((1, "revise", CLAUSES[0])), CLAUSES[:1])


def test_the_verdicts_make_the_revised_draft() -> None:
    revised = "deadline: within 30 days of signing"
    verdicts = checked_verdicts(
        _reply(
            (5, "unverifiable", ""), (1, "revise", revised), *((i, "ok", "") for i in (2, 3, 4))
        ),
        CLAUSES,
    )
    report = judged_audit(30_000.0, CLAUSES, verdicts, "en")
    assert report.flag == "warn"
    assert report.revised == (revised, *CLAUSES[1:4])
    assert [n.split(" ", 2)[2][:6] for n in report.notes] == ["revise", "ok", "ok", "ok", "unveri"]


def test_a_draft_without_an_amount_or_deadline_is_vetoed_whatever_the_model_says() -> None:
    ok = checked_verdicts(_reply((1, "ok", "")), CLAUSES[1:2])
    assert judged_audit(30_000.0, CLAUSES[1:2], ok, "en").flag == "veto"  # no deadline
    ok = checked_verdicts(_reply(*((i, "ok", "") for i in range(1, 5))), CLAUSES[:4])
    assert judged_audit(None, CLAUSES[:4], ok, "en").flag == "veto"  # no amount
    assert judged_audit(30_000.0, CLAUSES[:4], ok, "en").flag == "pass"


@given(st.lists(st.sampled_from(["ok", "revise", "unverifiable"]), min_size=4, max_size=4))
def test_any_verdicts_keep_every_essential_field_in_the_revised_draft(picks: list[str]) -> None:
    given_verdicts = [
        (i, v, f"{clause_field(c)}: revised text {i}" if v == "revise" else "")
        for i, (v, c) in enumerate(zip(picks, CLAUSES[:4], strict=True), 1)
    ]
    verdicts = checked_verdicts(_reply(*given_verdicts), CLAUSES[:4])
    report = judged_audit(30_000.0, CLAUSES[:4], verdicts, "en")
    fields = {clause_field(c) for c in report.revised}
    assert {"deadline", "payment_method", "liability", "enforcement"} <= fields
    assert report.flag == ("pass" if set(picks) == {"ok"} else "warn")
    struck = {c for c, v in zip(CLAUSES, picks, strict=False) if v != "ok"}
    assert not struck & set(report.revised)
