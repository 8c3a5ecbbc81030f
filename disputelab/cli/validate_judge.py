"""`disputelab validate-judge`: score trackers against the oracle of rule-party episodes."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated

import typer

from disputelab.cli.common import (
    ListFormat,
    check_judges,
    fail,
    fail_scenario,
    library,
    open_models,
    open_store,
    out,
    print_rows,
)
from disputelab.cli.progress import ticker
from disputelab.evaluation.trackers import LLM_TRACKERS, TRACKERS
from disputelab.scenario.io import ScenarioError
from disputelab.scenario.library import resolve_scenario

if TYPE_CHECKING:
    from disputelab.experiments.judging import ValidationReport

COLUMNS = ("tracker", "judge", "traj. r", "outcome r", "MAE", "points", "calls/ep", "tokens/ep")


def validate_judge(
    tracker: Annotated[
        list[str] | None,
        typer.Option(help="Tracker(s) to validate: self-report, topic-localized, per-turn."),
    ] = None,
    judge_model: Annotated[
        list[str] | None, typer.Option(help="Judge model(s) for judge-based trackers.")
    ] = None,
    scenario: Annotated[str, typer.Option(help="Scenario to simulate.")] = "workplace",
    episodes: Annotated[int, typer.Option(min=1, max=1000, help="Rule-party episodes.")] = 5,
    budget: Annotated[int, typer.Option(min=2, max=1000, help="Party turns each.")] = 30,
    mediator: Annotated[str, typer.Option(help="Mediator in the episodes: none or rule.")] = "rule",
) -> None:
    """Score trackers against the known truth of rule-party episodes."""
    from disputelab.experiments.judging import validate_judge as run_validation
    from disputelab.llm.base import ModelError

    judges = [j for j in (judge_model or []) if j != "rule"]
    # With a judge and no tracker named, validate the judge-based SoCRATES tracker too;
    # the per-turn tracker costs O(T x P^2) calls, so it is opt-in.
    names = tracker or (["self-report", "topic-localized"] if judges else ["self-report"])
    for name in names:
        if name not in TRACKERS:
            fail(f"unknown tracker {name!r}; available: {', '.join(TRACKERS)}")
    if mediator not in ("none", "rule"):
        fail(
            f"validation episodes use rule agents; mediator must be none or rule, not {mediator!r}"
        )
    check_judges(any(n in LLM_TRACKERS for n in names), judges, "judge-based trackers need")
    try:
        sc = resolve_scenario(scenario, library())
    except ScenarioError as exc:
        fail_scenario(exc)
    hub = open_models(judges)
    with ticker("validate-judge: episodes and trackers", hub) as progress:

        def step(done: int, total: int) -> None:
            if progress.total is None:
                progress.plan(total)
            progress.advance()

        try:
            reports = asyncio.run(
                run_validation(
                    open_store(), hub, sc, names, judges, episodes, budget, mediator, 0, step
                )
            )
        except (ModelError, ValueError) as exc:
            fail(str(exc).splitlines()[0])
    out.print(
        f"trackers against the oracle: {episodes} episodes of {sc.id}, "
        f"{budget} party turns, mediator {mediator}",
        highlight=False,
        soft_wrap=True,
    )
    print_rows([_fit_row(rep) for rep in reports], COLUMNS, ListFormat.table)
    for rep in reports:
        for why in rep.fit.failures[:3]:
            out.print(f"  [dim]{rep.tracker}: {why}[/]")


def _fit_row(rep: ValidationReport) -> dict[str, object]:
    """How a tracker's trajectories fit the oracle's, and what it cost."""
    a = rep.fit
    return {
        "tracker": rep.tracker,
        "judge": rep.judge if rep.tracker in LLM_TRACKERS else "-",
        "traj. r": _f(a.trajectory_r),
        "outcome r": _f(a.outcome_r),
        "MAE": _f(a.mae),
        "points": a.points,
        "calls/ep": f"{a.calls_per_episode:.1f}",
        "tokens/ep": f"{a.tokens_per_episode:.0f}",
    }


def _f(x: float) -> str:
    return "NaN" if x != x else f"{x:.3f}"
