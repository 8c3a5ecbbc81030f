"""Sat's structural range with rule parties: the least and greatest summed satisfaction
over every package, and over the packages no party rejects, checked against the rule
party's own verdicts on every package of real scenarios."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.agents.parties.rule import RuleParty, satisfaction_band
from disputelab.agents.parties.satisfaction_range import band_levels, satisfaction_range
from disputelab.episode import SATISFACTION
from tests.helpers import scenario


@given(
    st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20),
    st.floats(0.0, 0.99),
    st.lists(st.booleans(), min_size=20, max_size=20),
)
def test_band_levels_are_satisfaction_band_for_many_packages(
    worth: list[float], floor: float, feasible: list[bool]
) -> None:
    ok = feasible[: len(worth)]
    levels = band_levels(np.array(worth), floor, np.array(ok))
    expected = [
        SATISFACTION.index(satisfaction_band(w, floor, f)) for w, f in zip(worth, ok, strict=True)
    ]
    assert levels.tolist() == expected


@pytest.mark.parametrize(
    "sid", ["tenancy", "workplace", "community-centre", "family-firm-succession"]
)
def test_the_range_is_what_the_rule_parties_verdicts_reach(sid: str) -> None:
    s = scenario(sid)
    options = [[o.id for o in t.options] for t in s.topics]
    totals, unrejected = [], []
    for combo in itertools.product(*options):
        proposal = {t.id: o for t, o in zip(s.topics, combo, strict=True)}
        verdicts = [RuleParty(s, p.id, seed=0).verdict_on([], proposal).verdict for p in s.parties]
        total = sum(SATISFACTION.index(v.satisfaction) for v in verdicts if v is not None)
        totals.append(total)
        if all(v is not None and v.decision != "reject" for v in verdicts):
            unrejected.append(total)
    reach = satisfaction_range(s)
    assert reach is not None and reach.parties == len(s.parties)
    assert (reach.lowest, reach.highest) == (min(totals), max(totals))
    if unrejected:
        assert (reach.unrejected_lowest, reach.unrejected_highest) == (
            min(unrejected),
            max(unrejected),
        )
    else:
        assert math.isnan(reach.unrejected_lowest)


def test_a_case_rule_parties_cannot_play_has_no_range() -> None:
    assert satisfaction_range(scenario("salary")) is None  # an amount, no topics
