"""Krippendorff's alpha: the agreement of any number of coders on units, with ratings
missing anywhere, at the nominal, ordinal or interval level of measurement.

The computation follows the coincidence-matrix form of Krippendorff, "Computing
Krippendorff's Alpha-Reliability" (2011, https://repository.upenn.edu/asc_papers/43/):
alpha = 1 - D_o / D_e, observed over expected disagreement among pairable values.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

__all__ = ["LEVELS", "Level", "krippendorff_alpha"]

Level = Literal["nominal", "ordinal", "interval"]
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval")


def _pairable(units: Sequence[Sequence[Hashable | None]]) -> list[list[Hashable]]:
    """Each unit's present values, keeping only units two or more coders rated (a
    lone value has nothing to agree with)."""
    kept = [[v for v in unit if v is not None] for unit in units]
    return [values for values in kept if len(values) >= 2]


def _coincidences(units: list[list[Hashable]], values: list[Hashable]) -> NDArray[np.float64]:
    """The coincidence matrix o[c, k]: each ordered pair of values from different coders
    of one unit, weighted 1 / (m_u - 1) for a unit of m_u values."""
    index = {v: i for i, v in enumerate(values)}
    matrix = np.zeros((len(values), len(values)))
    for unit in units:
        counts = np.zeros(len(values))
        for v in unit:
            counts[index[v]] += 1
        pairs = np.outer(counts, counts) - np.diag(counts)
        matrix += pairs / (len(unit) - 1)
    return matrix


def _distances(
    values: list[Hashable], marginals: NDArray[np.float64], level: Level
) -> NDArray[np.float64]:
    """The squared difference delta^2(c, k) of every two values at `level`."""
    size = len(values)
    if level == "nominal":
        return 1.0 - np.eye(size)
    if level == "interval":
        points = np.array([float(v) for v in values])  # type: ignore[arg-type]
        squared: NDArray[np.float64] = np.subtract.outer(points, points) ** 2
        return squared
    # Ordinal: the marginal mass between two ranks, less half of the two ends.
    cumulative = np.concatenate(([0.0], np.cumsum(marginals)))
    low, high = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    first, last = np.minimum(low, high), np.maximum(low, high)
    between = cumulative[last + 1] - cumulative[first]
    ordinal: NDArray[np.float64] = (between - (marginals[low] + marginals[high]) / 2) ** 2
    return ordinal


def krippendorff_alpha(
    units: Sequence[Sequence[Hashable | None]], level: Level = "nominal"
) -> float:
    """Krippendorff's alpha of `units`, each the values its coders gave (None where a
    coder gave none), at `level`. Ordinal and interval values must sort (interval ones be
    numbers). NaN when there is no expected disagreement to compare with (fewer than two
    pairable values, or every one the same). ValueError for an unknown level."""
    if level not in LEVELS:
        raise ValueError(f"unknown level {level!r}; available: {', '.join(LEVELS)}")
    pairable = _pairable(units)
    values = sorted({v for unit in pairable for v in unit}, key=_order(level))
    if len(values) < 2:
        return math.nan
    matrix = _coincidences(pairable, values)
    marginals = matrix.sum(axis=1)
    total = marginals.sum()
    delta = _distances(values, marginals, level)
    observed = float((matrix * delta).sum())
    expected = float((np.outer(marginals, marginals) * delta).sum()) / (total - 1)
    if expected == 0:
        return math.nan
    return float(1.0 - observed / expected)


def _order(level: Level) -> Callable[[Any], Any]:
    """The sort key of values: their own order where the level has one, else their
    text (nominal values need only be told apart, but sorted for a stable matrix)."""
    if level == "nominal":
        return lambda v: (type(v).__name__, repr(v))
    return lambda v: v
