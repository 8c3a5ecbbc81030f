"""`Concession`: where a rule party stands on its concession curve."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from disputelab.agents.base import TurnContext
from disputelab.agents.parties.rule_policy.concession import Concession
from disputelab.agents.utility import strategy_beta
from disputelab.scenario.behaviour import Behaviour
from disputelab.scenario.schema import Persona

TURNS = st.lists(
    st.tuples(st.floats(0, 3), st.integers(1, 300), st.integers(1, 6)), min_size=1, max_size=60
)


@given(beta=st.floats(0.05, 10), floor=st.floats(0, 0.95), turns=TURNS)
def test_the_target_never_rises_and_never_drops_below_the_floor(
    beta: float, floor: float, turns: list[tuple[float, int, int]]
) -> None:
    c = Concession(beta, floor)
    before = c.target
    assert before == 1.0
    for resentment, budget, n in turns:
        progress = c.progress
        target = c.advance(resentment, TurnContext(0, budget, n))
        assert target == c.target
        assert floor - 1e-12 <= target <= before + 1e-12
        assert progress <= c.progress <= 1.0
        before = target


@given(resentment=st.floats(1, 5), budget=st.integers(1, 100))
def test_resentment_of_one_or_more_stops_progress(resentment: float, budget: int) -> None:
    c = Concession(1.0, 0.3)
    c.advance(resentment, TurnContext(0, budget, 2))
    assert (c.progress, c.target) == (0.0, 1.0)


def test_a_calm_party_reaches_its_floor_over_its_share_of_the_budget() -> None:
    c = Concession(0.8, 0.4)
    ctx = TurnContext(0, 32, 4)  # eight own turns
    for _ in range(7):
        c.advance(0.0, ctx)
        assert c.target > 0.4
    c.advance(0.0, ctx)
    assert c.progress == 1.0 and c.target == 0.4


def test_a_linear_curve_concedes_in_equal_steps() -> None:
    c = Concession(1.0, 0.0)
    targets = [c.advance(0.0, TurnContext(0, 8, 2)) for _ in range(4)]
    assert targets == [0.75, 0.5, 0.25, 0.0]


def test_the_persona_sets_the_curve_and_individual_variation_takes_one_draw() -> None:
    b = Behaviour.of({"beta.individual_sd": 0.0})
    persona = Persona(strategy="competing")
    rng = random.Random(5)
    c = Concession.of(persona, b, rng, 0.25)
    assert c.beta == strategy_beta("competing", b) and c.floor == 0.25
    twin = random.Random(5)
    twin.gauss(0.0, 1.0)
    assert rng.random() == twin.random()  # exactly one draw was taken


def test_two_seeds_of_one_persona_concede_a_little_differently() -> None:
    persona = Persona(strategy="compromising")
    b = Behaviour.of({})
    betas = {Concession.of(persona, b, random.Random(seed), 0.2).beta for seed in range(5)}
    assert len(betas) == 5
    assert all(0.5 < beta < 2.0 for beta in betas)
