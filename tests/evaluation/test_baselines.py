"""The baselines a judge must beat, and a judge's skill over the best of them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from disputelab.episode import Episode, Turn
from disputelab.evaluation.baselines import lexical_overlap, skill_over
from tests.helpers import scenario


def _episodes(n: int = 8, turns: int = 10) -> tuple[list[float], list[float], list[int]]:
    """An oracle that rises with the clock plus episode-specific wiggles; the clock."""
    rng = np.random.default_rng(0)
    oracle, clock, clusters = [], [], []
    for e in range(n):
        wiggle = rng.normal(0, 0.15, turns)
        for t in range(turns):
            clock.append(t / turns)
            oracle.append(min(1.0, max(0.0, t / turns + wiggle[t])))
            clusters.append(e)
    return oracle, clock, clusters


def test_a_reader_of_the_truth_has_skill_over_the_clock_with_an_interval_above_zero() -> None:
    oracle, clock, clusters = _episodes()
    stat, best = skill_over(oracle, {"clock": clock}, oracle, clusters, "r")
    assert best == "clock"
    assert stat.value == pytest.approx(1.0 - np.corrcoef(clock, oracle)[0, 1])
    assert 0 < stat.low <= stat.value <= stat.high


def test_the_clock_itself_has_no_skill_over_the_clock() -> None:
    oracle, clock, clusters = _episodes()
    stat, _ = skill_over(clock, {"clock": clock}, oracle, clusters, "kappa")
    assert stat.value == pytest.approx(0.0) and stat.low == stat.high == pytest.approx(0.0)


def test_skill_is_measured_against_the_best_baseline() -> None:
    oracle, clock, clusters = _episodes()
    flat = [0.5] * len(oracle)  # r undefined: it cannot be the best on r
    noisy = list(np.asarray(clock) + np.random.default_rng(1).normal(0, 0.5, len(clock)))
    stat, best = skill_over(
        oracle, {"flat": flat, "noisy": noisy, "clock": clock}, oracle, clusters
    )
    assert best == "clock" and stat.value > 0
    only_flat, none = skill_over(oracle, {"flat": flat}, oracle, clusters)
    assert math.isnan(only_flat.value) and none == "" and "undefined" in only_flat.why


def _said(*lines: tuple[str, str]) -> Episode:
    """A tenancy episode of party turns only, each `(speaker, text)`."""
    turns = [
        Turn(index=i, party_turn=i + 1, speaker=who, role="party", text=text)
        for i, (who, text) in enumerate(lines)
    ]
    return Episode("tenancy", "roundtable", 0, {}, turns=turns)


def test_option_words_back_the_option_whose_label_an_utterance_names() -> None:
    tenancy = scenario("tenancy")
    episode = _said(
        ("tenant", "I need specialist damp-proofing within three weeks, and a temporary stay."),
        ("landlord", "Surface mould treatment and repainting by my handyman is what I offer."),
        ("tenant", "The weather has been awful."),  # names no option: her stance stands
        ("landlord", "All right: specialist damp-proofing, temporary stay included."),
    )
    repairs = lexical_overlap(episode, tenancy).by_topic["repairs"]
    # Nobody has named an option, then one party has, then they name different ones,
    # then the same one: apart (0) until the landlord comes round.
    assert repairs == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert set(lexical_overlap(episode, tenancy).by_topic["arrears"]) == {0.0}


def test_option_words_ignore_a_tie_between_labels() -> None:
    tenancy = scenario("tenancy")
    # "specialist" and "landlord's cost" are in both A and B: no unique option is named.
    episode = _said(("tenant", "Specialist work at the landlord's cost."),
                    ("landlord", "Specialist work at the landlord's cost."))  # fmt: skip
    assert lexical_overlap(episode, tenancy).by_topic["repairs"] == [0.0, 0.0, 0.0]
