"""The money model: BATNA and reservation values, concession curves, the value function's
components and Acc@tau's hit test, on hand-worked numbers."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.protocols.settlement.agents.model import (
    Batna,
    Components,
    Weights,
    concession_fraction,
    curve_offer,
    m_comp,
    m_fair,
    m_settle,
    m_surplus,
    normalised_surplus,
    value,
    within,
    worse_than_batna,
)

# J = 100,000, p_win = 0.8, costs 8,000 each: r_p = 72,000, r_d = 88,000, ZOPA width 16,000.
B = Batna(100_000, 0.8, 8_000, 8_000)


def test_reservations_are_the_expected_judgment_less_or_plus_each_sides_cost() -> None:
    assert B.expected_judgment == 80_000
    assert B.reservation("plaintiff") == 72_000
    assert B.reservation("defendant") == 88_000
    assert B.zopa() == (72_000, 88_000)
    assert B.width() == 16_000


def test_a_zopa_is_empty_when_the_plaintiff_needs_more_than_the_defendant_will_pay() -> None:
    assert Batna(100_000, 0.8, -10_000, -10_000).zopa() is None


def test_surplus_is_signed_by_side_and_worse_than_batna_is_below_the_reservation() -> None:
    assert normalised_surplus(80_000, "plaintiff", B) == pytest.approx(0.5)
    assert normalised_surplus(80_000, "defendant", B) == pytest.approx(0.5)
    assert worse_than_batna(70_000, "plaintiff", B)
    assert not worse_than_batna(70_000, "defendant", B)
    assert worse_than_batna(90_000, "defendant", B)


def test_boulware_concedes_less_than_linear_which_concedes_less_than_a_conceder() -> None:
    mid = [concession_fraction(0.5, e) for e in (0.35, 1.0, 2.5)]
    assert mid[0] < mid[1] < mid[2]
    assert mid[1] == pytest.approx(0.5)
    for e in (0.35, 1.0, 2.5):
        assert concession_fraction(0.0, e) == 0.0
        assert concession_fraction(1.0, e) == 1.0


def test_a_curve_runs_from_target_to_reservation() -> None:
    assert curve_offer(50_000, 30_000, 0.0, 1.0) == 50_000
    assert curve_offer(50_000, 30_000, 0.5, 1.0) == 40_000
    assert curve_offer(50_000, 30_000, 1.0, 1.0) == 30_000
    with pytest.raises(ValueError):
        concession_fraction(0.5, 0.0)


def test_m_settle_is_one_on_agreement_else_the_share_of_the_gap_closed() -> None:
    assert m_settle(True, 10_000, 10_000) == 1.0
    assert m_settle(False, 10_000, 2_500) == 0.75
    assert m_settle(False, 10_000, 12_000) == 0.0  # the gap widened: clipped at 0


def test_m_surplus_is_clipped_and_zero_without_agreement() -> None:
    assert m_surplus(None, "plaintiff", B) == 0.0
    assert m_surplus(80_000, "plaintiff", B) == pytest.approx(0.5)
    assert m_surplus(95_000, "plaintiff", B) == 1.0
    assert m_surplus(60_000, "plaintiff", B) == 0.0


def test_m_fair_punishes_pushing_the_vulnerable_side_below_its_batna() -> None:
    balanced = m_fair(80_000, B, "plaintiff")
    assert balanced == pytest.approx(1.0)  # equal surpluses, nobody below BATNA
    below = m_fair(70_000, B, "plaintiff")  # plaintiff below r_p: protection 0, balance 0
    assert below == pytest.approx(0.0)
    lopsided = m_fair(86_000, B, None)  # surpluses 14,000 and 2,000: balance 1 - 12/16
    assert lopsided == pytest.approx((1 + 0.25) / 2)
    assert m_fair(None, B, "plaintiff") == 1.0


def test_m_comp_follows_the_auditors_flag() -> None:
    assert (m_comp("pass"), m_comp("warn"), m_comp("veto")) == (1.0, 0.5, 0.0)


def test_the_value_is_the_weighted_sum_with_weights_normalised() -> None:
    m = Components(1.0, 0.5, 0.0, 1.0)
    assert value(m, Weights()) == pytest.approx(0.625)
    assert value(m, Weights(2, 0, 0, 0)) == pytest.approx(1.0)  # settle only
    assert value(m, Weights(0, 1, 1, 0)) == pytest.approx(0.25)
    with pytest.raises(ValueError):
        Weights(0, 0, 0, 0).normalised()
    with pytest.raises(ValueError):
        Weights(-1, 1, 1, 1).normalised()


unit = st.floats(0, 1)


@given(
    unit,
    unit,
    unit,
    unit,
    st.floats(0, 10),
    st.floats(0, 10),
    st.floats(0, 10),
    st.floats(0.01, 10),
)
def test_the_value_stays_on_the_unit_interval(a, b, c, d, w1, w2, w3, w4) -> None:  # type: ignore[no-untyped-def]
    v = value(Components(a, b, c, d), Weights(w1, w2, w3, w4))
    assert -1e-9 <= v <= 1 + 1e-9


def test_acc_tau_is_relative_to_the_reference_and_inclusive() -> None:
    assert within(110, 100, 0.10)
    assert within(90, 100, 0.10)
    assert not within(110.5, 100, 0.10)
    assert not math.isnan(float(within(0, 100, 0.3)))
