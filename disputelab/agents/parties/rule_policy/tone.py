"""The tone a rule party takes, from its resentment and its persona."""

from __future__ import annotations

import random

from disputelab.agents.utility import tone_switches
from disputelab.episode import Tone
from disputelab.scenario.behaviour import Behaviour
from disputelab.scenario.schema import Strategy
from disputelab.scenario.tki import Point


class ToneOfVoice:
    """Dug in, a party turns hostile, the more readily the more expressive its culture
    (`expressive`, 0-1); a reactive competing party flares up once resentful; a calm
    accommodating or collaborating party sounds warm; otherwise it is neutral."""

    __slots__ = (
        "dug_in_chance",
        "dug_in_expressive",
        "expressive",
        "flare_reactivity",
        "flare_resentment",
        "flares",
        "reactivity",
        "warm_below",
        "warms",
    )

    def __init__(
        self, b: Behaviour, point: Strategy | Point, reactivity: float, expressive: float
    ) -> None:
        self.expressive = expressive
        self.reactivity = reactivity
        self.flare_resentment = b["tone.flare_resentment"]
        self.flare_reactivity = b["tone.flare_reactivity"]
        self.warm_below = b["tone.warm_below"]
        self.dug_in_chance = b["tone.dug_in_hostile"]
        self.dug_in_expressive = b["tone.dug_in_expressive"]
        self.flares, self.warms = tone_switches(point, b)

    def of_turn(self, dug_in: bool, resentment: float, rng: random.Random) -> Tone:
        """The tone of a turn; one draw from `rng` when dug in, none otherwise."""
        if dug_in and rng.random() < self.dug_in_chance + self.dug_in_expressive * self.expressive:
            return "hostile"
        hot = resentment > self.flare_resentment and self.reactivity > self.flare_reactivity
        if self.flares and hot:
            return "hostile"
        if self.warms and resentment < self.warm_below:
            return "warm"
        return "neutral"
