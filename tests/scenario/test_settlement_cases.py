"""The built-in settlement cases: at least twelve, in English and Chinese, each with an
amount term, both sides' targets and walk-aways, a zone of agreement and a known judgment."""

from __future__ import annotations

from disputelab.scenario.checks import unsettlable
from disputelab.scenario.library import builtin_scenarios

CASES = {k: v for k, v in builtin_scenarios().items() if k.startswith("settle-")}


def test_there_are_at_least_twelve_cases_in_both_languages() -> None:
    assert len(CASES) >= 12
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
