"""The money model of a settlement: BATNA, reservation values, concession, and the
planning value function. Pure functions, tested on hand-built numbers.

SettleAgent gives the BATNA as (expected judgment J, litigation cost, litigation risk) and
no formula for reservation values. We follow the reconstruction in the spec (section 6),
risk-neutral:

    r_plaintiff = p_win * J - cost_plaintiff      (the least the plaintiff should take)
    r_defendant = p_win * J + cost_defendant      (the most the defendant should pay)

so litigation costs open a zone of possible agreement [r_plaintiff, r_defendant]. The value
of a simulated trajectory is V = w . (m_settle, m_surplus, m_fair, m_comp) (Eq. 6), every
component on [0, 1] and higher is better (spec section 4.2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Side = Literal["plaintiff", "defendant"]
SIDES: tuple[Side, Side] = ("plaintiff", "defendant")
# Smallest ZOPA width (in money) used to normalise surplus, so that an empty or
# degenerate zone does not divide by zero.
MIN_WIDTH = 1.0


def other(side: Side) -> Side:
    return "defendant" if side == "plaintiff" else "plaintiff"


def sign(side: Side) -> int:
    """+1 when more money is better for `side` (the payee), -1 for the payer."""
    return 1 if side == "plaintiff" else -1


@dataclass(frozen=True)
class Batna:
    """The litigation outside option both counsel bargain in the shadow of."""

    expected_award: float  # J: what a court is expected to award if the plaintiff wins
    p_win: float  # probability that the plaintiff prevails
    cost_plaintiff: float  # the plaintiff's remaining cost of litigating (fees, time)
    cost_defendant: float
    source: str = "analyst"  # "analyst" (estimated) or "judgment" (the known award)

    @property
    def expected_judgment(self) -> float:
        return self.p_win * self.expected_award

    def reservation(self, side: Side) -> float:
        """The side's reservation value: taking less (paying more) is worse than court."""
        if side == "plaintiff":
            return self.expected_judgment - self.cost_plaintiff
        return self.expected_judgment + self.cost_defendant

    def zopa(self) -> tuple[float, float] | None:
        """[r_plaintiff, r_defendant] when it is not empty, else None."""
        low, high = self.reservation("plaintiff"), self.reservation("defendant")
        return (low, high) if low <= high else None

    def width(self) -> float:
        return max(self.reservation("defendant") - self.reservation("plaintiff"), MIN_WIDTH)


def surplus(amount: float, side: Side, reservation: float) -> float:
    """Money the agreement gives `side` beyond its reservation (negative: worse than BATNA)."""
    return sign(side) * (amount - reservation)


def worse_than_batna(amount: float, side: Side, batna: Batna) -> bool:
    return surplus(amount, side, batna.reservation(side)) < 0


def normalised_surplus(amount: float, side: Side, batna: Batna) -> float:
    """Surplus over BATNA divided by the ZOPA width (not clipped)."""
    return surplus(amount, side, batna.reservation(side)) / batna.width()


def concession_fraction(progress: float, eagerness: float) -> float:
    """How much of the way from target to reservation a counsel has conceded at
    `progress` (0 at its first turn, 1 at its last): progress ** (1 / eagerness).

    eagerness < 1 is Boulware (holds out, concedes late); > 1 is Conceder (gives early);
    1 is linear (Faratin, Sierra and Jennings' time-dependent tactics).
    """
    if eagerness <= 0:
        raise ValueError(f"eagerness must be positive, got {eagerness}")
    p = min(max(progress, 0.0), 1.0)
    return float(p ** (1.0 / eagerness))


def curve_offer(target: float, reservation: float, progress: float, eagerness: float) -> float:
    """The amount a time-dependent counsel offers at `progress`."""
    return target + (reservation - target) * concession_fraction(progress, eagerness)


def at_least_as_good(amount: float, than: float, side: Side) -> bool:
    """Whether `amount` is at least as good for `side` as `than`."""
    return sign(side) * (amount - than) >= -1e-9


# ---- the value function (Eq. 6) ------------------------------------------------------
@dataclass(frozen=True)
class Weights:
    """w in V = w . m: non-negative, normalised to sum to 1."""

    settle: float = 0.25
    surplus: float = 0.25
    fair: float = 0.25
    comp: float = 0.25

    def normalised(self) -> Weights:
        total = self.settle + self.surplus + self.fair + self.comp
        if min(self.settle, self.surplus, self.fair, self.comp) < 0 or total <= 0:
            raise ValueError("value weights must be non-negative with a positive sum")
        return Weights(
            self.settle / total, self.surplus / total, self.fair / total, self.comp / total
        )


@dataclass(frozen=True)
class Components:
    """m(tau): each on [0, 1], higher is better."""

    settle: float
    surplus: float
    fair: float
    comp: float


def _clip(x: float) -> float:
    return min(max(x, 0.0), 1.0)


def m_settle(agreed: bool, gap_start: float, gap_end: float) -> float:
    """1 on agreement within the horizon, else how much of the gap closed."""
    if agreed:
        return 1.0
    if gap_start <= 0:
        return 0.0
    return _clip(1.0 - gap_end / gap_start)


def m_surplus(amount: float | None, side: Side, batna: Batna) -> float:
    """Clipped normalised surplus of the acting side; 0 without agreement (its BATNA)."""
    if amount is None:
        return 0.0
    return _clip(normalised_surplus(amount, side, batna))


def m_fair(amount: float | None, batna: Batna, vulnerable: Side | None) -> float:
    """Protection of the weaker side and balance: the mean of (1 - the vulnerable side
    ends below its BATNA) and (1 - the utility gap between the sides' surpluses)."""
    if amount is None:
        return 1.0  # both keep their outside option: nobody is pushed below it
    protected = 1.0
    if vulnerable is not None and worse_than_batna(amount, vulnerable, batna):
        protected = 0.0
    sp = max(surplus(amount, "plaintiff", batna.reservation("plaintiff")), 0.0)
    sd = max(surplus(amount, "defendant", batna.reservation("defendant")), 0.0)
    balance = 1.0 if sp + sd == 0 else 1.0 - abs(sp - sd) / (sp + sd)
    return (protected + balance) / 2


COMPLIANCE_SCORE = {"pass": 1.0, "warn": 0.5, "veto": 0.0}


def m_comp(flag: str) -> float:
    """The auditor's flag on the final package: pass 1, warn 0.5, veto 0."""
    return COMPLIANCE_SCORE[flag]


def value(m: Components, w: Weights) -> float:
    """V(tau) = w . m(tau), with w normalised."""
    n = w.normalised()
    v = n.settle * m.settle + n.surplus * m.surplus + n.fair * m.fair + n.comp * m.comp
    return 0.0 if math.isnan(v) else v


def relative_error(amount: float, reference: float) -> float:
    """|A - A*| / A*, the deviation Acc@tau is judged on (reference > 0)."""
    return abs(amount - reference) / reference


def within(amount: float, reference: float, tau: float) -> bool:
    """Acc@tau's hit test, inclusive ('no more than tau')."""
    return relative_error(amount, reference) <= tau + 1e-12
