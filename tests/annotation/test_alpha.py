"""Krippendorff's alpha against the textbook example and its defining properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.annotation.alpha import krippendorff_alpha

_ = None
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 coders x 12 units.
CODERS = (
    (1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _),
    (1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3),
    (_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _),
    (1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _),
)
UNITS = list(zip(*CODERS, strict=True))


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_the_textbook_example(level: str, published: float) -> None:
    assert round(krippendorff_alpha(UNITS, level), 3) == published  # type: ignore[arg-type]


ratings = st.lists(
    st.lists(st.one_of(st.none(), st.integers(1, 4)), min_size=3, max_size=3),
    min_size=2,
    max_size=12,
)


@given(st.lists(st.integers(1, 5), min_size=2, max_size=10, unique=True))
def test_perfect_agreement_is_one(values: list[int]) -> None:
    for level in ("nominal", "ordinal", "interval"):
        assert krippendorff_alpha([[v, v, v] for v in values], level) == pytest.approx(1.0)  # type: ignore[arg-type]


@given(ratings)
def test_order_of_units_and_coders_does_not_matter(units: list[list[int | None]]) -> None:
    shuffled = [list(reversed(u)) for u in reversed(units)]
    a, b = krippendorff_alpha(units), krippendorff_alpha(shuffled)
    assert (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b)


@given(ratings)
def test_bounds(units: list[list[int | None]]) -> None:
    for level in ("nominal", "ordinal", "interval"):
        alpha = krippendorff_alpha(units, level)  # type: ignore[arg-type]
        assert math.isnan(alpha) or alpha <= 1.0 + 1e-9


def test_an_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown level"):
        krippendorff_alpha(UNITS, "ratio")  # type: ignore[arg-type]
