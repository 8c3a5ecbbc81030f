"""People at a settlement table: a person is one side's counsel (in the parties' seat,
or in the counsel seat of the method under test), or the mediator who proposes a figure
when the talks stall.

A person's counsel sees the clerk's role brief of its side (its target and walk-away
amount), and the dialogue as delivered to it: the clerk's digest, the analyst's BATNA,
the other side's offers, the auditor. Each turn they offer an amount with an option per
clause topic, accept the standing offer, or walk away; the clerk's standard execution
clauses go with every offer, as they do with the rule counsel's. A person signs the
audited draft their own offer or acceptance made ready (there is no second question).
"""

from __future__ import annotations

from collections.abc import Sequence

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext
from disputelab.agents.registry import AgentSetup
from disputelab.episode import Action, Intervention, Signal
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
from disputelab.protocols.settlement.agents.brief import Brief, Reading, read
from disputelab.protocols.settlement.agents.counsel import (
    Counsel,
    Move,
    move_to_action,
    standard_clauses,
)
from disputelab.protocols.settlement.agents.kinds import (
    SETTLEMENT_AUDITOR,
    SETTLEMENT_COUNSEL,
    SETTLEMENT_MEDIATOR,
    SETTLEMENT_MEMORY,
    SETTLEMENT_OUTCOME,
    SETTLEMENT_PARTY,
)
from disputelab.protocols.settlement.agents.staff import RuleMediator, text
from disputelab.scenario.schema import Party

OFFER, ACCEPT, WALK = "offer", "accept", "walk_away"


def counsel_brief(public: PublicScenario, brief: Brief, unit: str) -> str:
    lines = public_block(public)
    lines += ["", brief.text or f"You are counsel for {brief.party_id} ({brief.side})."]
    lines.append(
        f"Your opening amount: {brief.target:,.0f} {unit}; your walk-away amount: "
        f"{brief.reservation:,.0f} {unit}. The talks end after {brief.rounds} counsel turns, "
        "both sides counted; then the case goes to court."
    )
    return "\n".join(lines)


class HumanCounsel(Counsel):
    """One side's counsel, played by a person."""

    name = "human"

    def __init__(
        self, public: PublicScenario, source: MoveSource, key: str, party_id: str = ""
    ) -> None:
        super().__init__(party_id)
        self.public = public
        self.source = source
        self.key = key
        self.seat: HumanSeat | None = None

    def prepare(self, brief: Brief, unit: str = "") -> None:
        super().prepare(brief, unit)
        names = {p.id: p.name for p in self.public.parties}
        seat = SeatRef(
            self.key,
            self.key.split(":", 1)[0],
            names.get(brief.party_id, brief.party_id),
            brief.party_id,
        )
        self.seat = HumanSeat(
            seat, counsel_brief(self.public, brief, unit), self.public, self.source
        )

    def fields(self, brief: Brief, reading: Reading) -> list[Field]:
        actions = [Option(OFFER, "make an offer")]
        if reading.theirs and reading.last_speaker != brief.party_id:
            actions.append(Option(ACCEPT, f"accept their offer of {reading.theirs[-1]:,.0f}"))
        actions.append(Option(WALK, "walk away: go to court"))
        last = reading.own[-1] if reading.own else brief.target
        high = 10 * max(abs(brief.target), abs(brief.reservation), 1.0)
        offer = Needs("action", (OFFER,))
        fields: list[Field] = [
            PickField("action", "action", tuple(actions), (OFFER,)),
            AmountField("amount", "amount", 0.0, high, round(last, 2), self.unit, needs=offer),
        ]
        for topic, ranking in brief.rankings.items():
            options = tuple(Option(o, brief.labels.get(f"{topic}/{o}", o)) for o in ranking)
            fields.append(PickField(f"clause:{topic}", topic, options, (ranking[0],), needs=offer))
        fields.append(TextField("say", "say", placeholder="state my offer in a sentence"))
        return fields

    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        brief = self.need_brief()
        assert self.seat is not None
        reading = read(dialogue, brief)
        move = await self.seat.ask("your turn", dialogue, ctx, self.fields(brief, reading))
        action = move.pick("action") or OFFER
        if action == WALK:
            return Action(move.text("say") or "We will take this to court.", {}, Signal.WALK_AWAY)
        accept = action == ACCEPT
        amount = reading.theirs[-1] if accept else (move.amount("amount") or brief.target)
        options = {t: p for t in brief.rankings if (p := move.pick(f"clause:{t}"))}
        if accept:
            options = dict(reading.their_options)
        clauses = standard_clauses(brief, options, reading.struck)
        words = move.text("say") or (
            f"We accept {amount:,.0f} {self.unit}."
            if accept
            else f"We propose {amount:,.0f} {self.unit} in full settlement."
        )
        return move_to_action(
            brief, Move(accept, amount, options, clauses, "a person's move"), words
        )

    def confirm(self, amount: float) -> bool:
        """A person signs the draft their own offer or acceptance made ready."""
        return True


