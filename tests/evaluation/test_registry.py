"""Evaluators are registered by name, versioned, and say when they need a judge."""

from __future__ import annotations

import asyncio

import pytest

from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.registry import (
    EVALUATORS,
    EpisodeToScore,
    Evaluator,
    ScoringContext,
    get_evaluator,
    on_demand_evaluators,
    register_evaluator,
)
from disputelab.protocols.base import PROTOCOLS
from disputelab.registry import UnknownPluginError
from tests.helpers import play, scenario


def test_every_evaluator_has_a_version_and_a_description() -> None:
    for name, ev in EVALUATORS.items():
        assert ev.name == name and ev.version and ev.description


def test_every_protocol_names_registered_evaluators() -> None:
    for _, protocol in PROTOCOLS.items():
        for name in protocol.evaluators:
            assert name in EVALUATORS


def test_the_listed_evaluators_are_the_ones_evaluate_and_specs_accept() -> None:
    # The shared ones first, then each protocol's in the order the protocols register.
    assert on_demand_evaluators()[:4] == ("oracle", "self-report", "topic-localized", "per-turn")
    assert set(on_demand_evaluators()) == {
        "oracle",
        "self-report",
        "topic-localized",
        "per-turn",
        "promediate",
        "points-rouge",
        "turn-taking",
        "outcome-judges",
        "mediator-intelligence",
        "legal-judges",
        "points-bertscore",
        "negotiation-reward",
    }


def test_which_evaluators_need_a_judge() -> None:
    assert not get_evaluator("self-report").requires_judge({})
    assert get_evaluator("topic-localized").requires_judge({})
    assert get_evaluator("outcome-judges").requires_judge({})
    promediate = get_evaluator("promediate")
    assert not promediate.requires_judge({"tracker": "oracle"})
    assert promediate.requires_judge({"tracker": "per-turn"})


def test_scores_are_filed_under_a_name_that_says_how_they_were_made() -> None:
    assert get_evaluator("self-report").stored_name({"tracker": "oracle"}) == "tracker:self-report"
    assert get_evaluator("promediate").stored_name({"tracker": "oracle"}) == "promediate:oracle"
    assert get_evaluator("socrates-oracle").stored_name({}) == "socrates-oracle"


def test_an_unknown_or_duplicate_name_is_an_error() -> None:
    with pytest.raises(UnknownPluginError, match="unknown evaluator 'vibes'; available: "):
        get_evaluator("vibes")

    async def nothing(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
        return {}

    with pytest.raises(ValueError, match="already registered"):
        register_evaluator(Evaluator("self-report", "9", "again", nothing))


def test_a_tracker_evaluator_scores_an_episode_against_its_twin() -> None:
    s = scenario("tenancy")
    twin, mediated = play(s, "none", seed=1, budget=30), play(s, "rule", seed=1, budget=30)
    item = EpisodeToScore(mediated, s, twin, "m", "u")
    scores = asyncio.run(get_evaluator("oracle").score(item, ScoringContext()))
    assert scores["final_consensus"].defined
    assert scores["consensus_gain"].defined
    assert scores["judge_calls"].value == 0.0
