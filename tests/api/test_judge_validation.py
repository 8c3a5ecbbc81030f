"""`disputelab.api.judge_validation`: trackers scored against the oracle of rule-policy
episodes; every problem of a plan names the input that mends it."""

from __future__ import annotations

from pathlib import Path

import pytest

from disputelab import api
from disputelab.api import judge_validation as jv


def test_a_plan_without_a_judge_validates_the_self_report_tracker_on_three_scenarios() -> None:
    plan, scenarios = jv.plan_validation()
    assert plan.trackers == ("self-report",) and plan.judge_models == ()
    assert tuple(s.id for s in scenarios) == jv.DEFAULT_SCENARIOS == plan.scenarios


def test_with_a_judge_the_judged_tracker_is_validated_too() -> None:
    plan, _ = jv.plan_validation(judges=["local"], scenarios=["tenancy"])
    assert plan.trackers == ("self-report", "topic-localized") and plan.judge_models == ("local",)


@pytest.mark.parametrize(
    ("options", "problem", "fixes"),
    [
        ({"trackers": ["oracle"]}, "oracle is the truth the trackers are scored against", ()),
        ({"trackers": ["nope"]}, "unknown tracker 'nope'", ()),
        ({"mediator": "llm"}, "validation episodes use rule agents; mediator must be", ()),
        ({"trackers": ["per-turn"]}, "judge-based trackers need a judge", ("judges",)),
        ({"voice": "hybrid"}, "the hybrid voice needs a model", ("voice_model", "judges")),
    ],
)
def test_a_plan_that_cannot_run_names_what_would_mend_it(
    options: dict[str, object], problem: str, fixes: tuple[str, ...]
) -> None:
    with pytest.raises(api.PlanError) as caught:
        jv.plan_validation(**options)  # type: ignore[arg-type]
    (found,) = caught.value.found
    assert found.text.startswith(problem), found.text
    assert found.fixes == fixes


def test_a_scenario_without_topics_cannot_be_validated_on(tmp_path: Path) -> None:
    with pytest.raises(api.ScenarioError):
        jv.plan_validation(scenarios=["no-such-case"])


def test_a_validation_is_played_stored_and_tabled(tmp_path: Path) -> None:
    plan, scenarios = jv.plan_validation(scenarios=["tenancy"], episodes=1, budget=6)
    store = api.open_store(tmp_path / "runs")
    try:
        hub = api.open_models([], store=store)
        steps: list[tuple[int, int]] = []
        report = api.run_loop(
            lambda: jv.validate_judge_async(
                plan, scenarios, store=store, hub=hub, progress=lambda d, t: steps.append((d, t))
            )
        )
    finally:
        store.close()
    assert steps and steps[-1][0] == steps[-1][1]
    table = jv.validation_table(report)
    assert table.heading.startswith(f"Judge validation {report.run_id}")
    trackers = [r["tracker"] for r in table.rows]
    # The tracker first, then the baselines a judge must beat, scored on the same points.
    assert trackers[0] == "self-report" and len(trackers) > 1
    assert all(t.startswith("baseline: ") for t in trackers[1:])
    assert all(set(row) == set(table.columns) for row in table.rows)
    assert report.run_id in jv.validation_json(report)
