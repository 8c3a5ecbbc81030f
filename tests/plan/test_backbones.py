"""The model axis: lists of models or named backbones, crossed with the grid so that
every backbone plays the same scenarios on the same seeds."""

from __future__ import annotations

from typing import Any

import pytest

from disputelab.plan.backbones import model_label
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import SpecError

A, B, C = (f"openai:{m}@http://127.0.0.1:9/v1" for m in ("a", "b", "c"))


def _spec(**fields: Any) -> dict[str, Any]:
    return {"name": "axis", "scenarios": ["tenancy", "workplace"], "replicates": 2, **fields}


def _problems(**fields: Any) -> str:
    with pytest.raises(SpecError) as caught:
        plan_experiment(_spec(**fields), profiles={})
    return str(caught.value)


def test_a_model_is_named_after_it_without_its_endpoint() -> None:
    assert model_label(A) == "openai:a"
    assert model_label("local") == "local"
    assert model_label("vllm/Qwen 7B") == "vllm-Qwen-7B"


def test_a_mediator_axis_shares_each_cells_unmediated_twin() -> None:
    plan = plan_experiment(
        _spec(mediators=["generic"], models={"mediator": [A, B, C]}), profiles={}
    )
    assert plan.backbones == ("openai:a", "openai:b", "openai:c")
    first_cell = [e.episode_id for e in plan.episodes[:4]]
    assert first_cell == [
        "axis/tenancy/general/none/r0",
        "axis/tenancy/general/generic@openai:a/r0",
        "axis/tenancy/general/generic@openai:b/r0",
        "axis/tenancy/general/generic@openai:c/r0",
    ]
    assert len(plan.episodes) == 2 * 2 * (1 + 3)
    assert {e.baseline_id for e in plan.episodes[1:4]} == {first_cell[0]}
    assert {e.seed for e in plan.episodes[:4]} == {0}
    assert plan.cast_for("openai:b").model("mediator") == B
    assert plan.summary().models["mediator"] == f"{A}, {B}, {C}"  # every model it calls


def test_a_party_axis_gives_each_backbone_its_own_twin() -> None:
    plan = plan_experiment(
        _spec(
            mediators=["generic"],
            parties="llm",
            backbones={
                "x": {"parties": A, "mediator": A},
                "y": {"parties": B, "mediator": B},
            },
        ),
        profiles={},
    )
    cell = [(e.episode_id, e.baseline_id, e.backbone) for e in plan.episodes[:4]]
    assert cell == [
        ("axis/tenancy/general/none@x/r0", None, "x"),
        ("axis/tenancy/general/generic@x/r0", "axis/tenancy/general/none@x/r0", "x"),
        ("axis/tenancy/general/none@y/r0", None, "y"),
        ("axis/tenancy/general/generic@y/r0", "axis/tenancy/general/none@y/r0", "y"),
    ]
    described = plan.cast_for("y").with_kind("mediator", "generic").describe(plan.protocol)
    assert described["backbone"] == "y" and described["parties_model"] == B


def test_lists_for_two_roles_are_crossed() -> None:
    spec = _spec(
        parties="llm", mediators=["generic"], models={"parties": [A, B], "mediator": [C, A]}
    )
    plan = plan_experiment(spec, profiles={})
    assert plan.backbones == (
        "openai:a+openai:c",
        "openai:a+openai:a",
        "openai:b+openai:c",
        "openai:b+openai:a",
    )


def test_a_spec_without_an_axis_plans_and_stores_as_before() -> None:
    plan = plan_experiment(_spec(mediators=["rule"]), profiles={})
    assert "backbones" not in plan.config
    assert [e.episode_id for e in plan.episodes[:2]] == [
        "axis/tenancy/general/none/r0",
        "axis/tenancy/general/rule/r0",
    ]
    assert all(e.backbone == "" for e in plan.episodes)
    assert "backbone" not in plan.cast.describe(plan.protocol)


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"models": {"judge": [A, B]}}, "models.judge: one judge serves every model compared"),
        ({"models": {"mediator": []}}, "models.mediator: a list of model names, at least one"),
        (
            {"mediators": ["generic"], "models": {"mediator": [A, B, A]}},
            f"models.mediator: {A} listed more than once; list each model once",
        ),
        (
            {"mediators": ["generic"], "models": {"mediator": [A, A.replace("9", "10")]}},
            "would share the name 'openai:a'",
        ),
        (
            {"models": {"mediator": [A]}, "backbones": {"x": {"mediator": B}}},
            "either as lists in models or as backbones, not both",
        ),
        ({"backbones": {"a/b": {"mediator": A}}}, "backbones: 'a/b' is not a usable name"),
        ({"backbones": {"x": {"mediator": "rule"}}}, "backbones.x.mediator: rule is not a model"),
        ({"backbones": {"x": {"seat": A}}}, "backbones.x.seat: unknown role; use auditor, counsel"),
        (
            {"models": {"mediator": A}, "backbones": {"x": {"mediator": B}}},
            "backbones.x.mediator: also set in models:",
        ),
        (
            {"mediators": ["generic"], "parties": "llm", "backbones": {"x": {"mediator": A}}},
            "parties: llm parties need models: {parties: MODEL}",
        ),
    ],
)
def test_a_bad_model_axis_is_said_in_the_specs_words(fields: dict[str, Any], problem: str) -> None:
    assert problem in _problems(**fields)
