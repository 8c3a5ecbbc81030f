"""`disputelab validate-judge`: score trackers against the oracle of rule-policy episodes,
on several scenarios, with parties that talk rather than recite their stances."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from disputelab.api import ScenarioError
from disputelab.api.judge_validation import DEFAULT_SCENARIOS
from disputelab.cli.common import (
    ListFormat,
    fail,
    fail_if_judges_silent,
    fail_scenario,
    given_options,
    open_models,
    open_store,
    out,
    print_rows,
    run_with_models,
    state,
)
from disputelab.cli.progress import ticker
from disputelab.errors import DisputelabError, PlanError, Problem

if TYPE_CHECKING:
    from disputelab.api import ModelHub, Scenario
    from disputelab.api.judge_validation import ValidationPlan, ValidationReport

# The API's names for what this command calls options.
OPTIONS = {"judges": "--judge-model", "voice_model": "--voice-model"}


class Voice(StrEnum):
    template = "template"
    paraphrase = "paraphrase"
    hybrid = "hybrid"


VoiceOption = Annotated[
    Voice,
    typer.Option(
        help="How the rule parties speak: template (recites its stances), paraphrase "
        "(varied words, no acceptable sets) or hybrid (a model phrases each move)."
    ),
]
AgainstOption = Annotated[
    str | None,
    typer.Option(
        help="human:RUN scores the trackers on RUN against its annotators' labels "
        "(`disputelab annotate RUN`) instead of simulating against the oracle."
    ),
]


ScenariosOption = Annotated[
    list[str] | None,
    typer.Option(
        help="Scenario(s) to simulate; default tenancy, workplace, community-centre, "
        "kitchen-renovation, library-closures."
    ),
]
EpisodesOption = Annotated[
    int, typer.Option(min=1, max=1000, help="Rule-policy episodes per scenario.")
]


def validate_judge(
    ctx: typer.Context,
    tracker: Annotated[
        list[str] | None,
        typer.Option(help="Tracker(s) to validate: self-report, topic-localized, per-turn."),
    ] = None,
    judge_model: Annotated[
        list[str] | None, typer.Option(help="Judge model(s) for judge-based trackers.")
    ] = None,
    scenario: ScenariosOption = None,
    episodes: EpisodesOption = 3,
    budget: Annotated[int, typer.Option(min=2, max=1000, help="Party turns each.")] = 30,
    mediator: Annotated[str, typer.Option(help="Mediator in the episodes: none or rule.")] = "rule",
    voice: VoiceOption = Voice.paraphrase,
    voice_model: Annotated[
        str | None, typer.Option(help="Model of the hybrid voice; default the first judge.")
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="First seed.")] = 0,
    fmt: Annotated[ListFormat, typer.Option("--format", help="table, json or csv.")] = (
        ListFormat.table
    ),
    against: AgainstOption = None,
) -> None:
    """Score trackers against the rule agents' known truth, or people's labels.

    Against the truth of rule-policy episodes, stored as a run that `disputelab report
    RUN` prints again; with --against human:RUN, against the people who labelled RUN
    instead (nothing is stored)."""
    from disputelab.api import judge_validation

    if against is not None:
        _refuse_simulation_options(ctx)
        _against_humans(against, tracker, judge_model or [], fmt)
        return
    try:
        plan, scenarios = judge_validation.plan_validation(
            trackers=tracker,
            judges=judge_model or [],
            scenarios=scenario or list(DEFAULT_SCENARIOS),
            episodes=episodes,
            budget=budget,
            mediator=mediator,
            voice=voice.value,
            voice_model=voice_model,
            seed=seed,
            store=state.store_path,
        )
    except PlanError as exc:
        fail(_worded(exc.found[0]))
    except ScenarioError as exc:
        fail_scenario(exc)
    hub = open_models([*plan.judge_models, *([plan.voice_model] if plan.voice_model else [])])
    report = _run(plan, scenarios, hub)
    show(report, fmt)
    fail_if_judges_silent(hub, (why for fit in report.fits for why in fit.failures))


# What shapes the simulated episodes; against people nothing is simulated, so each is
# refused rather than ignored.
SIMULATION_OPTIONS = ("scenario", "episodes", "budget", "mediator", "voice", "voice_model", "seed")


def _refuse_simulation_options(ctx: typer.Context) -> None:
    given = given_options(ctx, SIMULATION_OPTIONS)
    if given:
        fail(
            f"{', '.join(given)}: not used with --against, which scores the stored run's "
            "episodes and simulates none; drop them"
        )


def _against_humans(
    against: str, trackers: list[str] | None, judges: list[str], fmt: ListFormat
) -> None:
    """The trackers against RUN's annotators: the table, or one line and exit 2."""
    from disputelab.api import ModelError
    from disputelab.api.judge_validation import human_table, validate_against_humans_async

    hub = open_models([j for j in judges if j != "rule"])
    work = validate_against_humans_async(
        against, trackers=trackers, judges=judges, store=open_store(), hub=hub
    )
    try:
        report = run_with_models(hub, work)
    except PlanError as exc:
        fail(_worded(exc.found[0]))
    except (DisputelabError, ModelError) as exc:
        fail(str(exc).splitlines()[0])
    table = human_table(report)
    if fmt is ListFormat.json:
        data = {"heading": table.heading, "rows": table.rows, "notes": table.notes}
        out.print(json.dumps(data, indent=2), highlight=False, soft_wrap=True)
        return
    if fmt is ListFormat.table:
        out.print(table.heading, highlight=False, soft_wrap=True)
    print_rows(table.rows, table.columns, fmt)
    if fmt is ListFormat.table:
        for note in table.notes:
            out.print(f"  {note}", highlight=False, soft_wrap=True, markup=False)


def _worded(problem: Problem) -> str:
    """A planning problem with its fix named as this command's options; a judge alone is
    named with one that is always there."""
    names = dict(OPTIONS)
    if problem.fixes == ("judges",):
        names["judges"] = "--judge-model (e.g. local)"
    return problem.worded(names)


def _run(plan: ValidationPlan, scenarios: list[Scenario], hub: ModelHub) -> ValidationReport:
    """Run the validation with a progress bar; a model or input error is one line."""
    from disputelab.api import ModelError
    from disputelab.api.judge_validation import validate_judge_async

    with ticker("validate-judge: episodes and trackers", hub) as progress:

        def step(done: int, total: int) -> None:
            if progress.total is None:
                progress.plan(total)
            progress.advance()

        work = validate_judge_async(plan, scenarios, store=open_store(), hub=hub, progress=step)
        try:
            return run_with_models(hub, work)
        except (ModelError, ValueError) as exc:
            fail(str(exc).splitlines()[0])


def show(report: ValidationReport, fmt: ListFormat) -> None:
    """The validation table and its notes (or JSON / CSV rows for scripts)."""
    from disputelab.api.judge_validation import validation_json, validation_table

    if fmt is ListFormat.json:
        out.print(validation_json(report), highlight=False, soft_wrap=True)
        return
    table = validation_table(report)
    if fmt is ListFormat.csv:
        print_rows(table.rows, table.columns, fmt)
        return
    out.print(table.heading, highlight=False, soft_wrap=True)
    print_rows(table.rows, table.columns, fmt)
    for note in table.notes:
        out.print(f"  {note}", highlight=False, soft_wrap=True, markup=False)
