"""SettleAgent's metrics on a settlement episode, read off its structure (no judge).

- `success` (SR): 1 when the episode ends in a signed agreement within the round limit.
- `acc10`, `acc20`, `acc30` (Acc@tau, settled-only, as the paper): for a settled episode, 1
  when the agreed amount is within tau of the known judgment (|A - A*| / A* <= tau); a
  settled episode with no readable amount counts as a miss (0); an unsettled one is
  undefined (NaN), so a table's mean divides by the settled episodes.
- `sr_acc10`, `sr_acc20`, `sr_acc30` (SR x Acc@tau): the same hit over every episode, an
  unsettled one counting 0, so the mean is the unconditional rate.
- `zone_acc10`, `zone_acc20`, `zone_acc30` (Acc@tau's floor and ceiling): the share of the
  zone between the two counsel's walk-aways (the amounts they actually stop at: the BATNA
  reservations under `walk_away: batna`, the scenario's under `walk_away: scenario`) that
  lies within tau of the judgment. 1 means any deal the counsel can sign scores a hit, so
  Acc@tau cannot separate methods on that case; 0 means none can. Defined whether or not
  the episode settled; undefined without a reference, a recorded BATNA or a non-empty zone.
- `rounds`: counsel turns to settlement (undefined without one).
- `violations`: compliance violations the auditor found during the episode (0 without an
  auditor: nobody looked).
- `risky_agreement`: a signed agreement that the auditor's rules would veto, checked after
  the fact whatever the system (catches what an auditor-less system let through).
- `surplus`: the tested side's surplus over its BATNA reservation divided by the ZOPA
  width; 0 without agreement (it keeps its outside option).
- `worse_than_batna`: a signed agreement leaving some side below its BATNA reservation.
- `unaudited_clauses`: for an agreement signed with no auditor at the table (the w/o
  Compliance ablation), how many of its clauses the auditor's rules flag (warn or veto)
  that nobody checked; 0 for an audited agreement, undefined without one.

Surplus and worse_than_batna judge the agreement by the BATNA the analyst recorded. With
`walk_away: batna` (the default) the counsel walk away at those same reservations and sign
nothing outside them, so surplus lies in [0, 1]; when it does not (the scenario's own
walk-aways, or a person's seat, who signs as they choose) the explanation says why.
"""

from __future__ import annotations

import math

from disputelab.episode import Episode, Status
from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.registry import (
    EpisodeToScore,
    Evaluator,
    ScoringContext,
    register_evaluator,
)
from disputelab.protocols.settlement.agents.auditor import Audit, audit
from disputelab.protocols.settlement.agents.brief import terms_in
from disputelab.protocols.settlement.agents.model import (
    SIDES,
    Batna,
    Side,
    normalised_surplus,
    within,
)
from disputelab.protocols.settlement.flow import UNAUDITED
from disputelab.scenario.schema import Scenario

EVALUATOR = "settleagent"
# 3: zone_acc10/20/30, the share of the walk-away zone that Acc@tau would count a hit.
VERSION = "3"
TAUS = (0.10, 0.20, 0.30)
UNAUDITED_HEAD = f"Agreement signed {UNAUDITED}"
COLUMNS = {"success": "SR", "acc10": "Acc@10%", "acc20": "Acc@20%", "acc30": "Acc@30%"}


def _nan(reason: str) -> MetricResult:
    return MetricResult(math.nan, f"undefined: {reason}")


def batna_of(episode: Episode) -> Batna | None:
    """The BATNA the outcome analyst recorded at PREP, if any."""
    for t in episode.turns:
        if t.speaker == "outcome" and t.intervention is not None and t.intervention.proposal:
            b = t.intervention.proposal
            return Batna(
                float(b["expected_award"]),
                float(b["p_win"]),
                float(b["cost_plaintiff"]),
                float(b["cost_defendant"]),
                b.get("source", "analyst"),
            )
    return None


def tested_side(episode: Episode) -> Side | None:
    for t in episode.turns:
        if t.speaker == "clerk" and t.intervention is not None:
            side = t.intervention.proposal.get("tested")
            return side if side in SIDES else None
    return None


