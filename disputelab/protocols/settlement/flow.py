"""One settlement episode's course: PREP -> BARG <-> VERIFY -> end (spec sections 1.3, 3).

- PREP (Eq. 1): the clerk's digest and role briefs, the outcome analyst's BATNA, the
  mediator's issue list, and legal aid's briefing of the vulnerable side (Fig. 1).
- BARG (Eq. 3): counsel alternate, the opener first. Before a turn, priority stall >
  need_aid > turn (spec's suggestion): the mediator steps in when the gap has not narrowed
  for `stall_turns` turns, legal aid when the vulnerable side faces an offer worse than
  its BATNA or one missing execution fields.
- draft_ready (Eq. 4): a counsel accepts the standing offer, or both sides' latest offers
  are within 1 % of each other (spec 3).
- VERIFY (Eq. 5): the auditor's veto strikes the flagged clauses and returns to BARG; a
  warning applies its revisions and re-audits once; on pass both counsel sign, and an
  unsigned draft also returns to BARG. Without an auditor (an ablation) a draft is signed
  as it stands, and the signed text and the stop reason say it went unaudited.
  The auditor is the auditor seat's (the rules, or a model's verdict per clause); either
  way its flag and revised clauses are applied alike.
- End: settlement (resolved), a walk-away (breakdown), or the round limit T (budget: no
  agreement, the litigation outside option), with the reason recorded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from disputelab.agents.base import TurnContext, UsageReporter
from disputelab.agents.registry import sub_role
from disputelab.episode import Action, Intervention, Outcome, Signal, Status
from disputelab.protocols.session import Session
from disputelab.protocols.settlement.agents.auditor import Audit, RuleAuditor
from disputelab.protocols.settlement.agents.brief import Brief
from disputelab.protocols.settlement.agents.counsel import Counsel
from disputelab.protocols.settlement.agents.model import Batna, Side, other
from disputelab.protocols.settlement.agents.staff import LegalAid, RuleMediator

SAME_OFFER = 0.01  # offers within 1 % of each other are the same core terms (spec 3)


@dataclass
class Table:
    """Everyone at one settlement table and what the protocol tracks between turns."""

    session: Session
    counsel: dict[Side, Counsel]
    tested: Side
    batna: Batna
    term_id: str
    unit: str
    rounds: int
    opener: Side
    stall_turns: int
    auditor: bool
    aid: LegalAid | None
    mediator: RuleMediator | None
    vulnerable: Side | None
    # The auditor seat's agent (rules, or a model's verdicts) and, for a planning counsel
    # under test, the memory seat's distiller, whose calls are charged to `memory`.
    reviewer: RuleAuditor = field(default_factory=RuleAuditor)
    memory: UsageReporter | None = None
    briefs: dict[Side, Brief] = field(default_factory=dict)
    standing: dict[Side, tuple[float, tuple[str, ...], dict[str, str]]] = field(
        default_factory=dict
    )
    gaps: list[float] = field(default_factory=list)
    aid_given: set[str] = field(default_factory=set)
    violations: int = 0

    @property
    def language(self) -> str:
        return self.session.scenario.language


class Bargaining:
    """BARG and VERIFY over the table until it settles, breaks down or runs out."""

    def __init__(self, table: Table) -> None:
        self.t = table
        self.s = table.session

    def ctx(self) -> TurnContext:
        return TurnContext(self.s.party_turn, self.t.rounds, 2)

    async def play(self) -> Outcome:
        side = self.t.opener
        while self.s.party_turn < self.t.rounds:
            await self._insertions(side)
            action = await self._counsel_turn(side)
            if action.signal is Signal.WALK_AWAY:
                return Outcome(
                    Status.IMPASSE,
                    f"breakdown: the {side}'s counsel walked away at "
                    f"counsel turn {self.s.party_turn}",
                )
            draft = self._draft(side, action)
            if draft is not None:
                done = await self._verify(side, *draft)
                if done is not None:
                    return done
            side = other(side)
        return Outcome(
            Status.BUDGET,
            f"no agreement within the round limit T={self.t.rounds}: "
            "the litigation outside option applies",
        )

    async def _counsel_turn(self, side: Side) -> Action:
        agent = self.t.counsel[side]
        t0 = time.perf_counter()
        action = await agent.act(self.s.view(agent.party_id), self.ctx())
        if side == self.t.tested:
            # The method under test is charged to its own role, not to the parties, and
            # calls of its own kind (rollouts) to `counsel.CALL`.
            self.s.charge("counsel", agent.take_usage())
            for call, used in getattr(agent, "take_call_usage", dict)().items():
                self.s.charge(sub_role("counsel", call), used)
            if self.t.memory is not None:
                self.s.charge("memory", self.t.memory.take_usage())
        self.s.party_spoke(agent, action, time.perf_counter() - t0, "barg")
        amount = action.offer.get(self.t.term_id)
        if amount is not None:
            options = {k: s.option for k, s in action.stances.items() if s.option}
            self.t.standing[side] = (amount, action.clauses, options)
        return action

    def _draft(
        self, side: Side, action: Action
    ) -> tuple[float, tuple[str, ...], dict[str, str]] | None:
        """The draft agreement when this turn made one ready, else None."""
        theirs = self.t.standing.get(other(side))
        if theirs is None:
            return None
        if action.signal is Signal.CONSENSUS:
            return theirs  # acceptance takes the standing package as offered
        mine = self.t.standing.get(side)
        if mine is not None and abs(mine[0] - theirs[0]) <= SAME_OFFER * max(abs(theirs[0]), 1.0):
            return mine[0], theirs[1] or mine[1], {**theirs[2], **mine[2]}
        return None

    async def _verify(
        self, side: Side, amount: float, clauses: tuple[str, ...], options: dict[str, str]
    ) -> Outcome | None:
        """VERIFY: audit, then sign; None sends the table back to BARG."""
        if self.t.auditor:
            report = await self._audit(amount, clauses)
            if report.flag == "veto":
                self.t.standing.clear()  # the draft is void; both sides propose afresh
                return None
            if report.flag == "warn":
                clauses = report.revised
                if (await self._audit(amount, clauses)).flag == "veto":
                    self.t.standing.clear()
                    return None
        signed = [s for s in ("plaintiff", "defendant") if self.t.counsel[s].confirm(amount)]
        if len(signed) < 2:
            self.s.system(f"signature refused at {amount:,.0f}; bargaining resumes", "verify")
            self.t.standing.clear()
            return None
        self.s.system(_signed_text(amount, clauses, self.t.unit, self.t.auditor), "verify")
        how = (
            "audited and signed by both sides"
            if self.t.auditor
            else "signed by both sides without a compliance audit (no auditor at this table)"
        )
        return Outcome(
            Status.RESOLVED,
            f"settled at {amount:,.2f} {self.t.unit} at counsel turn {self.s.party_turn}, "
            f"{how}".replace("  ", " "),
            dict(options),
            {self.t.term_id: round(amount, 2)},
        )

    async def _audit(self, amount: float, clauses: tuple[str, ...]) -> Audit:
        """The auditor seat's audit of the draft, recorded as its turn: the flag, then the
        clauses the rules struck or, for a model's audit, its verdict on each clause."""
        reviewer = self.t.reviewer
        report = await reviewer.review(amount, clauses, self.t.language, self.t.unit)
        self.t.violations += len(report.violations)
        fields = {"flag": report.flag, "violations": str(len(report.violations))}
        if report.notes:
            fields["verdicts"] = "; ".join(report.notes)
            said = list(report.notes)
        else:
            said = [
                f"struck: {c}" for c in sorted({v.clause for v in report.violations if v.clause})
            ]
        move = Intervention("\n".join([f"Compliance audit: {report.summary()}", *said]), fields)
        self.s.seat_spoke(
            "auditor", reviewer, move, 0.0, "verify", speaker="auditor", turn_role="system"
        )
        return report

    async def _insertions(self, side: Side) -> None:
        """The mediator on a stall, then legal aid when the vulnerable side needs it."""
        a, b = self.t.standing.get("plaintiff"), self.t.standing.get("defendant")
        if a is not None and b is not None:
            self.t.gaps.append(abs(a[0] - b[0]))
        if self.t.mediator is not None and self._stalled():
            assert a is not None and b is not None
            view = self.s.view("mediator")
            move = await self.t.mediator.stall(
                view, a[0], b[0], self.t.term_id, self.t.language, self.t.unit
            )
            self.s.seat_spoke("mediator", self.t.mediator, move, 0.0, "barg")
            self.t.gaps.clear()
        if self.t.aid is not None and side == self.t.vulnerable:
            self._aid(side)

    def _stalled(self) -> bool:
        g = self.t.gaps
        n = self.t.stall_turns
        scale = max(self.t.batna.expected_award, 1.0)
        return len(g) >= n and g[-n] - g[-1] <= SAME_OFFER * scale

    def _aid(self, side: Side) -> None:
        assert self.t.aid is not None
        standing = self.t.standing.get(other(side))
        if standing is None:
            return
        kind, why = self.t.aid.need(
            standing[0], standing[1], side, self.t.batna, self.t.language, self.t.unit
        )
        # Once per kind of need (below BATNA, missing fields): advice, not a chorus.
        if not kind or kind in self.t.aid_given:
            return
        self.t.aid_given.add(kind)
        floor = self.t.batna.reservation(side)
        name = self.s.scenario.party(self.t.counsel[side].party_id).name
        move = self.t.aid.advise(name, why, floor, self.t.language, self.t.unit)
        self.s.seat_spoke("legal-aid", self.t.aid, move, 0.0, "barg", speaker="legal-aid")
        self.t.counsel[side].heed(floor)


UNAUDITED = "without a compliance audit"


def _signed_text(amount: float, clauses: tuple[str, ...], unit: str, audited: bool) -> str:
    """The signed agreement: its amount and clauses, and, when no auditor sat at the
    table, that nobody checked them (the clauses are as drafted)."""
    if audited:
        return "\n".join([f"Agreement signed: {amount:,.2f} {unit}", *(f"- {c}" for c in clauses)])
    return "\n".join(
        [
            f"Agreement signed {UNAUDITED}: {amount:,.2f} {unit}",
            *(f"- {c}" for c in clauses),
            f"unaudited: no auditor sat at this table; the {len(clauses)} clause(s) above "
            "are signed as drafted, unchecked",
        ]
    )
