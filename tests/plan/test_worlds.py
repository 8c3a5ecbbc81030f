"""The worlds axis: a spec's `worlds:` crosses the grid with parameter worlds, each
played on the same scenarios and seeds, and a spec without it plans and stores exactly
what it did before there were worlds."""

from __future__ import annotations

from typing import Any

import pytest

from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import SpecError
from disputelab.scenario.behaviour import Behaviour


def _spec(**fields: Any) -> dict[str, Any]:
    return {"name": "w", "scenarios": ["tenancy", "workplace"], "replicates": 2, **fields}


def _problems(**fields: Any) -> str:
    with pytest.raises(SpecError) as caught:
        plan_experiment(_spec(**fields), profiles={})
    return str(caught.value)


def test_each_world_plays_every_cell_on_the_same_seed_with_its_own_twin() -> None:
    plan = plan_experiment(_spec(worlds=["shipped", "neutral", "mirrored"]), profiles={})
    first = [(e.episode_id, e.baseline_id, e.seed, e.world) for e in plan.episodes[:6]]
    assert first == [
        ("w/tenancy/general/none~shipped/r0", None, 0, "shipped"),
        ("w/tenancy/general/rule~shipped/r0", "w/tenancy/general/none~shipped/r0", 0, "shipped"),
        ("w/tenancy/general/none~neutral/r0", None, 0, "neutral"),
        ("w/tenancy/general/rule~neutral/r0", "w/tenancy/general/none~neutral/r0", 0, "neutral"),
        ("w/tenancy/general/none~mirrored/r0", None, 0, "mirrored"),
        (
            "w/tenancy/general/rule~mirrored/r0",
            "w/tenancy/general/none~mirrored/r0",
            0,
            "mirrored",
        ),
    ]
    assert len(plan.episodes) == 2 * 1 * 2 * 3 * 2
    assert len({e.episode_id for e in plan.episodes}) == len(plan.episodes)


def test_a_subset_of_worlds_is_a_smaller_axis() -> None:
    plan = plan_experiment(_spec(worlds=["mirrored"]), profiles={})
    assert {e.world for e in plan.episodes} == {"mirrored"}
    assert all(e.episode_id.split("/")[3].endswith("~mirrored") for e in plan.episodes)
    assert plan.config["worlds"] == ["mirrored"]


def test_a_spec_without_worlds_plans_and_stores_what_it_did_before() -> None:
    plan = plan_experiment(_spec(), profiles={})
    assert [e.episode_id for e in plan.episodes[:2]] == [
        "w/tenancy/general/none/r0",
        "w/tenancy/general/rule/r0",
    ]
    assert all("~" not in e.episode_id and e.world == "" for e in plan.episodes)
    assert "worlds" not in plan.config
    assert plan.params_for("") is plan.params


def test_the_shipped_world_plays_the_spec_own_parameters() -> None:
    plan = plan_experiment(
        _spec(worlds=["shipped", "mirrored"], behaviour={"mediator.calming": 0.3}), profiles={}
    )
    assert plan.params_for("shipped") is plan.params
    mirrored = Behaviour.of(plan.params_for("mirrored").model_dump()["behaviour"])
    assert mirrored["mediator.calming"] == pytest.approx(-0.3)  # the spec's value, reversed
    assert mirrored["beta.competing"] == pytest.approx(1 / 0.3)


def test_the_neutral_world_sets_every_parameter_with_a_neutral_value_to_it() -> None:
    plan = plan_experiment(_spec(worlds=["neutral"]), profiles={})
    neutral = Behaviour.of(plan.params_for("neutral").model_dump()["behaviour"])
    assert neutral["beta.competing"] == 1.0
    assert neutral["culture.masculinity"] == 0.0
    assert neutral["resentment.walk_away"] == 1.4  # a level: no neutral value, kept


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"worlds": ["upside-down"]}, "worlds: unknown 'upside-down'; use shipped, neutral"),
        ({"worlds": ["neutral", "neutral"]}, "worlds: a world listed twice"),
        ({"worlds": []}, "worlds"),
        (
            {"worlds": ["neutral"], "parties": "llm", "models": {"parties": "openai:x"}},
            "llm parties have no rule policy",
        ),
    ],
)
def test_a_bad_worlds_list_is_refused_in_one_line(fields: dict[str, Any], said: str) -> None:
    assert said in _problems(**fields)


@pytest.mark.parametrize(
    ("protocol", "scenarios", "parties", "changed"),
    [
        ("settlement", ["builtin:settle-*"], "rule", "settlement.eagerness.competing"),
        ("bilateral", ["product-sale"], "rule", "bilateral.offence_per_reactivity"),
    ],
)
def test_the_settlement_and_bilateral_rule_agents_play_in_every_world(
    protocol: str, scenarios: list[str], parties: str, changed: str
) -> None:
    spec = _spec(
        protocol=protocol,
        scenarios=scenarios,
        parties=parties,
        mediators=["direct", "mcts"] if protocol == "settlement" else ["none"],
        worlds=["shipped", "neutral", "mirrored"],
        limit_scenarios=1,
    )
    plan = plan_experiment(spec, profiles={})
    assert {e.world for e in plan.episodes} == {"shipped", "neutral", "mirrored"}
    shipped = Behaviour.of(plan.params_for("shipped").model_dump()["behaviour"])
    mirrored = Behaviour.of(plan.params_for("mirrored").model_dump()["behaviour"])
    neutral = Behaviour.of(plan.params_for("neutral").model_dump()["behaviour"])
    assert mirrored[changed] != shipped[changed] != neutral[changed]


@pytest.mark.parametrize(
    ("protocol", "scenarios", "parties", "mediators"),
    [
        ("settlement", ["builtin:settle-*"], "boulware", ["direct"]),
        ("settlement", ["builtin:settle-*"], "redteam", ["direct"]),
    ],
)
def test_worlds_are_refused_for_party_kinds_that_read_no_table(
    protocol: str, scenarios: list[str], parties: str, mediators: list[str]
) -> None:
    said = _problems(
        protocol=protocol,
        scenarios=scenarios,
        parties=parties,
        mediators=mediators,
        worlds=["neutral"],
    )
    assert f"worlds: {parties} parties have no rule policy" in said
