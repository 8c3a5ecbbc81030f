"""The behaviour table: every assumption of the rule agents is a named parameter, each
condition moves only table parameters, and ablating them removes the condition's
effect on the policy."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from disputelab.agents.registry import build_parties
from disputelab.agents.settings import AgentSettings
from disputelab.agents.utility import rule_profile
from disputelab.episode import Episode
from disputelab.protocols.play import play as play_protocol
from disputelab.scenario.behaviour import (
    PARAMETERS,
    Behaviour,
    BehaviourError,
    check_overrides,
    domain,
    neutral_overrides,
)
from disputelab.scenario.causes import apply_cause_offline
from disputelab.scenario.conditions import apply_condition, condition_parameters
from disputelab.scenario.schema import Scenario
from tests.helpers import scenario


def test_every_parameter_is_documented_with_a_range_that_holds_its_default() -> None:
    for p in PARAMETERS.values():
        assert p.what and p.source
        assert p.low <= p.default <= p.high, p.name
        assert p.neutral is None or p.low <= p.neutral <= p.high, p.name


def test_overrides_are_checked_by_name_and_value() -> None:
    with pytest.raises(BehaviourError, match=r"did you mean beta\.competing"):
        check_overrides({"beta.competin": 1})
    with pytest.raises(BehaviourError, match="needs a number"):
        check_overrides({"beta.competing": "fast"})
    with pytest.raises(BehaviourError, match="finite"):
        check_overrides({"beta.competing": float("inf")})
    assert Behaviour.of({"beta.competing": 1})["beta.competing"] == 1.0
    assert Behaviour.of({}).changed() == {}


def test_a_level_without_a_neutral_value_cannot_be_ablated() -> None:
    with pytest.raises(BehaviourError, match="no neutral value"):
        neutral_overrides(["resentment.walk_away"])
    assert neutral_overrides(["mediator.calming"]) == {"mediator.calming": 0.0}


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ("general", ()),
        ("parties:+1", ()),
        ("history:x5", ()),
        ("posture:competing", ("beta.competing", "self_weight.competing", "tone.competing_flare")),
        ("strategy:accommodating@one", ("beta.accommodating", "self_weight.accommodating")),
        ("reactivity:react-react", ("resentment.hostility", "resentment.hurt")),
        ("cause:resource@0.5", ("cause.resource.reactivity", "cause.resource.top_topic_points")),
        ("cause:misconduct.bad_faith", ("cause.misconduct.reactivity",)),
    ],
)
def test_a_condition_names_the_parameters_it_moves(
    condition: str, expected: tuple[str, ...]
) -> None:
    moved = condition_parameters(condition)
    assert set(expected) <= set(moved)
    assert all(PARAMETERS[n].default != PARAMETERS[n].neutral for n in moved)


def test_conditions_move_their_parameters_the_stated_way() -> None:
    base = scenario("tenancy")
    competing = apply_condition(base, "posture:competing")
    accommodating = apply_condition(base, "posture:accommodating")
    for c, a in zip(competing.parties, accommodating.parties, strict=True):
        assert rule_profile(c)["concession exponent"] < rule_profile(a)["concession exponent"]
        assert rule_profile(c)["weight on own utility"] > rule_profile(a)["weight on own utility"]
    reactive = apply_condition(base, "reactivity:react-react")
    assert all(rule_profile(p)["reactivity"] == 1.0 for p in reactive.parties)


@given(st.sampled_from(["information", "resource", "misconduct", "legal", "external"]))
def test_a_cause_at_neutral_parameters_changes_no_number(category: str) -> None:
    base = scenario("workplace")
    names = condition_parameters(f"cause:{category}")
    neutral = Behaviour.of(neutral_overrides(names))
    out = apply_cause_offline(base, category, 1.0, neutral)
    for before, after in zip(base.parties, out.parties, strict=True):
        assert after.persona.reactivity == before.persona.reactivity
        assert after.weights == before.weights


def _moves(s: Scenario, behaviour: Behaviour, seed: int) -> list[tuple[object, ...]]:
    settings = AgentSettings(behaviour=behaviour)
    parties = build_parties(s, "rule", seed, settings=settings)
    ep = Episode(s.id, "roundtable", seed, {"parties": "rule", "mediator": "none"})
    played = asyncio.run(play_protocol("roundtable", s, parties, {}, {"budget": 30}, ep))
    return [
        (t.speaker, t.action.signal, t.action.tone, tuple(sorted(t.action.stances.items())))
        for t in played.turns
        if t.action is not None
    ]


@pytest.mark.parametrize("sid", ["tenancy", "workplace"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ablating_a_posture_makes_it_play_exactly_like_the_neutral_posture(
    sid: str, seed: int
) -> None:
    base = scenario(sid)
    ablated = Behaviour.of(neutral_overrides(condition_parameters("posture:competing")))
    competing = apply_condition(base, "posture:competing")
    neutral = apply_condition(base, "strategy:compromising@all")
    assert _moves(competing, ablated, seed) == _moves(neutral, Behaviour(), seed)
    # ...and without ablation the posture does change the play.
    assert any(
        _moves(competing, Behaviour(), s) != _moves(neutral, Behaviour(), s) for s in range(3)
    )


def test_every_default_neutral_and_range_lies_in_the_parameter_s_domain() -> None:
    for p in PARAMETERS.values():
        low, high = domain(p.name)
        for value in (p.default, p.low, p.high, p.neutral):
            assert value is None or low <= value <= high, (p.name, value)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("beta.competing", 0),
        ("beta.individual_sd", 1e6),
        ("culture.masculinity", 1e6),
        ("resentment.cooling", -5),
        ("avoiding.engage_every", 0.4),
    ],
)
def test_a_value_outside_its_domain_is_refused_in_one_line(name: str, value: float) -> None:
    with pytest.raises(BehaviourError, match=f"{name} takes values from"):
        check_overrides({name: value})


@pytest.mark.parametrize("kind", ["rule", "paraphrase"])
def test_every_rule_policy_kind_is_built_with_the_run_s_behaviour_and_disclosure(
    kind: str,
) -> None:
    b = Behaviour.of({"mediator.calming": 0.0})
    settings = AgentSettings(behaviour=b, disclosure="full")
    for party in build_parties(scenario("tenancy"), kind, 0, settings=settings):
        assert party.b is b  # type: ignore[attr-defined]
        assert party.disclosure == "full"  # type: ignore[attr-defined]
        assert party.mood.calming == 0.0  # type: ignore[attr-defined]