class HumanSettlementMediator(RuleMediator):
    """The settlement's mediator, played by a person: on a stall they propose a figure
    between the two standing offers (Enter: the midpoint). The opening issue list is the
    clerk's, as the rule mediator's."""

    name = "human"

    def __init__(self, public: PublicScenario, source: MoveSource, role: str = "mediator") -> None:
        lines = [
            *public_block(public),
            "",
            "You are the mediator. When the talks stall you propose a settlement figure "
            "between the two sides' standing offers.",
        ]
        self.seat = HumanSeat(SeatRef(role, role, "Mediator"), "\n".join(lines), public, source)

    async def stall(
        self,
        dialogue: Sequence[PublicTurn],
        a: float,
        b: float,
        term_id: str,
        language: str,
        unit: str,
    ) -> Intervention:
        low, high = min(a, b), max(a, b)
        mid = round((a + b) / 2, 2)
        fields: list[Field] = [
            AmountField("amount", "your figure", low, high, mid, unit),
            TextField("say", "say", placeholder="propose the figure in a sentence"),
        ]
        move = await self.seat.ask(
            "the talks have stalled: propose a figure", dialogue, None, fields
        )
        figure = move.amount("amount")
        m = mid if figure is None else round(figure, 2)
        words = move.text("say") or text(language)["midpoint"].format(a=a, b=b, m=m, unit=unit)
        return Intervention(words, offer={term_id: m})


def _party(
    public: PublicScenario, party: Party, source: MoveSource, setup: AgentSetup
) -> HumanCounsel:
    return HumanCounsel(public, source, f"{setup.role or 'parties'}:{party.id}", party.id)


def _counsel(public: PublicScenario, source: MoveSource, setup: AgentSetup) -> HumanCounsel:
    return HumanCounsel(public, source, setup.role or "counsel")


def _mediator(
    public: PublicScenario, source: MoveSource, setup: AgentSetup
) -> HumanSettlementMediator:
    return HumanSettlementMediator(public, source, setup.role or "mediator")


human_party_kind(SETTLEMENT_PARTY, "a person is this side's counsel", _party)
human_kind(SETTLEMENT_COUNSEL, "a person is counsel of the side under test", _counsel)
human_kind(SETTLEMENT_MEDIATOR, "a person proposes a figure when the talks stall", _mediator)
no_human_seat(
    SETTLEMENT_OUTCOME,
    "the outcome analyst states the one BATNA every counsel, legal aid and metric uses, "
    "before anyone speaks; a person's figure there would be a case parameter, not a move",
)
no_human_seat(
    SETTLEMENT_AUDITOR,
    "the auditor's verdicts decide whether a draft is signed; a person at that seat would "
    "judge their own table's agreement, with no rule or model to check against",
)
no_human_seat(
    SETTLEMENT_MEMORY,
    "the memory seat writes what a planning counsel learns from its own tree search, "
    "inside that counsel's turn, where no person takes part",
)
