"""The rule policy's guarantees, checked over many generated situations."""

from __future__ import annotations

import asyncio
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from disputelab.agents.base import PublicTurn, TurnContext
from disputelab.agents.parties.rule import RuleParty
from disputelab.agents.utility import concession_target, option_values, preference_table
from disputelab.episode import Signal, Stance
from disputelab.scenario.schema import STRATEGIES, TopicPreference
from tests.helpers import play, scenario, with_personas

SCENARIOS = ["tenancy", "workplace", "community-centre"]


def test_option_values_fall_linearly_with_rank_and_unacceptable_is_zero() -> None:
    pref = TopicPreference(ranking=["B", "A", "C"], unacceptable=["D"])
    assert option_values(pref, ["A", "B", "C", "D"]) == [2 / 3, 1.0, 1 / 3, 0.0]


def test_best_package_is_worth_one_and_infeasible_packages_are_flagged() -> None:
    s = scenario("tenancy")
    table = preference_table(s, s.parties[0])
    assert table.utility[table.feasible].max() == 1.0
    assert not table.feasible.all()


@given(
    beta=st.floats(0.05, 10),
    floor=st.floats(0, 0.95),
    a=st.floats(0, 1),
    b=st.floats(0, 1),
)
def test_concession_target_never_rises_and_never_drops_below_floor(
    beta: float, floor: float, a: float, b: float
) -> None:
    lo, hi = sorted((a, b))
    assert concession_target(hi, beta, floor) <= concession_target(lo, beta, floor) + 1e-12
    assert concession_target(hi, beta, floor) >= floor - 1e-12


@settings(max_examples=40, deadline=None)
@given(
    sid=st.sampled_from(SCENARIOS),
    strategy=st.sampled_from(STRATEGIES),
    reactivity=st.floats(0, 1),
    seed=st.integers(0, 10_000),
    budget=st.integers(4, 80),
    mediator=st.sampled_from(["none", "rule"]),
)
def test_a_rule_partys_target_never_rises_over_the_budget(
    sid: str, strategy: str, reactivity: float, seed: int, budget: int, mediator: str
) -> None:
    s = with_personas(scenario(sid), strategy, reactivity)  # type: ignore[arg-type]
    ep = play(s, mediator, seed, budget)
    targets: dict[str, list[float]] = {}
    for t in ep.turns:
        if t.action is not None:
            target = float(t.action.thought.split("target ")[1].split(",")[0])
            targets.setdefault(t.speaker, []).append(target)
    for series in targets.values():
        assert all(b <= a + 1e-9 for a, b in itertools.pairwise(series))


@settings(max_examples=40, deadline=None)
@given(
    sid=st.sampled_from(SCENARIOS),
    strategy=st.sampled_from(STRATEGIES),
    reactivity=st.floats(0, 1),
    seed=st.integers(0, 10_000),
    mediator=st.sampled_from(["none", "rule"]),
)
def test_a_rule_party_never_accepts_below_its_fallback(
    sid: str, strategy: str, reactivity: float, seed: int, mediator: str
) -> None:
    s = with_personas(scenario(sid), strategy, reactivity)  # type: ignore[arg-type]
    ep = play(s, mediator, seed, 100)
    for t in ep.turns:
        if t.action is None or t.action.signal is not Signal.CONSENSUS:
            continue
        party = s.party(t.speaker)
        table = preference_table(s, party)
        package = t.action.package()
        assert table.package_feasible(package)
        assert table.package_utility(package) >= party.fallback.utility - 1e-9


def _target_after(strategy: str, budget: int, turns: int, seed: int) -> float:
    s = with_personas(scenario("workplace"), strategy, reactivity=0.0)  # type: ignore[arg-type]
    party = RuleParty(s, s.parties[0].id, seed)
    for k in range(turns):
        asyncio.run(party.act([], TurnContext(k * 3, budget, 3)))
    return party.target


@settings(max_examples=60, deadline=None)
@given(budget=st.integers(6, 300), frac=st.floats(0.05, 0.95), seed=st.integers(0, 99))
def test_over_the_same_budget_competing_concedes_less_than_accommodating(
    budget: int, frac: float, seed: int
) -> None:
    own_turns = max(1, int(frac * budget / 3))
    competing = _target_after("competing", budget, own_turns, seed)
    accommodating = _target_after("accommodating", budget, own_turns, seed)
    assert competing > accommodating


def test_stated_stances_are_the_hidden_ones() -> None:
    s = scenario("workplace")
    party = RuleParty(s, s.parties[1].id, seed=3)
    action = party.decide([], TurnContext(0, 60, 3))
    assert action.stances == party.hidden_stances()


def test_hostile_moves_make_a_reactive_party_dig_in() -> None:
    s = with_personas(scenario("tenancy"), "compromising", reactivity=1.0)
    tenant = RuleParty(s, "tenant", seed=0)
    # The landlord, angrily, backs options the tenant finds unacceptable.
    hostile = PublicTurn(
        0,
        1,
        "landlord",
        "party",
        "No.",
        stances={
            "repairs": Stance("D", ("D",)),
            "arrears": Stance("D", ("D",)),
            "rent": Stance("D", ("D",)),
            "lease": Stance("A", ("A",)),
        },
        tone="hostile",
    )
    action = tenant.decide([hostile], TurnContext(1, 100, 2))
    assert "digging in" in action.thought
    assert all(st.acceptable == (st.option,) for st in action.stances.values())
