"""Which package a rule party backs: among the packages worth its target, the one the
others' stated stances support best."""

from __future__ import annotations

import bisect

import numpy as np

from disputelab.agents.parties.rule_memos import Candidates, Package
from disputelab.agents.parties.rule_policy.reading import TableReading
from disputelab.agents.utility import PreferenceTable

# Utilities equal to the target up to this much count as reaching it.
TOLERANCE = 1e-12


class PackageChoice:
    """A party's choice among its candidate packages (`Candidates`: feasible ones by
    falling utility), given its target.

    As a negotiator (`whole_range` false) it offers packages worth at most its target
    plus `offer_band`, so its offers concede as the target falls: nobody shows it where
    the others could meet. With full disclosure, or a band of 1 or more, any package
    worth the target may be offered.
    """

    __slots__ = ("_prefix_at", "cand", "deference", "offer_band", "table", "whole_range")

    def __init__(
        self,
        table: PreferenceTable,
        cand: Candidates,
        deference: float,
        offer_band: float,
        full_disclosure: bool,
    ) -> None:
        self.table = table
        self.cand = cand
        self.deference = deference  # the weight of a mediator's proposal in the support
        self.offer_band = offer_band
        self.whole_range = full_disclosure or offer_band >= 1.0
        # `prefix()` for the target it was last computed at.
        self._prefix_at: tuple[float, int] = (float("nan"), 0)

    def utility(self, pkg: Package) -> float:
        known = self.cand.utility_of.get(pkg)
        if known is not None:
            return known
        t = self.table
        return sum(t.w[j] * t.v[j][o] for j, o in enumerate(pkg))

    def worth_it(self, pkg: Package, target: float) -> bool:
        """Feasible (no unacceptable option) and worth the target. The feasible packages
        are exactly those the candidates list a utility for."""
        worth = self.cand.utility_of.get(pkg)
        return worth is not None and worth >= target - TOLERANCE

    def prefix(self, target: float) -> int:
        """How many candidate packages are worth at least `target` (at least one)."""
        at, n = self._prefix_at
        if at != target:  # asked two or three times a turn at the same target
            n = max(1, bisect.bisect_right(self.cand.utility_desc, -(target - TOLERANCE)))
            self._prefix_at = (target, n)
        return n

    def band_start(self, n: int, target: float) -> int:
        """The first of the `n` candidates in reach that it may offer: as a negotiator,
        the first worth at most target + offer band; otherwise 0."""
        if self.whole_range:
            return 0
        above = bisect.bisect_left(self.cand.utility_desc, -(target + self.offer_band))
        return min(above, n - 1)

    def best_supported(
        self, proposal: Package | None, reading: TableReading, target: float
    ) -> Package:
        """Among packages it may offer, the one best supported by what the others said
        and by the mediator's `proposal`, weighed by its own utility."""
        cand = self.cand
        n = self.prefix(target)
        lo = self.band_start(n, target)
        # A pure function of the candidates in reach, what the others said and the
        # proposal, so the answer is memoised across turns and episodes. Ties go to the
        # package worth most to this party (candidates are sorted that way).
        # What the others said enters as the ids of their readings (one id, one reading),
        # in the order they were heard, which is the order their support is summed in.
        key = (lo, n, proposal, self.deference, tuple(reading.read_ids.values()))
        known = cand.choices.get(key)
        if known is not None:
            return known
        support = sum(reading.support.values(), np.zeros(self.table.n_options))
        if proposal is not None:
            support[cand.offsets + np.asarray(proposal)] += self.deference
        scale = 1.0 / max(1, len(self.table.topic_ids) * max(1, len(reading.support)))
        score = cand.onehot[lo:n] @ (support * scale) + cand.own_term[lo:n]
        choice: Package = cand.packages[lo + int(score.argmax())]
        return cand.remember(cand.choices, key, choice)  # type: ignore[no-any-return]
