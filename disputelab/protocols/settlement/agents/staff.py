"""The neutral roles of a settlement: clerk, outcome analyst, legal aid and mediator.

- Clerk: a case digest for the table and a role brief per side (spec 2.1; each side sees
  only its own brief, information-asymmetric as the spec suggests).
- Outcome analyst (spec 2.2, 6): the BATNA. Offline it estimates the expected award J as
  the point between the claim (the plaintiff's opening) and the admitted amount (the
  defendant's opening) given by `award_share` (0.5: the court splits the difference), with
  the win probability and each side's litigation cost as a share of J from the protocol's
  parameters (all assumptions). With `batna_source: judgment` it reads the known judgment
  (`NumericTerm.reference`) with p_win = 1, as the paper does on its Tried subset: that
  leaks the Acc@tau reference to the agents, so it is off by default.
- Legal aid (spec 2.6): for the side marked vulnerable, advice when the standing offer is
  worse than its BATNA or leaves out execution fields; a counsel that heeds it will not
  settle below its BATNA reservation.
- Mediator (rule, spec 2.5): on a stall proposes the midpoint of the standing offers.

These are the rule kinds; `llm_staff.py` holds the model-backed analyst and mediator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from disputelab.agents.base import PublicTurn, UsageReporter
from disputelab.episode import Intervention
from disputelab.protocols.settlement.agents.auditor import missing_fields
from disputelab.protocols.settlement.agents.brief import Brief
from disputelab.protocols.settlement.agents.model import Batna, Side, worse_than_batna
from disputelab.scenario.schema import NumericTerm, Scenario

VULNERABLE_TRAITS = ("vulnerable", "弱势")


@dataclass(frozen=True)
class AnalystSettings:
    award_share: float = 0.5
    p_win: float = 0.8
    cost_share: float = 0.08


@dataclass(frozen=True)
class CaseView:
    """What the outcome analyst reads: the case as the clerk digested it and each side's
    public opening (the claim, the admitted amount), never a side's private walk-away or
    brief; the known judgment only under `batna_source: judgment`."""

    language: str
    unit: str
    digest: str
    facts: tuple[str, ...]
    claim: float
    admitted: float
    judgment: float | None = None


def openings(term: NumericTerm, ids: dict[str, Side]) -> tuple[float, float]:
    """(claim, admitted): the plaintiff's and the defendant's openings on `term`."""
    by_side = {side: pid for pid, side in ids.items()}
    claim = term.targets.get(by_side["plaintiff"])
    admitted = term.targets.get(by_side["defendant"])
    if claim is None or admitted is None:
        raise ValueError(
            f"term {term.id} needs a target for both sides (the claim and the admitted amount)"
        )
    return claim, admitted


def judgment_of(term: NumericTerm) -> float:
    if term.reference is None:
        raise ValueError(
            f"term {term.id} has no known judgment (reference) for batna_source judgment"
        )
    return term.reference


def estimate_batna(
    term: NumericTerm, ids: dict[str, Side], s: AnalystSettings, source: str
) -> Batna:
    """The rule outcome analyst's BATNA for `term` (see the module docstring)."""
    if source == "judgment":
        return rule_batna(0.0, 0.0, judgment_of(term), s)
    return rule_batna(*openings(term, ids), None, s)


def rule_batna(claim: float, admitted: float, judgment: float | None, s: AnalystSettings) -> Batna:
    """The BATNA by the protocol's assumptions, or from the known judgment when given."""
    if judgment is not None:
        return Batna(judgment, 1.0, s.cost_share * judgment, s.cost_share * judgment, "judgment")
    j = admitted + s.award_share * (claim - admitted)
    return Batna(j, s.p_win, s.cost_share * j, s.cost_share * j, "analyst")


def vulnerable_side(scenario: Scenario, ids: dict[str, Side]) -> Side | None:
    """The side whose party's persona traits mark it vulnerable (first found), if any."""
    for party in scenario.parties:
        if any(t.lower() in VULNERABLE_TRAITS for t in party.persona.traits):
            return ids[party.id]
    return None