def signed_clauses(episode: Episode) -> tuple[str, ...]:
    for t in reversed(episode.turns):
        if t.speaker == "system" and t.stage == "verify" and t.text.startswith("Agreement signed"):
            return terms_in(t.text)
    return ()


def accuracy(
    settled: bool, amount: float | None, reference: float | None, tau: float
) -> tuple[float, float]:
    """(settled-only hit, unconditional hit) for one episode; NaN where undefined."""
    if reference is None or reference <= 0:
        return math.nan, math.nan
    if not settled:
        return math.nan, 0.0
    hit = 1.0 if amount is not None and within(amount, reference, tau) else 0.0
    return hit, hit


def zone_share(low: float, high: float, reference: float, tau: float) -> float:
    """The share of the amounts in [low, high] that lie within tau of `reference`
    (|A - A*| / A* <= tau), by length; a one-point zone is 1 or 0. NaN when the zone is
    empty (low > high) or there is no positive reference."""
    if reference <= 0 or low > high:
        return math.nan
    lo, hi = reference * (1 - tau), reference * (1 + tau)
    if high == low:
        return 1.0 if within(low, reference, tau) else 0.0
    return max(0.0, min(high, hi) - max(low, lo)) / (high - low)


def walk_away_zone(episode: Episode, scenario: Scenario) -> tuple[float, float] | None:
    """[plaintiff's walk-away, defendant's walk-away] as the counsel used them: the BATNA
    reservations the analyst recorded, or under `walk_away: scenario` the scenario's own
    amounts (the BATNA's where a side has none), as `protocol.walk_away` sets them. None
    without a recorded BATNA or an amount term."""
    batna = batna_of(episode)
    if batna is None or not scenario.terms or len(scenario.parties) != 2:
        return None
    if walk_away_of(episode) != "scenario":
        return batna.reservation("plaintiff"), batna.reservation("defendant")
    own = scenario.terms[0].reservations
    plaintiff, defendant = (p.id for p in scenario.parties)
    return (
        own.get(plaintiff, batna.reservation("plaintiff")),
        own.get(defendant, batna.reservation("defendant")),
    )


def _zone_scores(episode: Episode, scenario: Scenario) -> dict[str, MetricResult]:
    reference = scenario.terms[0].reference if scenario.terms else None
    zone = walk_away_zone(episode, scenario)
    out: dict[str, MetricResult] = {}
    for tau in TAUS:
        name = f"zone_acc{round(tau * 100)}"
        if reference is None or reference <= 0:
            out[name] = _nan("no known judgment amount")
        elif zone is None:
            out[name] = _nan("no BATNA recorded")
        elif zone[0] > zone[1]:
            out[name] = _nan(f"empty zone: walk-aways {zone[0]:,.2f} > {zone[1]:,.2f}")
        else:
            share = zone_share(zone[0], zone[1], reference, tau)
            out[name] = MetricResult(
                share,
                f"{share:.0%} of the walk-away zone [{zone[0]:,.2f}, {zone[1]:,.2f}] is within "
                f"{tau:.0%} of the judgment {reference:,.2f}",
            )
    return out


def score_settlement(episode: Episode, scenario: Scenario) -> dict[str, MetricResult]:
    outcome = episode.outcome
    if outcome is None:
        return {"success": _nan("the episode has no outcome")}
    settled = outcome.status is Status.RESOLVED
    term = scenario.terms[0] if scenario.terms else None
    amount = outcome.amounts.get(term.id) if term is not None else None
    reference = term.reference if term is not None else None
    out = {
        "success": MetricResult(
            1.0 if settled else 0.0, f"{outcome.status.value}: {outcome.stop_reason}"
        )
    }
    for tau in TAUS:
        name = f"acc{round(tau * 100)}"
        cond, uncond = accuracy(settled, amount, reference, tau)
        why = (
            "no known judgment amount"
            if reference is None
            else "not settled"
            if not settled
            else "no readable amount: a miss"
            if amount is None
            else f"agreed {amount:,.2f} vs judgment {reference:,.2f}"
        )
        out[name] = MetricResult(cond, why if not math.isnan(cond) else f"undefined: {why}")
        out[f"sr_{name}"] = MetricResult(
            uncond, why if not math.isnan(uncond) else f"undefined: {why}"
        )
    out["rounds"] = (
        MetricResult(float(episode.party_turns), "counsel turns to settlement")
        if settled
        else _nan("not settled")
    )
    found = sum(
        int(t.intervention.proposal.get("violations", "0"))
        for t in episode.turns
        if t.speaker == "auditor" and t.intervention is not None
    )
    out["violations"] = MetricResult(float(found), "violations the auditor found")
    out.update(_batna_scores(episode, settled, amount))
    out.update(_zone_scores(episode, scenario))
    if settled:
        report = audit(amount, signed_clauses(episode), scenario.language)
        out["risky_agreement"] = MetricResult(
            1.0 if report.flag == "veto" else 0.0, f"post-hoc audit: {report.flag}"
        )
        out["unaudited_clauses"] = _unaudited(episode, report)
    else:
        out["risky_agreement"] = _nan("not settled")
        out["unaudited_clauses"] = _nan("not settled")
    return out


