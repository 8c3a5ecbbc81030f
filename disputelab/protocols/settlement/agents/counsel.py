"""Rule counsel: time-dependent concession between a target and a walk-away amount.

A Boulware counsel holds out and concedes late, a Conceder gives early (the eagerness of
`model.concession_fraction`, per party strategy a row of the behaviour table). Each turn
it accepts the other side's standing offer when that is at least as good as what it
would offer next (accept-next), adopts a mediator's figure when it is at least as good
as its own next offer, and otherwise makes its next offer on the curve. Clause topics:
it backs its best option until the other side names one it finds acceptable, then takes
that one.

The same policy is the `direct` counsel offline: a one-shot decision with no look-ahead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from disputelab.agents.base import PublicTurn, TurnContext, UsageReporter
from disputelab.episode import Action, Signal, Stance
from disputelab.protocols.settlement.agents.auditor import DEFAULT_CLAUSES
from disputelab.protocols.settlement.agents.brief import Brief, Reading, read, with_terms
from disputelab.protocols.settlement.agents.model import at_least_as_good, curve_offer, sign
from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR, PARAMETERS, Behaviour

# The `boulware` and `conceder` kinds' curves: what those kinds are, chosen by whoever
# seats them, not read off a persona, so no world moves them (the planner's model of its
# opponent spans them too). A counsel of the `rule` kind takes its eagerness from its
# party's strategy instead, through the behaviour table (`strategy_eagerness`).
BOULWARE = 0.35
CONCEDER = 2.5


def strategy_eagerness(strategy: str, b: Behaviour = DEFAULT_BEHAVIOUR) -> float:
    """The eagerness of counsel for a party of `strategy` (`settlement.eagerness.MODE`:
    competing counsel are Boulware, accommodating ones Conceders); linear for a strategy
    the table does not name."""
    name = f"settlement.eagerness.{strategy}"
    return b[name] if name in PARAMETERS else 1.0


@dataclass(frozen=True)
class Move:
    """A counsel's decision: accept the standing offer, or offer an amount with clauses."""

    accept: bool
    amount: float
    options: Mapping[str, str] = field(default_factory=dict)
    clauses: tuple[str, ...] = ()
    plan: str = ""


def standard_clauses(
    brief: Brief, options: Mapping[str, str], struck: frozenset[str]
) -> tuple[str, ...]:
    """The execution clauses every rule proposal carries, plus one per clause topic."""
    lang = "zh" if brief.language.startswith("zh") else "en"
    base = list(DEFAULT_CLAUSES[lang].values())
    topics = [f"{t}: {brief.labels.get(f'{t}/{o}', o)}" for t, o in options.items()]
    return tuple(c for c in base + topics if c not in struck)


def choose_options(brief: Brief, reading: Reading) -> dict[str, str]:
    """Per clause topic: the other side's option when acceptable, else our best."""
    out: dict[str, str] = {}
    for topic, ranking in brief.rankings.items():
        theirs = reading.their_options.get(topic)
        out[topic] = theirs if theirs in ranking else ranking[0]
    return out


def options_acceptable(brief: Brief, options: Mapping[str, str]) -> bool:
    return all(o in brief.rankings.get(t, (o,)) for t, o in options.items())


def next_amount(brief: Brief, turns_taken: int, eagerness: float, floor: float | None) -> float:
    """The curve's offer for this side's next turn, never past its floor."""
    reservation = brief.reservation
    if floor is not None and sign(brief.side) * (floor - reservation) > 0:
        reservation = floor
    return curve_offer(brief.target, reservation, brief.progress(turns_taken), eagerness)


def rule_move(brief: Brief, reading: Reading, eagerness: float, floor: float | None) -> Move:
    """The rule policy's decision for one turn."""
    mine = next_amount(brief, len(reading.own), eagerness, floor)
    options = choose_options(brief, reading)
    clauses = standard_clauses(brief, options, reading.struck)
    if reading.theirs and reading.last_speaker != brief.party_id:
        standing = reading.theirs[-1]
        if at_least_as_good(standing, mine, brief.side) and options_acceptable(
            brief, reading.their_options
        ):
            return Move(True, standing, options, clauses, "accept-next: their offer beats ours")
    if reading.mediator is not None and at_least_as_good(reading.mediator, mine, brief.side):
        return Move(False, reading.mediator, options, clauses, "adopt the mediator's figure")
    return Move(False, mine, options, clauses, f"concede along the curve (eagerness {eagerness})")


