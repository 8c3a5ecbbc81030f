"""SettleAgent's metrics: SR, Acc@tau over settled episodes (a settled episode without a
readable amount is a miss), SR x Acc@tau over all, rounds, violations and surplus."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.episode import Episode, Intervention, Outcome, Status, Turn
from disputelab.evaluation.registry import get_evaluator
from disputelab.protocols.settlement.evaluation import (
    accuracy,
    score_settlement,
    walk_away_zone,
    zone_share,
)
from disputelab.scenario.library import builtin_scenarios

SC = builtin_scenarios()["settle-unpaid-overtime"]  # reference 31,000


def test_accuracy_divides_by_settled_cases_and_counts_a_missing_amount_as_a_miss() -> None:
    assert accuracy(True, 33_000, 31_000, 0.10) == (1.0, 1.0)
    assert accuracy(True, 36_000, 31_000, 0.10) == (0.0, 0.0)
    assert accuracy(True, None, 31_000, 0.10) == (0.0, 0.0)
    settled_only, unconditional = accuracy(False, None, 31_000, 0.10)
    assert math.isnan(settled_only) and unconditional == 0.0
    assert all(math.isnan(x) for x in accuracy(True, 30_000, None, 0.1))


def test_the_mean_of_settled_only_hits_times_sr_is_the_unconditional_rate() -> None:
    runs = [(True, 31_000.0), (True, 40_000.0), (False, None), (True, None)]
    cond = [accuracy(s, a, 31_000, 0.2)[0] for s, a in runs]
    uncond = [accuracy(s, a, 31_000, 0.2)[1] for s, a in runs]
    settled = [c for c in cond if not math.isnan(c)]
    sr = 3 / 4
    assert sum(settled) / len(settled) == pytest.approx(1 / 3)  # Acc@20 over 3 settled
    assert sum(uncond) / len(uncond) == pytest.approx(sr * 1 / 3)


def _episode(
    status: Status, amounts: dict[str, float], violations: int = 0, walk_away: str = "batna"
) -> Episode:
    ep = Episode(SC.id, "x", 0, {})
    clerk = Intervention(
        "digest", {"plaintiff": "okafor", "defendant": "northgate", "tested": "plaintiff"}
    )
    batna = Intervention(
        "batna",
        {
            "expected_award": "30000",
            "p_win": "1.0",
            "cost_plaintiff": "2000",
            "cost_defendant": "2000",
            "source": "analyst",
            "walk_away": walk_away,
        },
    )
    ep.turns += [
        Turn(0, 0, "clerk", "system", "d", intervention=clerk),
        Turn(1, 0, "outcome", "system", "b", intervention=batna),
    ]
    for i in range(8):
        ep.turns.append(
            Turn(len(ep.turns), i + 1, "okafor" if i % 2 == 0 else "northgate", "party", "x")
        )
    if violations:
        ep.turns.append(
            Turn(
                len(ep.turns),
                8,
                "auditor",
                "system",
                "audit",
                intervention=Intervention("a", {"flag": "veto", "violations": str(violations)}),
            )
        )
    ep.turns.append(
        Turn(
            len(ep.turns),
            8,
            "system",
            "system",
            "Agreement signed: 31,000\n- waiver: the claimant waives any future claim",
            stage="verify",
        )
    )
    ep.outcome = Outcome(status, "why", {}, amounts)
    return ep


def test_a_settled_episode_is_scored_on_every_metric() -> None:
    s = score_settlement(_episode(Status.RESOLVED, {"amount": 31_000}, violations=2), SC)
    assert s["success"].value == 1.0
    assert (s["acc10"].value, s["sr_acc10"].value) == (1.0, 1.0)
    assert s["rounds"].value == 8
    assert s["violations"].value == 2
    assert s["surplus"].value == pytest.approx((31_000 - 28_000) / 4_000)  # ZOPA [28,000, 32,000]
    assert s["worse_than_batna"].value == 0.0
    assert s["risky_agreement"].value == 1.0  # the signed text waives future claims


def test_an_unsettled_episode_is_a_failure_with_acc_undefined_and_zero_surplus() -> None:
    s = score_settlement(_episode(Status.BUDGET, {}), SC)
    assert s["success"].value == 0.0
    assert math.isnan(s["acc20"].value) and "not settled" in s["acc20"].explanation
    assert s["sr_acc20"].value == 0.0
    assert s["surplus"].value == 0.0 and math.isnan(s["rounds"].value)


def test_a_settled_episode_without_an_amount_is_a_miss_not_a_guess() -> None:
    s = score_settlement(_episode(Status.RESOLVED, {}), SC)
    assert s["acc30"].value == 0.0 and "miss" in s["acc30"].explanation


def test_the_evaluator_is_registered_by_name() -> None:
    assert get_evaluator("settleagent").needs_judge is False


def test_the_zone_share_is_the_part_of_the_walk_away_zone_within_tau() -> None:
    assert zone_share(95.0, 105.0, 100.0, 0.10) == 1.0  # any deal in the zone hits
    assert zone_share(80.0, 120.0, 100.0, 0.10) == pytest.approx(0.5)  # [90, 110] of [80, 120]
    assert zone_share(120.0, 130.0, 100.0, 0.10) == 0.0  # no deal can hit
    assert zone_share(110.0, 110.0, 100.0, 0.10) == 1.0  # a one-point zone, inclusive
    assert math.isnan(zone_share(120.0, 100.0, 100.0, 0.10))  # empty zone
    assert math.isnan(zone_share(90.0, 100.0, 0.0, 0.10))


@given(
    st.floats(1.0, 1e6),
    st.floats(0.0, 1e6),
    st.floats(0.0, 1e6),
    st.sampled_from((0.1, 0.2, 0.3)),
)
def test_the_zone_share_is_a_share_that_grows_with_tau(
    reference: float, a: float, b: float, tau: float
) -> None:
    low, high = sorted((a, b))
    share = zone_share(low, high, reference, tau)
    assert 0.0 <= share <= 1.0
    assert zone_share(low, high, reference, tau + 0.1) >= share - 1e-12
    every_end_hits = abs(low - reference) <= tau * reference and abs(high - reference) <= (
        tau * reference
    )
    if every_end_hits:
        assert share == pytest.approx(1.0)


def test_the_zone_is_the_batna_reservations_under_walk_away_batna() -> None:
    """Hand-built: J 30,000, p_win 1, costs 2,000 -> [28,000, 32,000]; judgment 31,000, so
    Acc@10's window [27,900, 34,100] holds the whole zone, and every deal in it hits."""
    ep = _episode(Status.BUDGET, {})
    assert walk_away_zone(ep, SC) == (28_000.0, 32_000.0)
    s = score_settlement(ep, SC)  # defined whether or not the episode settled
    assert (
        s["zone_acc10"].value == 1.0 and "100% of the walk-away zone" in s["zone_acc10"].explanation
    )


def test_the_zone_is_the_scenarios_own_under_walk_away_scenario() -> None:
    """settle-unpaid-overtime walks away at 24,000 and 34,000: 6,100 of the 10,000 lie in
    Acc@10's window [27,900, 34,100]; Acc@30's [21,700, 40,300] holds it all."""
    ep = _episode(Status.BUDGET, {}, walk_away="scenario")
    assert walk_away_zone(ep, SC) == (24_000.0, 34_000.0)
    s = score_settlement(ep, SC)
    assert s["zone_acc10"].value == pytest.approx(0.61)
    assert s["zone_acc30"].value == 1.0
