"""`disputelab compare`: models, mediators or whole runs side by side and ranked."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from disputelab import api
from disputelab.api import StoreError
from disputelab.cli.common import fail, open_store, write_out
from disputelab.errors import DisputelabError


class By(StrEnum):
    model = "model"
    mediator = "mediator"
    run = "run"
    people = "people"


class CompareFormat(StrEnum):
    md = "md"
    json = "json"
    csv = "csv"


def compare(
    runs: Annotated[
        list[str] | None,
        typer.Argument(metavar="RUN...", help="Runs to compare: ids, unique prefixes or last."),
    ] = None,
    experiment: Annotated[
        str | None, typer.Option("--experiment", help="Compare within this experiment's run.")
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            help="Metric to rank on: a name (final_consensus) or EVALUATOR.METRIC; default: "
            "the first of resolved, final_consensus, agreement, success scored.",
        ),
    ] = None,
    by: Annotated[
        By,
        typer.Option(
            "--by",
            help="What an arm is: a model, a mediator, a run, or people (the seats "
            "people filled, against agents).",
        ),
    ] = By.model,
    lower_is_better: Annotated[
        bool, typer.Option("--lower-is-better", help="Rank a lower value as the better.")
    ] = False,
    fmt: Annotated[CompareFormat, typer.Option("--format", help="md, json or csv.")] = (
        CompareFormat.md
    ),
    out_path: Annotated[Path | None, typer.Option("--out", help="Write to this file.")] = None,
) -> None:
    """Put models, mediators, runs or people side by side, ranked.

    A Bradley-Terry leaderboard from paired episodes, paired differences with
    Holm-adjusted tests, every metric."""
    if not runs and not experiment:
        fail("give one or more runs, or --experiment NAME")
    store = open_store(writable=False, create=False)
    try:
        board = api.compare(
            runs or [],
            experiment=experiment,
            metric=metric,
            by=by.value,
            higher_is_better=not lower_is_better,
            store=store,
        )
    except (DisputelabError, StoreError) as exc:
        fail(str(exc))
    write_out(board.render(fmt.value), out_path)
