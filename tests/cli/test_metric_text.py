"""Metric cells read as numbers a researcher would write."""

from __future__ import annotations

import pytest

from disputelab.cli.common import metric_text


@pytest.mark.parametrize(
    ("value", "text"),
    [(4600.0, "4,600"), (26457.35, "26,457"), (0.573, "0.573"), (100.0, "100"), (12.345, "12.3")],
)
def test_amounts_are_written_out_and_small_values_keep_three_digits(
    value: float, text: str
) -> None:
    assert metric_text(value) == text
