"""The tables' CI is chosen from a coverage simulation: the cluster t interval, printed
from as many clusters as it needs to cover the truth about as often as it says."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from disputelab.evaluation.inference import MIN_CLUSTERS, cluster_ci, cluster_t_ci
from disputelab.tables.coverage import (
    SETTINGS,
    TOLERANCE,
    coverage,
    coverage_markdown,
    coverage_table,
    reaches_from,
    t_bounds,
)

CLUSTERED = st.lists(
    st.lists(st.floats(-100, 100, allow_nan=False), min_size=1, max_size=6),
    min_size=2,
    max_size=8,
)


@given(CLUSTERED)
def test_the_simulated_t_interval_is_the_one_the_tables_print(groups: list[list[float]]) -> None:
    values = [x for g in groups for x in g]
    labels = [i for i, g in enumerate(groups) for _ in g]
    est = cluster_t_ci(values, labels)
    sums = np.array([[sum(g) for g in groups]])
    counts = np.array([[float(len(g)) for g in groups]])
    low, high = t_bounds(sums, counts)
    assert (est.low, est.high) == pytest.approx((low[0], high[0]), abs=1e-6)


@settings(max_examples=50)
@given(st.lists(st.floats(-10, 10, allow_nan=False), min_size=2, max_size=10), st.integers(1, 4))
def test_with_equal_clusters_it_is_the_t_interval_on_cluster_means(
    means: list[float], size: int
) -> None:
    spread = np.linspace(-1, 1, size) if size > 1 else [0.0]  # sums to 0: keeps the mean
    values = [m + d for m in means for d in spread]
    labels = [i for i in range(len(means)) for _ in range(size)]
    est = cluster_t_ci(values, labels)
    if np.std(means) == 0:
        return  # scipy's interval is NaN without spread; ours is the point
    low, high = stats.t.interval(0.95, len(means) - 1, np.mean(means), stats.sem(means))
    assert (est.low, est.high) == pytest.approx((low, high), rel=1e-6, abs=1e-9)


def test_the_threshold_is_the_one_the_simulation_chooses() -> None:
    table = coverage_table(methods=("t",))
    assert reaches_from(table, "t") == MIN_CLUSTERS
    # Below the threshold some setting falls short; from it on, none that decides does.
    below = [table[(s.name, MIN_CLUSTERS - 1)]["t"] for s in SETTINGS if s.decides]
    assert min(below) < TOLERANCE
    assert "t from 5 clusters" in coverage_markdown(table)


def test_the_percentile_bootstrap_is_too_narrow_with_few_clusters() -> None:
    normal = SETTINGS[0]
    assert coverage(normal, 3, "bootstrap", sets=400, seed=0) < 0.85
    assert coverage(normal, 3, "t", sets=4000, seed=0) >= TOLERANCE


def test_below_the_threshold_a_mean_has_no_interval() -> None:
    labels = [i for i in range(MIN_CLUSTERS) for _ in range(2)]
    values = [float(i % 3) + 0.5 * (j % 2) for j, i in enumerate(labels)]
    assert cluster_ci(values, labels).has_interval
    few = [(v, c) for v, c in zip(values, labels, strict=True) if c < MIN_CLUSTERS - 1]
    est = cluster_ci([v for v, _ in few], [c for _, c in few])
    assert not est.has_interval and est.clusters == MIN_CLUSTERS - 1
    assert not math.isnan(est.mean)
