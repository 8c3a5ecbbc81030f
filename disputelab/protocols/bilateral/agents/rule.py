"""Rule buyer and seller: a concession curve over the price, a template voice, and a
buyer that takes offence at what it hears.

The seller concedes from its opening price towards its reservation along the curve of its
persona's strategy, holds its price on a violating turn (insisting is part of breaking
the norm), and accepts a buyer's offer it would not beat. The buyer concedes towards its
reservation, reads every seller turn it receives for offence and warmth (`norms.read_tone`)
and keeps three hidden numbers: anger, trust and relationship. Anger slows its concession
and, past a threshold, makes it walk out; trust lets it pay a little more; both relational
numbers are the offline read-out of the trust and relationship the reward needs. Every
number that shapes this response is a named field of `BuyerTraits`: an assumption, and
each one that turns what it hears into behaviour is a row of the behaviour table
(`bilateral.*`), so `behaviour` overrides and parameter worlds reach it. Both sides'
concession curves take their exponent from the table's `beta.MODE` rows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from disputelab.agents.base import PublicTurn, TurnContext, UsageReporter
from disputelab.agents.utility import strategy_beta
from disputelab.episode import Action, Signal
from disputelab.protocols.bilateral.agents.market import Market, last_amount
from disputelab.protocols.bilateral.agents.norms import Category, read_tone, violation_phrase
from disputelab.protocols.bilateral.seeding import task_stream
from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR, Behaviour
from disputelab.scenario.schema import Scenario

STATE = re.compile(r"\[state trust=(-?[\d.]+) relationship=(-?[\d.]+) anger=(-?[\d.]+)\]")


# The relational read-out's measurement, the same for every persona and condition: how
# the buyer's end state and the outcome are read as a change of -1, 0 or +1.
DEAD_ZONE = 0.1  # |change| below this reads as "no change"
DEAL_RELATION_BONUS = 0.2  # a deal's effect on the relationship read-out
WALKOUT_RELATION_COST = 0.3  # a walk-out's

_B = DEFAULT_BEHAVIOUR


@dataclass(frozen=True)
class BuyerTraits:
    """ASSUMPTIONS of the rule buyer's social response (none is from the paper).

    `offence_sensitivity` scales every offence heard; by default it is the buyer's
    persona reactivity times `bilateral.offence_per_reactivity`, so a scenario file (or
    the reactivity condition) sets it. The other behavioural fields default to the
    behaviour table's rows (`BuyerTraits.of` reads a run's table); the last three are the
    read-out's measurement.
    """

    offence_sensitivity: float = 1.0
    quit_threshold: float = _B["bilateral.quit_anger"]  # anger at which it walks out
    anger_decay: float = _B["bilateral.anger_kept"]  # share of anger left after its turn
    hardening: float = _B["bilateral.hardening"]  # how much full anger slows concession
    trust_per_warmth: float = _B["bilateral.trust_per_warmth"]
    trust_per_offence: float = _B["bilateral.trust_per_offence"]
    relation_per_warmth: float = _B["bilateral.relation_per_warmth"]
    relation_per_offence: float = _B["bilateral.relation_per_offence"]
    # Share of the opening gap full trust adds to its ceiling.
    trust_premium: float = _B["bilateral.trust_premium"]
    dead_zone: float = DEAD_ZONE
    deal_relation_bonus: float = DEAL_RELATION_BONUS
    walkout_relation_cost: float = WALKOUT_RELATION_COST

    @classmethod
    def of(cls, b: Behaviour, reactivity: float) -> BuyerTraits:
        """The traits of a buyer of persona `reactivity` under behaviour table `b`."""
        return cls(
            offence_sensitivity=b["bilateral.offence_per_reactivity"] * reactivity,
            quit_threshold=b["bilateral.quit_anger"],
            anger_decay=b["bilateral.anger_kept"],
            hardening=b["bilateral.hardening"],
            trust_per_warmth=b["bilateral.trust_per_warmth"],
            trust_per_offence=b["bilateral.trust_per_offence"],
            relation_per_warmth=b["bilateral.relation_per_warmth"],
            relation_per_offence=b["bilateral.relation_per_offence"],
            trust_premium=b["bilateral.trust_premium"],
        )


@dataclass(frozen=True)
class Relational:
    """The buyer's relational read-out at the end: each -1, 0 or +1."""

    trust: int
    relationship: int


def direction(value: float, dead_zone: float) -> int:
    """+1 above the dead zone, -1 below its negative, else 0."""
    return 1 if value > dead_zone else -1 if value < -dead_zone else 0


def relational_readout(
    thought: str, deal: bool, walked_out: bool, traits: BuyerTraits = BuyerTraits()
) -> Relational | None:
    """Trust and relationship change from a rule buyer's last stated state and the
    outcome; None when the thought carries no state (not a rule buyer)."""
    m = STATE.search(thought)
    if m is None:
        return None
    trust, relation = float(m.group(1)), float(m.group(2))
    relation += traits.deal_relation_bonus if deal else 0.0
    relation -= traits.walkout_relation_cost if walked_out else 0.0
    return Relational(direction(trust, traits.dead_zone), direction(relation, traits.dead_zone))


