"""The selection rules of motivated turn-taking, as pure functions."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from disputelab.episode import Thought
from disputelab.protocols.roundtable.turn_taking import ANYONE, boosted, choose, selects

ratings = st.floats(min_value=1.0, max_value=5.0, allow_nan=False)


def thought(party: str, rating: float) -> Thought:
    return Thought(f"{party}:0:0", party, f"{party} has a point", rating, rating)


@given(ratings, st.integers(min_value=0, max_value=500))
def test_silence_only_ever_raises_motivation_and_stays_on_the_scale(raw: float, n: int) -> None:
    b = boosted(raw, n)
    assert 1.0 <= b <= 5.0
    assert b >= round(raw, 1) - 1e-9
    assert boosted(raw, n + 1) >= b


def test_the_boost_is_one_percent_per_silent_turn_rounded_to_one_decimal() -> None:
    assert boosted(3.0, 0) == 3.0
    assert boosted(3.0, 5) == round(3.0 * 1.01**5, 1) == 3.2
    assert boosted(4.9, 10) == 5.0  # clipped
    assert math.isnan(boosted(math.nan, 3))


def test_a_party_selects_by_who_the_turn_was_predicted_for() -> None:
    # predicted for it: unconditionally, however low the rating
    assert selects(1.0, "a", "a", 3.0, 2.5) == "predicted"
    # open floor: at the self-selection threshold
    assert selects(3.0, "a", ANYONE, 3.0, 2.5) == "self-selected"
    assert selects(2.9, "a", ANYONE, 3.0, 2.5) is None
    # predicted for another: at the interrupt threshold
    assert selects(2.5, "a", "b", 3.0, 2.5) == "interrupted"
    assert selects(2.4, "a", "b", 3.0, 2.5) is None
    # a rating that failed never selects
    assert selects(math.nan, "a", "a", 3.0, 2.5) is None


THRESHOLDS = {p: (3.0, 2.5) for p in "abcd"}


def test_the_highest_selected_motivation_wins() -> None:
    new = {"a": [thought("a", 1.5)], "b": [thought("b", 3.4), thought("b", 2.0)]}
    c = choose(new, {}, "a", THRESHOLDS, ["a", "b"])
    assert c.speaker == "b" and c.rule == "interrupted" and c.selected == {"a": 1.5, "b": 3.4}


def test_the_fallback_weighs_each_partys_most_salient_thought() -> None:
    new = {"a": [thought("a", 2.0)], "b": [thought("b", 2.9)]}
    salient = {"a": thought("a", 4.0), "b": thought("b", 2.9)}
    c = choose(new, salient, ANYONE, THRESHOLDS, ["a", "b"])
    assert c.rule == "fallback" and c.speaker == "a" and c.selected == {}


def test_with_no_thought_anywhere_the_longest_silent_party_speaks() -> None:
    c = choose({}, {}, ANYONE, THRESHOLDS, ["c", "a"])
    assert c.speaker == "c" and c.thought is None and c.rule == "fallback"


@given(
    st.dictionaries(st.sampled_from("abcd"), ratings, min_size=1),
    st.sampled_from(["a", "b", "c", "d", ANYONE]),
    st.sampled_from("abcd"),
)
def test_the_speaker_is_always_an_eligible_party(
    rates: dict[str, float], predicted: str, previous: str
) -> None:
    eligible = [p for p in "abcd" if p != previous]
    new = {p: [thought(p, r)] for p, r in rates.items()}
    salient = {p: ts[0] for p, ts in new.items()}
    c = choose(new, salient, predicted, THRESHOLDS, eligible)
    assert c.speaker in eligible
    if c.rule != "fallback":
        assert c.thought is not None
        assert c.thought.rating == max(c.selected.values())
