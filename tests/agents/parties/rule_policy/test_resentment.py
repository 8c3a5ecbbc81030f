"""`Resentment`: hostility and moves stir it, a mediator and time soothe it, and it never
goes negative."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from disputelab.agents.parties.rule_policy.resentment import Backed, Resentment
from disputelab.agents.utility import PreferenceTable, preference_table
from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR, Behaviour
from tests.helpers import scenario

B = DEFAULT_BEHAVIOUR


def _table() -> PreferenceTable:
    s = scenario("tenancy")
    return preference_table(s, s.party("tenant"))


TABLE = _table()
OPTIONS = [len(o) for o in TABLE.option_ids]
BACKED = st.tuples(*(st.one_of(st.none(), st.integers(0, n - 1)) for n in OPTIONS))
EVENT = st.one_of(
    st.tuples(st.just("react"), st.booleans(), st.one_of(st.none(), BACKED), BACKED),
    st.tuples(st.just("calm")),
    st.tuples(st.just("cool")),
)


@given(
    events=st.lists(EVENT, max_size=40),
    reactivity=st.floats(0, 1),
    deference=st.floats(0, 1),
    soothe=st.floats(0, 5),
)
def test_resentment_is_never_negative(
    events: list[tuple[object, ...]], reactivity: float, deference: float, soothe: float
) -> None:
    mood = Resentment(Behaviour.of({"resentment.soothe": soothe}), reactivity, deference)
    for event in events:
        if event[0] == "react":
            _, hostile, before, after = event
            mood.react(hostile, before, after, TABLE)  # type: ignore[arg-type]
        elif event[0] == "calm":
            mood.calm()
        else:
            mood.cool()
        assert mood.level >= 0.0


def test_a_position_repeated_calmly_changes_nothing() -> None:
    mood = Resentment(B, 1.0, 0.5)
    mood.level = 0.3
    backed: Backed = (0, 1, 2, 0)
    mood.react(False, backed, backed, TABLE)
    assert mood.level == 0.3


def test_hostility_adds_in_proportion_to_reactivity() -> None:
    mood = Resentment(B, 0.5, 0.5)
    mood.react(True, (0, 0, 0, 0), (0, 0, 0, 0), TABLE)
    assert mood.level == B["resentment.hostility"] * 0.5


def test_a_move_to_an_option_it_cannot_accept_hurts_by_the_topics_weight() -> None:
    bad = [j for j, ok in enumerate(TABLE.ok[0]) if not ok]
    good = [j for j, ok in enumerate(TABLE.ok[0]) if ok]
    assert bad and good
    mood = Resentment(B, 1.0, 0.5)
    mood.react(False, (good[0], None, None, None), (bad[0], None, None, None), TABLE)
    assert mood.level == B["resentment.hurt"] * 1.0 * TABLE.w[0]


def test_a_move_to_a_better_option_soothes_and_to_a_worse_one_hurts() -> None:
    values = TABLE.v[0]
    ok = [j for j, fine in enumerate(TABLE.ok[0]) if fine]
    best, worst = max(ok, key=values.__getitem__), min(ok, key=values.__getitem__)
    worse = Resentment(B, 1.0, 0.5)
    worse.react(False, (best, None, None, None), (worst, None, None, None), TABLE)
    assert worse.level > 0
    better = Resentment(B, 1.0, 0.5)
    better.level = 0.5
    better.react(False, (worst, None, None, None), (best, None, None, None), TABLE)
    assert better.level < 0.5


def test_a_first_statement_is_no_move_unless_it_names_the_unacceptable() -> None:
    mood = Resentment(B, 1.0, 0.5)
    ok = tuple(next(j for j, fine in enumerate(row) if fine) for row in TABLE.ok)
    mood.react(False, None, ok, TABLE)
    assert mood.level == 0.0


def test_a_mediator_calms_with_deference_and_time_cools() -> None:
    mood = Resentment(B, 1.0, 0.8)
    mood.level = 1.0
    mood.calm()
    assert mood.level == 1.0 - B["mediator.calming"] * 0.8
    level = mood.level
    mood.cool()
    assert mood.level == level * B["resentment.cooling"]


def test_it_digs_in_then_walks_away_at_its_thresholds() -> None:
    mood = Resentment(B, 1.0, 0.5)
    assert not mood.dug_in and not mood.walks_away
    mood.level = B["resentment.dig_in"]
    assert mood.dug_in and not mood.walks_away
    mood.level = B["resentment.walk_away"]
    assert mood.dug_in and mood.walks_away
