"""`disputelab.run(scenario, model=[A, B])`: a run's model axis, played against two
scripted endpoints on 127.0.0.1 and ranked by `compare`, with the plan rules it keeps."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from disputelab import api
from disputelab.llm.models import ModelHub
from disputelab.store.sqlite import Store
from tests.compare.stubs import three_models

MODELS = ["stub-a", "stub-b"]


@pytest.fixture
def hub() -> Iterator[ModelHub]:
    with three_models(MODELS) as models:
        yield models


def test_each_model_plays_the_case_and_compare_ranks_them(tmp_path: Path, hub: ModelHub) -> None:
    result = api.run("tenancy", model=MODELS, mediator="rule", budget=3, store=tmp_path, hub=hub)

    assert list(result.by_model) == MODELS
    assert result.by_model["stub-b"].episode_id == f"{result.run_id}-rule@stub-b"
    assert result.by_model["stub-b"].baseline_id == f"{result.run_id}-unmediated@stub-b"
    assert list(result.metrics().columns) == [
        "unmediated@stub-a", "mediated@stub-a", "unmediated@stub-b", "mediated@stub-b"
    ]  # fmt: skip
    store = Store(tmp_path, writable=False)
    assert {r.episode.agents["backbone"] for r in store.episode_headers(result.run_id)} == {*MODELS}
    assert store.run_info(result.run_id)[1]["backbones"] == {m: {"parties": m} for m in MODELS}

    board = api.compare([result.run_id], store=tmp_path)

    assert board.ranking == ["stub-b", "stub-a"]


def test_one_model_in_a_list_is_the_run_of_that_model() -> None:
    assert api.plan_run("tenancy", model=["stub-a"]) == api.plan_run("tenancy", model="stub-a")
    assert not api.plan_run("tenancy", model="stub-a").backbones


def test_models_in_the_mediator_seat_only_share_one_unmediated_twin() -> None:
    plan = api.plan_run("tenancy", parties="rule", mediator="generic", model=MODELS)

    assert plan.episode_names() == [
        ("unmediated", ""), ("generic@stub-a", "stub-a"), ("generic@stub-b", "stub-b")
    ]  # fmt: skip
    assert plan.models_by_role() == {"mediator": MODELS}


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"model": ["stub-a", "stub-b", "stub-a"]}, "model: stub-a given more than once"),
        ({"model": ["stub-a", "rule"]}, "model: rule is not a model to compare"),
        ({"model": MODELS, "parties": "rule"}, "model: several models are compared in the"),
        ({"model": MODELS, "condition": "parties:+1"}, "condition parties:+1: it is written by"),
    ],
)
def test_what_a_model_axis_cannot_be(options: dict[str, object], problem: str) -> None:
    with pytest.raises(api.PlanError) as caught:
        api.plan_run("tenancy", **options)
    assert len(caught.value.problems) == 1
    assert caught.value.problems[0].startswith(problem)


def test_the_judge_is_shared_not_played_by_each_model() -> None:
    plan = api.plan_run("tenancy", model=MODELS, models={"judge": "stub-c"})

    assert plan.models_by_role() == {"parties": MODELS, "judge": ["stub-c"]}
    assert all(plan.cast_for(m).model("judge") == "stub-c" for m in MODELS)
