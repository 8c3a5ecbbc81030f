"""The rule agents' memos change no result: an episode played with every memo cold is the
episode played again with them warm, and the memoised helpers return what they stand for."""

from __future__ import annotations

from typing import Any

import pytest

from disputelab.agents.parties import rule_memos, voice
from disputelab.agents.utility import _build_table
from disputelab.episode import Episode, Stance
from tests.helpers import play, scenario


def _clear_memos() -> None:
    rule_memos.READINGS.clear()
    rule_memos.STANCES.clear()
    rule_memos.WORTH_WORDS.clear()
    voice._PHRASES.clear()
    _build_table.cache_clear()  # the candidates and their memos hang on the tables


def _played(ep: Episode) -> list[dict[str, Any]]:
    turns = [t.to_dict() for t in ep.turns]
    for t in turns:
        t.pop("latency_s")
    return turns


@pytest.mark.parametrize("disclosure", ["negotiator", "full"])
@pytest.mark.parametrize("sid", ["tenancy", "workplace", "community-centre"])
def test_an_episode_played_with_cold_memos_is_the_one_played_with_warm_ones(
    sid: str, disclosure: str
) -> None:
    s = scenario(sid)
    _clear_memos()
    cold = [play(s, "rule", seed, 60, disclosure) for seed in range(4)]  # type: ignore[arg-type]
    warm = [play(s, "rule", seed, 60, disclosure) for seed in range(4)]  # type: ignore[arg-type]
    for a, b in zip(cold, warm, strict=True):
        assert _played(a) == _played(b)
        assert a.outcome == b.outcome
        assert a.initial_consensus == b.initial_consensus


@pytest.mark.parametrize("worth", [0.0, -0.0, 0.5, 1 / 3, 0.99995, 1.0, 0.123456789])
def test_worth_words_are_the_four_decimal_format(worth: float) -> None:
    for _ in range(2):  # the second call reads the memo
        assert rule_memos.worth_words(worth) == f"{worth:.4f}"


def test_pooled_stances_are_equal_to_the_stance_asked_for() -> None:
    a = rule_memos.shared_stance(Stance("A", ("A", "B")))
    b = rule_memos.shared_stance(Stance("A", ("A", "B")))
    assert a is b
    assert a == Stance("A", ("A", "B"))
    assert rule_memos.shared_stance(Stance("A", ("A",))) != a
