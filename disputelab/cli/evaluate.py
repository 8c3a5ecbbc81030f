"""`disputelab evaluate`: re-score a stored run with any listed evaluator."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from disputelab.cli.common import (
    check_judges,
    fail,
    metrics_table,
    open_models,
    open_store,
    out,
    print_undefined,
    print_usage,
)
from disputelab.evaluation.registry import EVALUATORS, get_evaluator, on_demand_evaluators
from disputelab.evaluation.trackers import TRACKERS
from disputelab.store.sqlite import StoreError


def _evaluator_help() -> str:
    return "; ".join(f"{n}: {get_evaluator(n).description}" for n in on_demand_evaluators())


def evaluate(
    run_ref: Annotated[str, typer.Argument(metavar="RUN", help="A run id, or `last`.")] = "last",
    evaluator: Annotated[str, typer.Option(help=_evaluator_help())] = "self-report",
    tracker: Annotated[
        str, typer.Option(help="Tracker under the promediate evaluator.")
    ] = "self-report",
    judge_model: Annotated[
        list[str] | None,
        typer.Option(help="Judge model (repeat to combine several by the mean)."),
    ] = None,
) -> None:
    """Re-score a stored run without simulating again; scores are stored beside old ones."""
    from disputelab.experiments.judging import evaluate_run
    from disputelab.llm.base import ModelError

    listed = on_demand_evaluators()
    if evaluator not in listed:
        fail(f"unknown evaluator {evaluator!r}; available: {', '.join(listed)}")
    if tracker not in TRACKERS:
        fail(f"unknown tracker {tracker!r}; available: {', '.join(TRACKERS)}")
    judges = [j for j in (judge_model or []) if j != "rule"]
    needs = EVALUATORS.get(evaluator).requires_judge({"tracker": tracker})
    check_judges(needs, judges, f"evaluator {evaluator!r} needs")
    try:
        run_id = open_store().resolve_run(run_ref)
    except StoreError as exc:
        fail(str(exc))
    hub = open_models(judges)
    try:
        results = asyncio.run(evaluate_run(open_store(), run_id, evaluator, hub, judges, tracker))
    except (ModelError, ValueError) as exc:
        fail(str(exc).splitlines()[0])
    if not results:
        fail(f"run {run_id} has no complete episode to evaluate")
    out.print(metrics_table(f"{evaluator} scores, run {run_id}", results))
    print_undefined(results)
    print_usage(hub)
