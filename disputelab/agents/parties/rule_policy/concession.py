"""How far a rule party has conceded: its progress along its concession curve, and the
utility it still holds out for (its target)."""

from __future__ import annotations

import math
import random

from disputelab.agents.base import TurnContext
from disputelab.agents.utility import concession_target, culture_beta_factor, strategy_beta
from disputelab.scenario.behaviour import Behaviour
from disputelab.scenario.schema import Persona


class Concession:
    """Progress along the concession curve of exponent `beta`, from a target of 1 down
    to `floor` (the fallback's utility) over the party's share of the turn budget.

    The target never rises and never drops below the floor (`concession_target`): the
    rule policy's guarantees rest on it. Resentment slows progress; it never reverses it.
    """

    __slots__ = ("beta", "floor", "progress", "spread", "target")

    def __init__(self, beta: float, floor: float, spread: float = 1.0) -> None:
        self.beta = beta
        self.floor = floor
        self.progress = 0.0
        self.target = 1.0
        # What multiplies the strategy's exponent (culture, the individual draw): kept so
        # that a strategy changed mid-session keeps the party's own speed.
        self.spread = spread

    @staticmethod
    def of(persona: Persona, b: Behaviour, rng: random.Random, floor: float) -> Concession:
        """The curve a persona concedes on. Two parties with the same persona still
        differ a little in how fast they concede (one draw from `rng`), so seeds explore
        a neighbourhood rather than one path."""
        culture = culture_beta_factor(persona.culture, b)
        individual = math.exp(rng.gauss(0.0, 1.0) * b["beta.individual_sd"])
        beta = strategy_beta(persona.point, b) * culture * individual  # this order, to the bit
        return Concession(beta, floor, culture * individual)

    def advance(self, resentment: float, ctx: TurnContext) -> float:
        """One own turn's step: a whole step when calm, none at resentment 1 or above.
        Returns the new target."""
        own_horizon = max(1, -(-ctx.budget // ctx.n_parties))
        step = max(0.0, 1.0 - resentment) / own_horizon
        self.progress = min(1.0, self.progress + step)
        # min: a curve changed mid-session (an adaptive strategy) may not raise the target.
        self.target = min(self.target, concession_target(self.progress, self.beta, self.floor))
        return self.target
