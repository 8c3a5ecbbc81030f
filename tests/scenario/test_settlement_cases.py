"""The built-in settlement cases: at least twenty, in English and Chinese, each with an
amount term, both sides' targets and walk-aways, a zone of agreement and a known judgment."""

from __future__ import annotations

from disputelab.protocols.settlement.agents.brief import sides
from disputelab.protocols.settlement.agents.staff import AnalystSettings, estimate_batna
from disputelab.protocols.settlement.evaluation import zone_share
from disputelab.scenario.checks import unsettlable
from disputelab.scenario.library import builtin_scenarios
from disputelab.scenario.schema import Scenario

CASES = {k: v for k, v in builtin_scenarios().items() if k.startswith("settle-")}
WIDE = {
    "settle-cyclist-pothole",
    "settle-forklift-foot-injury",
    "settle-package-holiday-illness",
    "settle-photo-licence-breach",
    "settle-redundancy-selection",
    "settle-roof-leak-repair",
    "settle-service-charge-overcharge",
    "settle-survey-missed-subsidence",
}


def test_there_are_at_least_twenty_cases_in_both_languages() -> None:
    assert len(CASES) >= 20
    languages = [c.language for c in CASES.values()]
    assert languages.count("en") >= 6 and languages.count("zh") >= 5


def test_every_case_has_an_amount_term_with_a_zopa_and_a_known_judgment() -> None:
    for sid, c in CASES.items():
        assert len(c.parties) == 2, sid
        term = c.terms[0]
        plaintiff, defendant = (p.id for p in c.parties)
        assert term.targets[plaintiff] > term.targets[defendant], sid
        assert term.reservations[plaintiff] <= term.reservations[defendant], sid
        assert term.reference is not None and term.reference > 0, sid
        assert c.legal is not None and c.legal.dispute_type, sid
        assert not unsettlable(c), sid  # the clause topic has a common option


def _batna_zone(case: Scenario) -> tuple[float, float]:
    """The walk-away zone under the default `walk_away: batna` and the rule analyst."""
    term = case.terms[0]
    batna = estimate_batna(term, sides(case), AnalystSettings(), "analyst")
    return batna.reservation("plaintiff"), batna.reservation("defendant")


def test_acc_at_10_and_20_can_separate_methods_on_several_cases() -> None:
    """A case separates methods on Acc@tau only when part, not all, of the zone between
    the walk-aways lies within tau of the judgment: both under the default BATNA
    walk-aways and under the cases' own (walk_away: scenario)."""
    for tau in (0.10, 0.20):
        batna = [
            zone_share(*_batna_zone(c), c.terms[0].reference or 0, tau) for c in CASES.values()
        ]
        own = []
        for c in CASES.values():
            plaintiff, defendant = (p.id for p in c.parties)
            r = c.terms[0].reservations
            own.append(zone_share(r[plaintiff], r[defendant], c.terms[0].reference or 0, tau))
        assert sum(0 < s < 1 for s in batna) >= 6, tau
        assert sum(0 < s < 1 for s in own) >= 10, tau


def test_the_new_cases_are_played_in_wider_zones_than_the_batnas() -> None:
    """The eight cases added for Acc@10/20 give each side a walk-away of its own well
    outside the analyst's BATNA zone, asymmetric around the judgment."""
    new = [c for sid, c in CASES.items() if sid in WIDE]
    assert len(new) == len(WIDE)
    for c in new:
        plaintiff, defendant = (p.id for p in c.parties)
        r, ref = c.terms[0].reservations, c.terms[0].reference or 0
        low, high = _batna_zone(c)
        assert r[defendant] - r[plaintiff] > high - low, c.id
        assert abs((ref - r[plaintiff]) - (r[defendant] - ref)) > 0.1 * ref, c.id
