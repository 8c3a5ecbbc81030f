"""Which stored scores a mean counts: one rule, shared by every report table and by the
sensitivity analysis, so that they agree on which episodes are in a mean and why the
others are not."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, Protocol

# Consensus gain is a normalised gain, except where the unmediated twin already reached
# full consensus and the metric falls back to the raw change: a different scale, so that
# episode is left out of every mean and test (and counted as undefined) rather than mixed in.
RAW_CHANGE = (
    "the unmediated twin was already at full consensus, so the gain is a raw change, "
    "not averaged with normalised gains"
)


class Scored(Protocol):
    """A score as stored: what `averaged_value` reads of it."""

    @property
    def metric(self) -> str: ...
    @property
    def value(self) -> float: ...
    @property
    def explanation(self) -> str: ...
    @property
    def detail(self) -> Mapping[str, Any]: ...


def averaged_value(score: Scored) -> tuple[float, str | None]:
    """The value a mean counts for a stored score, and why it is undefined (None when it
    is defined)."""
    if score.metric == "consensus_gain" and score.detail.get("rule") == "raw_change":
        return math.nan, RAW_CHANGE
    if math.isnan(score.value):
        return score.value, reason_of(score.explanation)
    return score.value, None


def reason_of(explanation: str) -> str:
    """The short reason a score is undefined, from its explanation: the same reason for
    every episode it applies to, so that a table counts them together."""
    text = explanation.strip().removeprefix("undefined:").strip().rstrip(".")
    text = re.sub(r"^all \d+ ", "all ", text)  # "all 3 intervention(s) were skipped ..."
    return text.split(", so ")[0].split(". ")[0] or "undefined"