class RuleBargainer(UsageReporter):
    """One side of the negotiation, without a model."""

    def __init__(
        self,
        scenario: Scenario,
        party_id: str,
        seed: int,
        traits: BuyerTraits | None = None,
        behaviour: Behaviour = DEFAULT_BEHAVIOUR,
    ) -> None:
        """`traits` given are used as they are (a test's buyer); otherwise the buyer's
        come from its persona and `behaviour`, the run's table."""
        self.party_id = party_id
        self.market = Market.of(scenario)
        self.side = self.market.side(party_id)
        party = scenario.party(party_id)
        self.beta = strategy_beta(party.persona.point, behaviour)
        self.traits = traits or BuyerTraits.of(behaviour, party.persona.reactivity)
        self.rng = task_stream("buyer-noise", scenario.id, seed, party_id)
        self.anger = self.trust = self.relationship = 0.0
        self.heard = -1  # index of the last turn read for tone
        self.last_offer: float | None = None

    # ---- what it hears ---------------------------------------------------------------
    def _listen(self, dialogue: Sequence[PublicTurn]) -> float | None:
        """Read the turns of the other side not yet heard; return its last price."""
        price = None
        for t in dialogue:
            if t.role != "party":
                continue
            if t.speaker == self.party_id:
                mine = last_amount(t.text)  # a remediation may have restated my price
                self.last_offer = mine if mine is not None else self.last_offer
                continue
            said = last_amount(t.text)
            price = said if said is not None else price
            if t.turn_index > self.heard and self.side == "buyer":
                self._feel(t.text)
            self.heard = max(self.heard, t.turn_index)
        return price

    def _feel(self, text: str) -> None:
        tone, tr = read_tone(text), self.traits
        offence = tr.offence_sensitivity * tone.total_offence
        self.anger += offence
        self.trust += tr.trust_per_warmth * tone.warmth - tr.trust_per_offence * offence
        self.relationship += (
            tr.relation_per_warmth * tone.warmth - tr.relation_per_offence * offence
        )
        self.trust = max(-1.0, min(1.0, self.trust))
        self.relationship = max(-1.0, min(1.0, self.relationship))

    # ---- what it would take ----------------------------------------------------------
    def limit(self, ctx: TurnContext) -> float:
        """The price it would settle at now: its curve, slowed by anger, lifted by trust."""
        m = self.market
        progress = float(min(1.0, ctx.party_turn / max(1, ctx.budget)) ** (1.0 / self.beta))
        if self.side == "seller":
            return m.seller_floor + (m.seller_start - m.seller_floor) * (1.0 - progress)
        # Anger counts up to 1 either way, and the curve's progress stays in [0, 1]: a
        # mirrored table's negative anger speeds concession, never past the ceiling.
        anger = max(-1.0, min(1.0, self.anger))
        slowed = max(0.0, min(1.0, progress * (1.0 - self.traits.hardening * anger)))
        ceiling = m.buyer_ceiling + self.traits.trust_premium * self.trust * m.span
        return m.buyer_start + (ceiling - m.buyer_start) * slowed

    def hidden_state(self) -> str:
        return (
            f"[state trust={self.trust:.3f} relationship={self.relationship:.3f} "
            f"anger={self.anger:.3f}]"
        )

    # ---- turns -----------------------------------------------------------------------
    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        heard = self._listen(dialogue)
        if self.side == "buyer" and self.anger >= self.traits.quit_threshold:
            return self._say(
                "I will not be spoken to like that. We are done here.", None, Signal.WALK_AWAY
            )
        action = self._bargain(heard, ctx)
        self.anger *= self.traits.anger_decay if self.side == "buyer" else 1.0
        return action

    async def violate(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, category: Category
    ) -> Action:
        """A turn that breaks the norm of `category` and holds the last price."""
        heard = self._listen(dialogue)
        m = self.market
        hold = self.last_offer if self.last_offer is not None else m.seller_start
        if heard is not None and heard >= min(hold, self.limit(ctx)):
            return self._bargain(heard, ctx)  # an offer it takes is accepted, not insulted
        phrase = violation_phrase(category, self.rng)
        self.last_offer = hold
        text = f"{phrase} {m.money(hold)} is my price."
        return self._say(text, hold, Signal.CONTINUE, tone="hostile")

    def _bargain(self, heard: float | None, ctx: TurnContext) -> Action:
        m, limit = self.market, self.market.rounded(self.limit(ctx))
        if self.side == "seller":
            if heard is not None and heard >= limit:
                return self._say(f"Agreed: {m.money(heard)}.", heard, Signal.CONSENSUS)
            offer = limit if self.last_offer is None else min(self.last_offer, limit)
            if heard is not None:
                offer = max(offer, heard)
            templates = ("I can do {p}.", "The best I can offer is {p}.", "Let us say {p}.")
        else:
            if heard is not None and heard <= limit:
                return self._say(f"Deal at {m.money(heard)}.", heard, Signal.CONSENSUS)
            offer = limit if self.last_offer is None else max(self.last_offer, limit)
            if heard is not None:
                offer = min(offer, heard)
            templates = ("Would you take {p}?", "I can offer {p}.", "My budget allows {p}.")
        self.last_offer = offer
        return self._say(self.rng.choice(templates).format(p=m.money(offer)), offer)

    def _say(
        self,
        text: str,
        price: float | None,
        signal: Signal = Signal.CONTINUE,
        tone: str = "neutral",
    ) -> Action:
        offer = {self.market.term_id: price} if price is not None else {}
        thought = self.hidden_state() if self.side == "buyer" else ""
        return Action(
            text, {}, signal, thought, "hostile" if tone == "hostile" else "neutral", offer=offer
        )
