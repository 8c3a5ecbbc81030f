"""`PackageChoice`: which package a rule party backs, given its target and the table."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from disputelab.agents.base import PublicTurn
from disputelab.agents.parties.rule_memos import RuleMemos, build_candidates
from disputelab.agents.parties.rule_policy.choice import PackageChoice
from disputelab.agents.parties.rule_policy.reading import TableReading
from disputelab.agents.parties.rule_policy.resentment import Resentment
from disputelab.agents.utility import preference_table
from disputelab.episode import Stance
from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR
from tests.helpers import scenario

S = scenario("workplace")
ME = S.parties[0].id
TABLE = preference_table(S, S.parties[0])
# A party's candidates and its readings come from its run's memos, as in `RuleParty`: the
# memo of choices keys on the ids of readings.
MEMOS = RuleMemos()
CAND = MEMOS.candidates(TABLE, "compromising")


def _choice(full: bool = False, band: float = 0.3, deference: float = 0.5) -> PackageChoice:
    return PackageChoice(TABLE, CAND, deference, band, full)


def _heard(options: list[list[int]]) -> TableReading:
    """A reading of the other parties, each backing its list of option indices."""
    reading = TableReading(TABLE, ME, MEMOS)
    dialogue = []
    for i, (party, backed) in enumerate(zip(S.parties[1:], options, strict=False)):
        stances = {
            topic: Stance(TABLE.option_ids[j][backed[j]], (TABLE.option_ids[j][backed[j]],))
            for j, topic in enumerate(TABLE.topic_ids)
        }
        dialogue.append(PublicTurn(i, i, party.id, "party", "...", stances))
    reading.observe(dialogue, Resentment(DEFAULT_BEHAVIOUR, 0.0, 0.5))
    return reading


PACKAGE = st.tuples(*(st.integers(0, len(o) - 1) for o in TABLE.option_ids))


@given(a=st.floats(0, 1), b=st.floats(0, 1))
def test_fewer_packages_are_in_reach_as_the_target_rises_and_always_one(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    choice = _choice()
    assert choice.prefix(hi) <= choice.prefix(lo)
    assert choice.prefix(hi) >= 1
    n = choice.prefix(lo)
    assert all(-u >= lo - 1e-12 for u in CAND.utility_desc[:n])


@given(pkg=PACKAGE, target=st.floats(0, 1))
def test_a_package_is_worth_it_when_feasible_and_worth_the_target(
    pkg: tuple[int, ...], target: float
) -> None:
    feasible = all(TABLE.ok[j][o] for j, o in enumerate(pkg))
    worth = sum(TABLE.w[j] * TABLE.v[j][o] for j, o in enumerate(pkg))
    assert _choice().worth_it(pkg, target) == (feasible and worth >= target - 1e-12)
    assert abs(_choice().utility(pkg) - worth) < 1e-12


@settings(max_examples=60, deadline=None)
@given(
    target=st.floats(0.3, 1),
    others=st.lists(PACKAGE, min_size=0, max_size=2),
    proposal=st.one_of(st.none(), PACKAGE),
    full=st.booleans(),
)
def test_the_choice_is_always_worth_the_target_and_a_negotiator_stays_in_its_band(
    target: float, others: list[tuple[int, ...]], proposal: tuple[int, ...] | None, full: bool
) -> None:
    choice = _choice(full)
    pkg = choice.best_supported(proposal, _heard([list(o) for o in others]), target)
    worth = choice.utility(pkg)
    best = -CAND.utility_desc[0]
    assert choice.worth_it(pkg, min(target, best))
    if not full:
        n = choice.prefix(target)
        assert worth <= target + 0.3 + 1e-12 or pkg == CAND.packages[n - 1]


def test_with_nobody_heard_it_backs_its_best_package() -> None:
    assert _choice(full=True).best_supported(None, _heard([]), 0.2) == CAND.packages[0]


def test_a_memoised_answer_is_the_one_worked_out_afresh() -> None:
    reading = _heard([[0, 0, 0, 0], [1, 1, 1, 1]])
    for target in (0.9, 0.7, 0.5):
        warm = _choice().best_supported(None, reading, target)
        assert _choice().best_supported(None, reading, target) == warm  # read from the memo
        fresh = build_candidates(TABLE, "compromising")
        assert (
            PackageChoice(TABLE, fresh, 0.5, 0.3, False).best_supported(None, reading, target)
            == warm
        )
