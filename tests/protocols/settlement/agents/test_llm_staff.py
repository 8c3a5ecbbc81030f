"""The checks on a model analyst's reply: a BATNA in range always opens a zone of
agreement in which both sides' normalised surplus lies in [0, 1]; one out of range is
refused, naming the value."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.protocols.settlement.agents.llm_staff import BatnaReply, checked_batna
from disputelab.protocols.settlement.agents.model import normalised_surplus
from disputelab.protocols.settlement.agents.staff import CaseView

CASE = CaseView("en", "GBP", "digest", (), claim=41_000.0, admitted=18_000.0)


@st.composite
def replies_in_range(draw: st.DrawFn) -> BatnaReply:
    j = draw(st.floats(CASE.admitted, CASE.claim))
    return BatnaReply(
        expected_award=j,
        p_win=draw(st.floats(0.01, 1.0)),
        cost_plaintiff=draw(st.floats(0.0, j)),
        cost_defendant=draw(st.floats(0.0, j)),
    )


@given(replies_in_range(), st.floats(0.0, 1.0))
def test_a_batna_in_range_bounds_surplus_inside_its_zone(reply: BatnaReply, at: float) -> None:
    batna = checked_batna(reply, CASE)
    zone = batna.zopa()
    assert zone is not None and batna.source == "model"
    amount = zone[0] + at * (zone[1] - zone[0])
    for side in ("plaintiff", "defendant"):
        assert -1e-9 <= normalised_surplus(amount, side, batna) <= 1 + 1e-9


@given(st.floats(0.0, 1e7).filter(lambda j: not CASE.admitted <= j <= CASE.claim))
def test_an_award_outside_the_claim_and_the_admitted_amount_is_refused(j: float) -> None:
    reply = BatnaReply(expected_award=j, p_win=0.5, cost_plaintiff=0.0, cost_defendant=0.0)
    with pytest.raises(ValueError, match="expected_award"):
        checked_batna(reply, CASE)


@pytest.mark.parametrize(
    ("field", "value"),
    [("p_win", 0.0), ("p_win", 1.2), ("cost_defendant", -1.0), ("cost_plaintiff", 30_001.0)],
)
def test_a_chance_or_cost_out_of_range_is_refused(field: str, value: float) -> None:
    values = {"expected_award": 30_000.0, "p_win": 0.5, "cost_plaintiff": 0.0}
    reply = BatnaReply.model_validate({"cost_defendant": 0.0, **values, field: value})
    with pytest.raises(ValueError, match=field):
        checked_batna(reply, CASE)


def test_a_non_finite_number_is_refused() -> None:
    reply = BatnaReply(
        expected_award=float("nan"), p_win=0.5, cost_plaintiff=0.0, cost_defendant=0.0
    )
    with pytest.raises(ValueError, match="finite"):
        checked_batna(reply, CASE)
