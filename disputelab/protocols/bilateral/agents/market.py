"""The price a bilateral negotiation is about, and who sits on which side of it.

The scenario's first numeric term is the price. The seller is the party whose target is
the higher one (a seller, a landlord, a job seeker), the buyer the other; each party's
target is its opening price and its reservation the price it will not go past.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from disputelab.scenario.schema import Scenario

_AMOUNT = re.compile(r"\$\s?(\d[\d,]*(?:\.\d+)?)")


@dataclass(frozen=True)
class Market:
    term_id: str
    unit: str
    seller: str
    buyer: str
    seller_start: float  # the seller's opening (target) price
    buyer_start: float  # the buyer's opening (target) price
    seller_floor: float  # the seller's reservation
    buyer_ceiling: float  # the buyer's reservation

    @property
    def span(self) -> float:
        return self.seller_start - self.buyer_start

    @property
    def step(self) -> float:
        """Prices are rounded to this: a hundredth of the order of the opening gap."""
        return float(10 ** (math.floor(math.log10(self.span)) - 2))

    def rounded(self, amount: float) -> float:
        return round(round(amount / self.step) * self.step, 6)

    def money(self, amount: float) -> str:
        text = f"{amount:,.2f}".rstrip("0").rstrip(".")
        return f"${text}" + (f" {self.unit}" if self.unit else "")

    def side(self, party_id: str) -> str:
        return "seller" if party_id == self.seller else "buyer"

    @staticmethod
    def of(scenario: Scenario) -> Market:
        """The market of a two-party scenario with a numeric term; ValueError otherwise."""
        if len(scenario.parties) != 2 or not scenario.terms:
            raise ValueError(
                f"scenario {scenario.id} needs exactly two parties and a numeric price term "
                f"(it has {len(scenario.parties)} parties and {len(scenario.terms)} terms)"
            )
        term = scenario.terms[0]
        ids = [p.id for p in scenario.parties]
        missing = [p for p in ids if p not in term.targets or p not in term.reservations]
        if missing:
            raise ValueError(
                f"scenario {scenario.id}: term {term.id} needs a target and a reservation "
                f"for {', '.join(missing)}"
            )
        seller, buyer = sorted(ids, key=lambda p: -term.targets[p])
        if term.targets[seller] <= term.targets[buyer]:
            raise ValueError(f"scenario {scenario.id}: the two targets of {term.id} are equal")
        return Market(
            term.id,
            term.unit,
            seller,
            buyer,
            term.targets[seller],
            term.targets[buyer],
            term.reservations[seller],
            term.reservations[buyer],
        )


def amounts_in(text: str) -> list[float]:
    """Every dollar amount written in `text`, in order ("$1,200" -> 1200.0)."""
    return [float(m.replace(",", "")) for m in _AMOUNT.findall(text)]


def last_amount(text: str) -> float | None:
    found = amounts_in(text)
    return found[-1] if found else None
