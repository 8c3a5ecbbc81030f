"""The reward of a price negotiation: normalisation, Eq. 2 on hand-computed cases, and
the evaluator's two sources of trust and relationship (a judge, or the rule buyer)."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.episode import Episode
from disputelab.evaluation.registry import EpisodeToScore, ScoringContext, get_evaluator
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.protocols.bilateral.evaluation import normalised_price, reward, score
from disputelab.protocols.bilateral.remediation.simulate import Cast, exactly, play_once
from tests.helpers import scenario


def test_the_paper_example_normalises_37_between_30_and_50_to_035() -> None:
    assert normalised_price(37, 30, 50) == pytest.approx(0.35)


def test_a_price_outside_the_openings_is_clipped_and_no_deal_is_zero() -> None:
    assert normalised_price(55, 30, 50) == 1.0
    assert normalised_price(20, 30, 50) == 0.0
    assert normalised_price(None, 30, 50) == 0.0
    with pytest.raises(ValueError, match="empty"):
        normalised_price(40, 50, 50)


def test_the_paper_example_scores_0545_with_trust_and_relationship_deepened() -> None:
    # A.8: deal at $37, both relational judgements deepened: 0.7 x 0.35 + 0.1 + 0.1 + 0.1.
    assert reward(0.35, True, 1, 1) == pytest.approx(0.545)


def test_no_deal_costs_the_deal_term_twice_over_a_deal() -> None:
    assert reward(0.0, False, 0, 0) == pytest.approx(-0.1)
    assert reward(0.0, True, 0, 0) - reward(0.0, False, 0, 0) == pytest.approx(0.2)
    assert reward(0.0, False, -1, -1) == pytest.approx(-0.3)


def test_relational_changes_must_be_minus_one_zero_or_one() -> None:
    with pytest.raises(ValueError, match="trust"):
        reward(0.5, True, 2, 0)


@given(st.floats(0, 1), st.booleans(), st.sampled_from([-1, 0, 1]), st.sampled_from([-1, 0, 1]))
def test_the_reward_stays_within_minus_03_and_1(v: float, deal: bool, t: int, r: int) -> None:
    assert -0.3 - 1e-12 <= reward(v, deal, t, r) <= 1.0 + 1e-12


@given(st.floats(0, 1), st.floats(0, 1), st.booleans())
def test_the_reward_rises_with_the_price_at_weight_07(a: float, b: float, deal: bool) -> None:
    assert reward(a, deal, 0, 0) - reward(b, deal, 0, 0) == pytest.approx(0.7 * (a - b))


def _episode(seed: int = 3) -> Episode:
    """A rule episode of product-sale with the zero-shot remediator."""
    return asyncio.run(play_once(scenario("product-sale"), seed, exactly(()), Cast()))


def test_offline_trust_and_relationship_come_from_the_rule_buyer_and_say_so() -> None:
    ep = _episode()
    scores = asyncio.run(score(EpisodeToScore(ep, scenario("product-sale")), ScoringContext()))
    assert "rule buyer's hidden state" in scores["trust_change"].explanation
    assert scores["trust_change"].value in (-1.0, 0.0, 1.0)
    d = scores["reward"].detail
    expected = reward(d["v_price"], d["deal"], d["trust"], d["relationship"])
    assert scores["reward"].value == pytest.approx(expected)
    assert scores["deal"].value == float(ep.outcome is not None and bool(ep.outcome.amounts))


def _judge(body: dict[str, Any]) -> Scripted:
    reply = {"reasoning": "polite", "trust": "deepened", "relationship": "not involved"}
    return Scripted(content=json.dumps(reply))


def test_with_a_judge_the_relational_terms_are_judged_and_not_involved_counts_as_zero(
    tmp_path: Path,
) -> None:
    ep = _episode()
    sc = scenario("product-sale")

    async def judged() -> Any:
        hub = ModelHub(tmp_path / "cache.sqlite")
        with fake_openai(_judge) as server:
            judge = hub.model(f"openai:j@{server.url}", "judge")
            try:
                return await get_evaluator("negotiation-reward").score(
                    EpisodeToScore(ep, sc), ScoringContext([judge])
                ), server.requests
            finally:
                await hub.aclose()

    scores, requests = asyncio.run(judged())
    assert scores["trust_change"].value == 1.0
    assert scores["relationship_change"].value == 0.0
    assert "judged by" in scores["reward"].explanation
    # The judge reads the dialogue as the buyer heard it.
    assert "seller:" in json.dumps(requests[0]["messages"])


def test_a_scenario_without_a_price_term_scores_nan_with_a_reason() -> None:
    ep = _episode()
    scores = asyncio.run(score(EpisodeToScore(ep, scenario("tenancy")), ScoringContext()))
    assert math.isnan(scores["reward"].value)
    assert "undefined" in scores["reward"].explanation
