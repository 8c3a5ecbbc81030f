"""How satisfied rule parties can be at all: the structural range of AgentMediation's
Sat column when every party is a rule party.

A rule party's satisfaction is fixed by the proposal alone (`satisfaction_band`: where the
package sits between its fallback and its best package, in five bands; an infeasible one
is "very low"), and it rejects any package below its fallback or with an option it cannot
accept. So over the packages of a case there is a least and a greatest total of the
parties' levels, and a narrower range over the packages no party rejects, the only ones a
mediation can succeed with. A Sat column near the bottom may be the case's structure, not
the mediator: this range says which.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from disputelab.agents.parties.rule_policy.choice import TOLERANCE
from disputelab.agents.utility import preference_table
from disputelab.episode import SATISFACTION
from disputelab.scenario.schema import Scenario

TOP = len(SATISFACTION) - 1  # the highest level, "very high"


@dataclass(frozen=True)
class SatisfactionRange:
    """Sums over a case's parties of their levels (0-4): the least and greatest over
    every package, and over the packages no party rejects (NaN when every package is
    rejected by someone)."""

    parties: int
    lowest: float
    highest: float
    unrejected_lowest: float
    unrejected_highest: float


def band_levels(
    worth: npt.NDArray[np.float64], floor: float, feasible: npt.NDArray[np.bool_]
) -> npt.NDArray[np.float64]:
    """`satisfaction_band`'s level (0-4) for many packages at once."""
    gain = (worth - floor) / (1.0 - floor)
    levels = np.clip(np.trunc(gain * len(SATISFACTION)), 0, TOP)
    return np.where(feasible, levels, 0.0)


def satisfaction_range(scenario: Scenario) -> SatisfactionRange | None:
    """The range for rule parties on `scenario`; None when its parties cannot be rule
    parties (no topics, or a party without preferences on some topic)."""
    if not scenario.topics or not scenario.parties:
        return None
    try:
        tables = [preference_table(scenario, p) for p in scenario.parties]
    except (KeyError, ValueError):
        return None
    total = np.zeros(len(tables[0].utility))
    unrejected = np.ones(len(tables[0].utility), dtype=bool)
    for party, t in zip(scenario.parties, tables, strict=True):
        floor = party.fallback.utility
        total += band_levels(t.utility, floor, t.feasible)
        unrejected &= t.feasible & (t.utility >= floor - TOLERANCE)
    kept = total[unrejected]
    return SatisfactionRange(
        len(tables),
        float(total.min()),
        float(total.max()),
        float(kept.min()) if kept.size else math.nan,
        float(kept.max()) if kept.size else math.nan,
    )
