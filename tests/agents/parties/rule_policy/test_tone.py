"""`ToneOfVoice`: how a rule party's state shows in the tone of its turn."""

from __future__ import annotations

import random

from disputelab.agents.parties.rule_policy.tone import ToneOfVoice
from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR, Behaviour

B = DEFAULT_BEHAVIOUR


def test_an_expressive_party_that_digs_in_is_hostile() -> None:
    tone = ToneOfVoice(B, "compromising", 0.5, expressive=1.0)
    assert all(tone.of_turn(True, 0.6, random.Random(s)) == "hostile" for s in range(20))


def test_a_reserved_party_that_digs_in_is_hostile_only_sometimes() -> None:
    tone = ToneOfVoice(B, "compromising", 0.5, expressive=0.0)
    said = {tone.of_turn(True, 0.6, random.Random(s)) for s in range(40)}
    assert said == {"hostile", "neutral"}


def test_a_reactive_competing_party_flares_once_resentful() -> None:
    tone = ToneOfVoice(B, "competing", 0.8, 0.5)
    assert tone.of_turn(False, 0.3, random.Random(0)) == "hostile"
    assert tone.of_turn(False, 0.2, random.Random(0)) == "neutral"
    calm = ToneOfVoice(B, "competing", 0.2, 0.5)  # not reactive enough to flare
    assert calm.of_turn(False, 0.3, random.Random(0)) == "neutral"
    tame = ToneOfVoice(Behaviour.of({"tone.competing_flare": 0.0}), "competing", 0.8, 0.5)
    assert tame.of_turn(False, 0.3, random.Random(0)) == "neutral"


def test_a_calm_cooperative_party_sounds_warm() -> None:
    for strategy in ("accommodating", "collaborating"):
        tone = ToneOfVoice(B, strategy, 0.5, 0.5)
        assert tone.of_turn(False, 0.05, random.Random(0)) == "warm"
        assert tone.of_turn(False, 0.2, random.Random(0)) == "neutral"
    assert ToneOfVoice(B, "avoiding", 0.5, 0.5).of_turn(False, 0.0, random.Random(0)) == "neutral"


def test_only_a_dug_in_party_draws_from_the_random_stream() -> None:
    tone = ToneOfVoice(B, "competing", 0.8, 0.5)
    rng, twin = random.Random(3), random.Random(3)
    tone.of_turn(False, 0.9, rng)
    assert rng.random() == twin.random()
    tone.of_turn(True, 0.9, rng)
    twin.random()
    assert rng.random() == twin.random()
