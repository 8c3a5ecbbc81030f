"""The tone a rule party takes, from its resentment and its persona."""

from __future__ import annotations

import random

from disputelab.episode import Tone
from disputelab.scenario.behaviour import Behaviour
from disputelab.scenario.schema import Strategy


class ToneOfVoice:
    """Dug in, a party turns hostile, the more readily the more expressive its culture
    (`expressive`, 0-1); a reactive competing party flares up once resentful; a calm
    accommodating or collaborating party sounds warm; otherwise it is neutral."""

    __slots__ = ("expressive", "flares", "reactivity", "warms")

    def __init__(
        self, b: Behaviour, strategy: Strategy, reactivity: float, expressive: float
    ) -> None:
        self.expressive = expressive
        self.reactivity = reactivity
        self.flares = b["tone.competing_flare"] > 0.5 and strategy == "competing"
        self.warms = b["tone.cooperative_warm"] > 0.5 and strategy in (
            "accommodating",
            "collaborating",
        )

    def of_turn(self, dug_in: bool, resentment: float, rng: random.Random) -> Tone:
        """The tone of a turn; one draw from `rng` when dug in, none otherwise."""
        if dug_in and rng.random() < 0.4 + 0.6 * self.expressive:
            return "hostile"
        if self.flares and resentment > 0.25 and self.reactivity > 0.3:
            return "hostile"
        if self.warms and resentment < 0.1:
            return "warm"
        return "neutral"