_TEXT = {
    "en": {
        "digest": "Case digest ({dtype}): {brief} Issues: {issues}.",
        "batna": "Outcome analysis: if the case is tried, the expected award is {j:,.0f} {unit} "
        "with a {p:.0%} chance that the claimant prevails; each side would still spend about "
        "{c:,.0f} {unit} on litigation. Settling below {rp:,.0f} or above {rd:,.0f} is worse "
        "than going to court for one of the sides.",
        "amount_only": "The open issue is the amount and the terms of its payment; let "
        "us start with the amount.",
        "issues": "The open issues are the amount and {topics}; let us take them in turn.",
        "aid": "Legal aid to {name}: {why} Going to court is expected to give you about "
        "{floor:,.0f} {unit} after costs; you need not accept less, and a settlement should "
        "name the deadline, the payment method, liability for late payment and "
        "enforcement.",
        "below": "the standing offer of {offer:,.0f} {unit} is worse than your expected "
        "outcome in "
        "court.",
        "missing": "the standing offer leaves out {fields}.",
        "brief_aid": "You have the right to a written settlement that names when and how "
        "you are paid.",
        "midpoint": "The positions have stalled at {a:,.0f} and {b:,.0f}; "
        "I suggest {m:,.0f} {unit}.",
        "role": "You act for {name} ({side}). Your client's goal: {objective} "
        "You aim for {target:,.0f} {unit} and must not settle worse than "
        "{reservation:,.0f} {unit}.",
    },
    "zh": {
        "digest": "案情摘要（{dtype}）：{brief} 争议焦点：{issues}。",
        "batna": "诉讼结果评估：如进入审判，预计判决金额约{j:,.0f}{unit}，原告胜诉概率约{p:.0%}；"
        "双方各需承担约{c:,.0f}{unit}诉讼成本。"
        "低于{rp:,.0f}或高于{rd:,.0f}的和解对一方而言不如诉讼。",
        "issues": "待解决的问题是金额与{topics}，我们逐项讨论。",
        "amount_only": "待解决的是和解金额及其履行条款，我们从金额谈起。",
        "aid": "法律援助（致{name}）：{why}诉讼预计扣除成本后可得约{floor:,.0f}{unit}，"
        "您无需接受更低数额；"
        "和解协议应写明付款期限、付款方式、逾期责任和执行方式。",
        "below": "对方当前报价{offer:,.0f}{unit}低于您诉讼的预期结果。",
        "missing": "对方当前方案缺少{fields}。",
        "brief_aid": "您有权要求书面和解协议写明付款时间与方式。",
        "midpoint": "双方停在{a:,.0f}与{b:,.0f}，建议以{m:,.0f}{unit}达成和解。",
        "role": "您代理{name}（{side}）。委托人目标：{objective} 目标金额{target:,.0f}{unit}，"
        "不得以劣于{reservation:,.0f}{unit}的条件和解。",
    },
}


def text(language: str) -> dict[str, str]:
    return _TEXT["zh" if language.startswith("zh") else "en"]


class Clerk(UsageReporter):
    """Writes the digest, the role briefs and the minutes (the episode's turns)."""

    name = "clerk"

    def digest(self, scenario: Scenario) -> str:
        legal = scenario.legal
        x = text(scenario.language)
        brief = legal.brief if legal is not None and legal.brief else scenario.background
        issues = ", ".join(legal.points_of_contention) if legal is not None else ""
        dtype = legal.dispute_type if legal is not None and legal.dispute_type else scenario.domain
        return x["digest"].format(dtype=dtype, brief=brief, issues=issues or "-")

    def role_brief(self, scenario: Scenario, brief: Brief, unit: str) -> str:
        party = scenario.party(brief.party_id)
        side = (
            brief.side
            if not scenario.language.startswith("zh")
            else {"plaintiff": "原告", "defendant": "被告"}[brief.side]
        )
        return text(scenario.language)["role"].format(
            name=party.name,
            side=side,
            objective=party.objective,
            target=brief.target,
            reservation=brief.reservation,
            unit=unit,
        )


class OutcomeAnalyst(UsageReporter):
    """The rule outcome analyst: the BATNA from the protocol's assumptions (`award_share`,
    `p_win`, `cost_share`), or from the known judgment under `batna_source: judgment`."""

    name = "rule"

    async def estimate(self, case: CaseView, s: AnalystSettings) -> Batna:
        return rule_batna(case.claim, case.admitted, case.judgment, s)

    def report(self, batna: Batna, language: str, unit: str) -> Intervention:
        zopa_low, zopa_high = batna.reservation("plaintiff"), batna.reservation("defendant")
        words = text(language)["batna"].format(
            j=batna.expected_award,
            p=batna.p_win,
            c=batna.cost_plaintiff,
            rp=zopa_low,
            rd=zopa_high,
            unit=unit,
        )
        return Intervention(words, thought=f"BATNA source: {batna.source}")


class LegalAid(UsageReporter):
    name = "legal-aid"

    def need(
        self,
        standing: float | None,
        clauses: tuple[str, ...],
        side: Side,
        batna: Batna,
        language: str,
        unit: str,
    ) -> tuple[str, str]:
        """(kind, why) the vulnerable side needs help now: kind 'below' (an offer worse
        than its BATNA) or 'missing' (execution fields left out); ('', '') when it does not."""
        x = text(language)
        if standing is None:
            return "", ""
        if worse_than_batna(standing, side, batna):
            return "below", x["below"].format(offer=standing, unit=unit)
        gaps = missing_fields(clauses)
        if gaps:
            return "missing", x["missing"].format(fields=", ".join(gaps))
        return "", ""

    def advise(self, name: str, why: str, floor: float, language: str, unit: str) -> Intervention:
        return Intervention(
            text(language)["aid"].format(name=name, why=why, floor=floor, unit=unit), offer={}
        )


class RuleMediator(UsageReporter):
    name = "rule"

    def init_issues(self, topics: list[str], language: str) -> Intervention:
        x = text(language)
        if not topics:
            return Intervention(x["amount_only"])
        return Intervention(x["issues"].format(topics=", ".join(topics)))

    async def stall(
        self,
        dialogue: Sequence[PublicTurn],
        a: float,
        b: float,
        term_id: str,
        language: str,
        unit: str,
    ) -> Intervention:
        """What the mediator says when the talks stall at standing offers `a` and `b`,
        having heard `dialogue` (the rule mediator proposes the midpoint)."""
        return self.on_stall(a, b, term_id, language, unit)

    def on_stall(self, a: float, b: float, term_id: str, language: str, unit: str) -> Intervention:
        m = round((a + b) / 2, 2)
        return Intervention(
            text(language)["midpoint"].format(a=a, b=b, m=m, unit=unit), offer={term_id: m}
        )