def move_to_action(brief: Brief, move: Move, utterance: str, thought: str = "") -> Action:
    stances = {
        t: Stance(o, tuple(dict.fromkeys([o, *brief.rankings.get(t, ())])))
        for t, o in move.options.items()
    }
    return Action(
        with_terms(utterance, move.clauses),
        stances,
        Signal.CONSENSUS if move.accept else Signal.CONTINUE,
        thought or move.plan,
        offer={brief.term_id: round(move.amount, 2)},
        clauses=move.clauses,
    )


_VOICE = {
    "en": {
        "offer": "We propose {amount:,.0f} {unit} in full settlement, on the terms listed.",
        "accept": "We accept {amount:,.0f} {unit} on the terms listed.",
        "mediator": "We can agree to the mediator's figure of {amount:,.0f} {unit}.",
    },
    "zh": {
        "offer": "我方提出以{amount:,.0f}{unit}一次性了结本案，条款如列。",
        "accept": "我方接受{amount:,.0f}{unit}及所列条款。",
        "mediator": "我方同意调解员提出的{amount:,.0f}{unit}。",
    },
}


def voice(brief: Brief, move: Move, unit: str) -> str:
    v = _VOICE["zh" if brief.language.startswith("zh") else "en"]
    key = "accept" if move.accept else "mediator" if "mediator" in move.plan else "offer"
    return v[key].format(amount=move.amount, unit=unit)


class Counsel(UsageReporter):
    """What every settlement counsel shares: its seat, brief, legal-aid floor, signature."""

    name = "counsel"
    uses_auditor = True  # whether the system this counsel belongs to keeps the auditor
    uses_aid = True

    def __init__(self, party_id: str = "", behaviour: Behaviour = DEFAULT_BEHAVIOUR) -> None:
        self.party_id = party_id
        # The behaviour table this counsel reads its party's eagerness from (the run's
        # `behaviour` overrides and parameter world).
        self.behaviour = behaviour
        self.brief: Brief | None = None
        self.floor: float | None = None
        self.unit = ""

    def prepare(self, brief: Brief, unit: str = "") -> None:
        """Take the seat of `brief.party_id` with the clerk's brief."""
        self.party_id = brief.party_id
        self.brief = brief
        self.unit = unit

    def heed(self, floor: float) -> None:
        """Legal aid's advice: do not settle worse than `floor` (the BATNA)."""
        self.floor = floor

    def confirm(self, amount: float) -> bool:
        """Sign the audited draft at `amount`: yes unless it is worse than the walk-away."""
        assert self.brief is not None
        limit = self.brief.reservation if self.floor is None else self.floor
        return at_least_as_good(amount, limit, self.brief.side)

    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        """Take one counsel turn (each kind implements it)."""
        raise NotImplementedError

    def need_brief(self) -> Brief:
        if self.brief is None:
            raise RuntimeError("a settlement counsel acts only after the clerk's brief")
        return self.brief


class RuleCounsel(Counsel):
    """A time-dependent counsel (Boulware, linear or Conceder)."""

    def __init__(
        self,
        party_id: str = "",
        eagerness: float | None = None,
        name: str = "rule",
        behaviour: Behaviour = DEFAULT_BEHAVIOUR,
    ) -> None:
        super().__init__(party_id, behaviour)
        self.eagerness = eagerness
        self.name = name

    def prepare(self, brief: Brief, unit: str = "", strategy: str = "compromising") -> None:
        super().prepare(brief, unit)
        if self.eagerness is None:
            self.eagerness = strategy_eagerness(strategy, self.behaviour)

    def decide(self, dialogue: Sequence[PublicTurn]) -> Move:
        brief = self.need_brief()
        assert self.eagerness is not None
        return rule_move(brief, read(dialogue, brief), self.eagerness, self.floor)

    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        brief = self.need_brief()
        move = self.decide(dialogue)
        return move_to_action(brief, move, voice(brief, move, self.unit))


def with_floor(brief: Brief, floor: float | None) -> Brief:
    """The brief with its walk-away raised to `floor` when that is stricter."""
    if floor is None or sign(brief.side) * (floor - brief.reservation) <= 0:
        return brief
    return replace(brief, reservation=floor)
