"""People in a price negotiation: a person is the buyer or the seller, or the remediator
who rewrites a violating utterance before the buyer hears it.

A person's side knows its own opening price and the price it will not go past; each
turn it names a price, accepts the other side's last one, or walks out. The price is
always in the words too (`$1,200`), as the other side reads prices from what it hears.
No person is told to break a norm: violations are injected into a rule or model seller.

The moderator and the violation detector are instruments of the protocol, which read
the dialogue for the deal and for offence, not seats a person takes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext
from disputelab.agents.registry import AgentSetup
from disputelab.episode import Action, Signal
from disputelab.humans import (
    AmountField,
    Field,
    HumanSeat,
    MoveSource,
    Needs,
    Option,
    PickField,
    SeatRef,
    TextField,
    human_kind,
    human_party_kind,
    no_human_seat,
    public_block,
)
from disputelab.protocols.bilateral.agents.kinds import BARGAINER, DETECTOR, MODERATOR, REMEDIATOR
from disputelab.protocols.bilateral.agents.market import Market, last_amount
from disputelab.protocols.bilateral.agents.norms import strip_phrases
from disputelab.protocols.bilateral.agents.remediators import Remediation
from disputelab.scenario.schema import Party

OFFER, ACCEPT, WALK = "offer", "accept", "walk_away"


@dataclass(frozen=True)
class OwnPrice:
    """What one side knows of the price: the term, its side, its own opening price and
    the price it will not go past; never the other side's."""

    term_id: str
    unit: str
    side: str  # seller or buyer
    start: float
    limit: float

    def money(self, amount: float) -> str:
        text = f"{amount:,.2f}".rstrip("0").rstrip(".")
        return f"${text}" + (f" {self.unit}" if self.unit else "")


class HumanBargainer(HumanSeat):
    """A buyer or a seller played by a person."""

    def __init__(
        self,
        public: PublicScenario,
        party: Party,
        own: OwnPrice,
        source: MoveSource,
        role: str = "parties",
    ) -> None:
        lines = [
            *public_block(public),
            "",
            f"You are {party.name}, the {own.side}. Only you can read what follows.",
            f"Your objective: {party.objective}",
            f"Your opening price: {own.money(own.start)}; you will not go "
            f"{'below' if own.side == 'seller' else 'above'} {own.money(own.limit)}.",
        ]
        seat = SeatRef(f"{role}:{party.id}", role, party.name, party.id)
        super().__init__(seat, "\n".join(lines), public, source)
        self.party_id = party.id
        self.own = own
        self.last: float | None = None

    def their_price(self, dialogue: Sequence[PublicTurn]) -> float | None:
        price = None
        for t in dialogue:
            if t.role == "party" and t.speaker != self.party_id:
                said = t.offer.get(self.own.term_id, last_amount(t.text))
                price = said if said is not None else price
        return price

    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        theirs = self.their_price(dialogue)
        actions = [Option(OFFER, "name a price")]
        if theirs is not None:
            actions.append(Option(ACCEPT, f"accept their price of {self.own.money(theirs)}"))
        actions.append(Option(WALK, "walk out"))
        default = self.last if self.last is not None else self.own.start
        fields: list[Field] = [
            PickField("action", "action", tuple(actions), (OFFER,)),
            AmountField(
                "price",
                "price",
                0.0,
                100 * max(self.own.start, self.own.limit),
                default,
                needs=Needs("action", (OFFER,)),
            ),
            TextField("say", "say", placeholder="name the price in a sentence"),
        ]
        move = await self.ask("your turn", dialogue, ctx, fields)
        action = move.pick("action") or OFFER
        words = move.text("say")
        if action == WALK:
            return Action(words or "I am walking out.", {}, Signal.WALK_AWAY)
        price = theirs if action == ACCEPT and theirs is not None else move.amount("price")
        price = round(price if price is not None else default, 2)
        money = self.own.money(price)
        if action == ACCEPT:
            words = words or f"Deal: I accept {money}."
        else:
            self.last = price
            words = words or f"I can do {money}."
        if last_amount(words) != price:  # the other side reads the price from the words
            words = f"{words} My price: {money}."
        signal = Signal.CONSENSUS if action == ACCEPT else Signal.CONTINUE
        return Action(words, {}, signal, offer={self.own.term_id: price})


class HumanRemediator(HumanSeat):
    """The remediator, played by a person: they rewrite a flagged utterance before the
    buyer hears it (Enter: the utterance with the offending phrases taken out)."""

    def __init__(self, public: PublicScenario, source: MoveSource, role: str = "mediator") -> None:
        lines = [
            *public_block(public),
            "",
            "You are the remediator. When the seller says something that breaks a norm of "
            "polite negotiation, you rewrite it before the buyer hears it: keep its price "
            "and its point, take out the offence.",
        ]
        super().__init__(SeatRef(role, role, "Remediator"), "\n".join(lines), public, source)
        self.name = "human"
        self.method = "human"
        self.fixed: str | None = "human"
        self.ready = True

    def prepare(self, method: str, pool: object, chosen: object, k: int, semantic: bool) -> None:
        """A person needs no exemplars."""

    async def remediate(
        self,
        dialogue: Sequence[PublicTurn],
        text: str,
        category: str | None,
        ctx: TurnContext,
    ) -> Remediation:
        softened = " ".join(strip_phrases(text).split()) or text
        flagged = f" ({category})" if category else ""
        field = TextField(
            "rewrite", "rewrite", softened, required=True, help=f"Said{flagged}: {text}"
        )
        move = await self.ask(f"rewrite the flagged utterance{flagged}", dialogue, ctx, [field])
        return Remediation(move.text("rewrite"), (), "human")


def _bargainer(
    public: PublicScenario, party: Party, source: MoveSource, setup: AgentSetup
) -> HumanBargainer:
    """A person's side, with its own prices only (not the other side's limit)."""
    market = Market.of(setup.scenario)
    side = market.side(party.id)
    own = OwnPrice(
        market.term_id,
        market.unit,
        side,
        market.seller_start if side == "seller" else market.buyer_start,
        market.seller_floor if side == "seller" else market.buyer_ceiling,
    )
    return HumanBargainer(public, party, own, source, setup.role or "parties")


human_party_kind(BARGAINER, "a person names prices, accepts or walks out", _bargainer)
human_kind(
    REMEDIATOR,
    "a person rewrites each flagged utterance before the buyer hears it",
    lambda public, source, setup: HumanRemediator(public, source, setup.role or "mediator"),
)
no_human_seat(MODERATOR, "it reads the deal off the dialogue: the protocol's referee, not a seat")
no_human_seat(DETECTOR, "it flags violations for the remediator: an instrument, not a seat")
