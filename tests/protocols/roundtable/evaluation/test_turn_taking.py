"""Speaking shares, their Gini coefficient, interruptions and voiced motivation."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from disputelab.episode import Action, Episode, Thought, Turn, TurnChoice
from disputelab.protocols.roundtable.evaluation.turn_taking import gini, turn_taking_scores


def test_gini_on_hand_computed_examples() -> None:
    assert gini([5, 5, 5]) == 0.0
    assert gini([0, 0, 9]) == 2 / 3  # one of three holds everything: (n-1)/n
    # [1, 2, 3]: sum (2i-n-1) x_i = -2*1 + 0*2 + 2*3 = 4; / (3 * 6) = 2/9
    assert math.isclose(gini([3, 1, 2]), 2 / 9)
    assert math.isnan(gini([])) and math.isnan(gini([0, 0]))


@given(st.lists(st.integers(min_value=0, max_value=100), min_size=1, max_size=8))
def test_gini_lies_between_equality_and_one_party_holding_all(counts: list[int]) -> None:
    g = gini(counts)
    if sum(counts) == 0:
        assert math.isnan(g)
        return
    n = len(counts)
    assert -1e-12 <= g <= (n - 1) / n + 1e-12
    assert math.isclose(gini([c * 3 for c in counts]), g)  # scale-free


def _turn(i: int, speaker: str, choice: TurnChoice | None = None) -> Turn:
    return Turn(i, i + 1, speaker, "party", "...", Action("...", {}), choice=choice)


def _choice(rule: str, motivation: float) -> TurnChoice:
    t = Thought("x", "a", "x", motivation, motivation)
    return TurnChoice("b", rule, motivation, "x", {"a": [t]}, {"a": motivation})  # type: ignore[arg-type]


def test_scores_count_every_party_including_the_silent_one() -> None:
    ep = Episode("s", "roundtable", 0, {})
    ep.turns = [
        _turn(0, "a", _choice("self-selected", 3.0)),
        _turn(1, "b", _choice("interrupted", 4.0)),
        _turn(2, "a", _choice("predicted", math.nan)),
    ]
    scores = turn_taking_scores(ep, ["a", "b", "c"])
    assert math.isclose(scores["speaking_gini"].value, gini([2, 1, 0]))
    assert (
        scores["quietest_share"].value == 0.0
        and "c spoke least" in scores["quietest_share"].explanation
    )
    assert scores["interruptions"].value == 1.0
    assert scores["spoken_motivation"].value == 3.5  # the NaN rating is left out


def test_cyclic_episodes_get_shares_but_no_motivation_measures() -> None:
    ep = Episode("s", "roundtable", 0, {})
    ep.turns = [_turn(i, "ab"[i % 2]) for i in range(4)]
    scores = turn_taking_scores(ep, ["a", "b"])
    assert scores["speaking_gini"].value == 0.0
    assert "interruptions" not in scores and "spoken_motivation" not in scores
