"""The baselines a judge must beat, and a judge's skill over the best of them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from disputelab.evaluation.baselines import skill_over


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