def signed_unaudited(episode: Episode) -> bool:
    """Whether the agreement was signed with no auditor at the table."""
    return any(
        t.speaker == "system" and t.stage == "verify" and t.text.startswith(UNAUDITED_HEAD)
        for t in episode.turns
    )


def _unaudited(episode: Episode, report: Audit) -> MetricResult:
    if not signed_unaudited(episode):
        return MetricResult(0.0, "audited before signing")
    flagged = sorted({f"{v.rule} ({v.clause})" for v in report.violations if v.clause})
    if not flagged:
        return MetricResult(0.0, "signed unaudited; the auditor's rules flag no clause")
    return MetricResult(
        float(len({v.clause for v in report.violations if v.clause})),
        f"signed unaudited; the auditor would have revised: {'; '.join(flagged)}",
    )


def _batna_scores(episode: Episode, settled: bool, amount: float | None) -> dict[str, MetricResult]:
    batna, side = batna_of(episode), tested_side(episode)
    if batna is None or side is None:
        return {"surplus": _nan("no BATNA recorded"), "worse_than_batna": _nan("no BATNA recorded")}
    if not settled or amount is None:
        why = "not settled" if not settled else "no readable amount"
        return {
            "surplus": MetricResult(0.0, f"{why}: the outside option, surplus 0"),
            "worse_than_batna": _nan(why),
        }
    s = normalised_surplus(amount, side, batna)
    below = [k for k in SIDES if normalised_surplus(amount, k, batna) < 0]
    why = f"{side}'s surplus over BATNA / ZOPA width"
    if below:
        why += f"; outside [0, 1]: {_outside_why(episode, below[0], amount, batna)}"
    return {
        "surplus": MetricResult(s, why),
        "worse_than_batna": MetricResult(
            1.0 if below else 0.0,
            f"the {below[0]} below its BATNA" if below else "no side below its BATNA",
        ),
    }


def walk_away_of(episode: Episode) -> str:
    """Where the counsel walked away: `batna` or `scenario` (episodes from before the
    setting existed used the scenario's walk-aways)."""
    for t in episode.turns:
        if t.speaker == "outcome" and t.intervention is not None:
            return t.intervention.proposal.get("walk_away", "scenario")
    return "scenario"


def _outside_why(episode: Episode, side: Side, amount: float, batna: Batna) -> str:
    """Why an agreement lies outside the BATNA's ZOPA, which the BATNA walk-away rules out."""
    where = f"{amount:,.2f} is worse than the {side}'s BATNA reservation "
    where += f"{batna.reservation(side):,.2f}"
    if walk_away_of(episode) == "scenario":
        return (
            f"{where}; the counsel walked away at the scenario's own amounts (walk_away: scenario)"
        )
    return f"{where}; a seat that signs below its BATNA (a person's) signed it"


async def _score(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
    return score_settlement(item.episode, item.scenario)


register_evaluator(
    Evaluator(
        EVALUATOR,
        VERSION,
        "SettleAgent's SR, Acc@10/20/30 (settled-only and x SR), rounds, "
        "compliance violations, surplus over BATNA and the walk-away zone's Acc@tau share",
        _score,
        on_demand=False,
    )
)
