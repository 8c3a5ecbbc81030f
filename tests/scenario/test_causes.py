"""The dispute-cause taxonomy, and the offline cause transform on any scenario."""

from __future__ import annotations

from statistics import mean

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from disputelab.scenario.behaviour import PARAMETERS
from disputelab.scenario.causes import (
    apply_cause_offline,
    cause_parameters,
    dispute_causes,
    shift_weights,
)
from disputelab.scenario.schema import Scenario
from tests.helpers import scenario

CATEGORIES = ["information", "resource", "misconduct", "legal", "external"]
SCENARIOS = ["tenancy", "workplace", "community-centre"]


def _zh() -> Scenario:
    s = scenario("tenancy")
    s.language = "zh"
    return s


def test_five_categories_with_the_papers_4_8_7_6_4_subcategories() -> None:
    cats = dispute_causes()
    assert [c.key for c in cats] == CATEGORIES
    assert [len(c.subcategories) for c in cats] == [4, 8, 7, 6, 4]
    assert sum(len(c.subcategories) for c in cats) == 29
    zh = ["信息冲突", "资源冲突", "主体行为问题", "法律缺陷", "其他外部因素"]
    assert [c.zh for c in cats] == zh


def test_keys_are_unique_and_every_entry_is_filled_in() -> None:
    entries = [e for c in dispute_causes() for e in (c, *c.subcategories)]
    keys = [e.key for e in entries]
    assert len(keys) == len(set(keys)) == 34
    for c in dispute_causes():
        assert all(s.key.startswith(f"{c.key}.") for s in c.subcategories)
    for e in entries:
        assert e.zh and e.en and e.description.endswith(".")


def test_every_category_acts_through_named_behaviour_parameters() -> None:
    for category in CATEGORIES:
        assert all(name in PARAMETERS for name in cause_parameters(category))


@pytest.mark.parametrize("sid", SCENARIOS)
@pytest.mark.parametrize("key", [*CATEGORIES, "misconduct.bad_faith", "external.disaster"])
def test_every_cause_gives_a_valid_scenario_and_leaves_the_input_alone(sid: str, key: str) -> None:
    base = scenario(sid)
    out = apply_cause_offline(base, key)
    Scenario.model_validate(out.model_dump())
    assert base == scenario(sid)
    assert out.topics == base.topics
    assert out.background.startswith(base.background)
    assert "Cause of the dispute" in out.background


def test_the_sentence_follows_the_scenario_language() -> None:
    out = apply_cause_offline(_zh(), "misconduct.bad_faith")
    assert "纠纷成因：主体行为问题（失信/缺德）" in out.background
    assert all("主体行为问题" in p.persona.traits[-1] for p in out.parties)
    en = apply_cause_offline(scenario("tenancy"), "resource")
    assert all(p.persona.traits[-1] == "sees the dispute as resource conflict" for p in en.parties)


@pytest.mark.parametrize("key", CATEGORIES)
def test_intensity_zero_is_the_identity(key: str) -> None:
    base = scenario("workplace")
    assert apply_cause_offline(base, key, intensity=0) == base


def _mean_reactivity(s: Scenario) -> float:
    return mean(p.persona.reactivity for p in s.parties)


def test_misconduct_raises_reactivity_more_than_information_and_legal_lowers_it() -> None:
    base = scenario("workplace")
    by_cause = {k: _mean_reactivity(apply_cause_offline(base, k)) for k in CATEGORIES}
    assert by_cause["misconduct"] > by_cause["resource"] > by_cause["information"]
    assert by_cause["information"] > _mean_reactivity(base)
    assert by_cause["legal"] < _mean_reactivity(base)
    assert by_cause["external"] < _mean_reactivity(base)


def test_resource_moves_weight_onto_each_partys_top_topic() -> None:
    base = scenario("workplace")
    out = apply_cause_offline(base, "resource")
    for before, after in zip(base.parties, out.parties, strict=True):
        top = max(before.weights, key=lambda t: before.weights[t])
        assert after.weights[top] == min(before.weights[top] + 10, 100 - len(before.weights) + 1)


def test_reactivity_is_clamped_to_one() -> None:
    base = scenario("tenancy")
    for p in base.parties:
        p.persona.reactivity = 0.95
    out = apply_cause_offline(base, "misconduct", intensity=2)
    assert {p.persona.reactivity for p in out.parties} == {1.0}


@settings(max_examples=60, deadline=None)
@given(
    intensity=st.floats(min_value=0, max_value=2, allow_nan=False),
    key=st.sampled_from(CATEGORIES),
    sid=st.sampled_from(SCENARIOS),
)
def test_weights_stay_positive_integers_summing_to_100(
    intensity: float, key: str, sid: str
) -> None:
    out = apply_cause_offline(scenario(sid), key, intensity)
    for p in out.parties:
        assert sum(p.weights.values()) == 100
        assert all(isinstance(w, int) and w >= 1 for w in p.weights.values())
        assert 0 <= p.persona.reactivity <= 1


@given(
    weights=st.lists(st.integers(1, 60), min_size=1, max_size=6).filter(lambda w: sum(w) <= 100),
    points=st.floats(min_value=-100, max_value=100, allow_nan=False),
)
def test_shift_weights_keeps_the_sum_and_the_direction(weights: list[int], points: float) -> None:
    w = {f"t{i}": x for i, x in enumerate(weights)}
    w["t0"] += 100 - sum(weights)
    out = shift_weights(w, "t0", points)
    assert sum(out.values()) == 100 and min(out.values()) >= 1
    if points >= 0:
        assert out["t0"] >= w["t0"]
    else:
        assert out["t0"] <= w["t0"]


def test_an_unknown_cause_lists_the_valid_keys_on_one_line() -> None:
    with pytest.raises(ValueError, match="information, resource, misconduct") as info:
        apply_cause_offline(scenario("tenancy"), "greed")
    assert "\n" not in str(info.value)


def test_a_negative_intensity_is_refused() -> None:
    with pytest.raises(ValueError, match="intensity"):
        apply_cause_offline(scenario("tenancy"), "legal", intensity=-0.5)
