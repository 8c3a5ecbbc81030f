"""`disputelab validate-judge`: score trackers against the oracle of rule-policy episodes,
on several scenarios, with parties that talk rather than recite their stances."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from disputelab.cli.common import (
    ListFormat,
    check_judges,
    fail,
    fail_if_judges_silent,
    fail_scenario,
    library,
    open_models,
    open_store,
    out,
    print_rows,
    run_with_models,
)
from disputelab.cli.progress import ticker
from disputelab.evaluation.trackers import LLM_TRACKERS
from disputelab.scenario.io import ScenarioError
from disputelab.scenario.library import resolve_scenario

if TYPE_CHECKING:
    from disputelab.experiments.validation import ValidationPlan, ValidationReport
    from disputelab.llm.models import ModelHub
    from disputelab.scenario.schema import Scenario

# Three library scenarios with two, three and four parties.
DEFAULT_SCENARIOS = ("tenancy", "workplace", "community-centre")
VALIDATED = ("self-report", "topic-localized", "per-turn")


class Voice(StrEnum):
    template = "template"
    paraphrase = "paraphrase"
    hybrid = "hybrid"


def validate_judge(
    tracker: Annotated[
        list[str] | None,
        typer.Option(help="Tracker(s) to validate: self-report, topic-localized, per-turn."),
    ] = None,
    judge_model: Annotated[
        list[str] | None, typer.Option(help="Judge model(s) for judge-based trackers.")
    ] = None,
    scenario: Annotated[
        list[str] | None,
        typer.Option(help="Scenario(s) to simulate; default tenancy, workplace, community-centre."),
    ] = None,
    episodes: Annotated[
        int, typer.Option(min=1, max=1000, help="Rule-policy episodes per scenario.")
    ] = 3,
    budget: Annotated[int, typer.Option(min=2, max=1000, help="Party turns each.")] = 30,
    mediator: Annotated[str, typer.Option(help="Mediator in the episodes: none or rule.")] = "rule",
    voice: Annotated[
        Voice,
        typer.Option(
            help="How the rule parties speak: template (recites its stances), paraphrase "
            "(varied words, no acceptable sets) or hybrid (a model phrases each move)."
        ),
    ] = Voice.paraphrase,
    voice_model: Annotated[
        str | None, typer.Option(help="Model of the hybrid voice; default the first judge.")
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="First seed.")] = 0,
    fmt: Annotated[ListFormat, typer.Option("--format", help="table, json or csv.")] = (
        ListFormat.table
    ),
) -> None:
    """Score trackers against the known truth of rule-policy episodes; stored as a run
    that `disputelab report RUN` prints again."""
    from disputelab.experiments.validation import ValidationPlan

    judges = [j for j in (judge_model or []) if j != "rule"]
    names = _trackers(tracker, judges)
    if mediator not in ("none", "rule"):
        fail(
            f"validation episodes use rule agents; mediator must be none or rule, not {mediator!r}"
        )
    check_judges(any(n in LLM_TRACKERS for n in names), judges, "judge-based trackers need")
    speaker = _voice_model(voice, voice_model, judges)
    scenarios = _scenarios(scenario or list(DEFAULT_SCENARIOS))
    ids = tuple(s.id for s in scenarios)
    plan = ValidationPlan(
        ids, tuple(names), tuple(judges), voice.value, speaker, episodes, budget, mediator, seed
    )
    hub = open_models([*plan.judge_models, *([plan.voice_model] if plan.voice_model else [])])
    report = _run(plan, scenarios, hub)
    show(report, fmt)
    fail_if_judges_silent(hub, (why for fit in report.fits for why in fit.failures))


def _run(plan: ValidationPlan, scenarios: list[Scenario], hub: ModelHub) -> ValidationReport:
    """Run the validation with a progress bar; a model or input error is one line."""
    from disputelab.experiments.validation import validate_judge as run_validation
    from disputelab.llm.base import ModelError

    with ticker("validate-judge: episodes and trackers", hub) as progress:

        def step(done: int, total: int) -> None:
            if progress.total is None:
                progress.plan(total)
            progress.advance()

        try:
            return run_with_models(hub, run_validation(open_store(), hub, scenarios, plan, step))
        except (ModelError, ValueError) as exc:
            fail(str(exc).splitlines()[0])


def _voice_model(voice: Voice, named: str | None, judges: list[str]) -> str:
    """The model of the hybrid voice (the named one, else the first judge); "" otherwise."""
    if voice is not Voice.hybrid:
        return ""
    speaker = named or (judges[0] if judges else "")
    if not speaker:
        fail("the hybrid voice needs a model: pass --voice-model or --judge-model")
    return speaker


def _trackers(named: list[str] | None, judges: list[str]) -> list[str]:
    """The trackers to validate, checked. With a judge and none named, the judge-based
    SoCRATES tracker too; per-turn costs O(T x P^2) calls, so it is opt-in."""
    names = list(dict.fromkeys(named or ()))
    if not names:
        names = ["self-report", "topic-localized"] if judges else ["self-report"]
    for name in names:
        if name == "oracle":
            fail("oracle is the truth the trackers are scored against, not a tracker to validate")
        if name not in VALIDATED:
            fail(f"unknown tracker {name!r}; available: {', '.join(VALIDATED)}")
    return names


def _scenarios(refs: list[str]) -> list[Scenario]:
    found: dict[str, Scenario] = {}
    for ref in refs:
        try:
            sc = resolve_scenario(ref, library())
        except ScenarioError as exc:
            fail_scenario(exc)
        if not sc.topics:
            fail(f"{sc.id} has no topics to agree on; validation needs a topic scenario")
        found[sc.id] = sc
    return list(found.values())


def show(report: ValidationReport, fmt: ListFormat) -> None:
    """The validation table and its notes (or JSON / CSV rows for scripts)."""
    from disputelab.report.validation import (
        COLUMNS,
        validation_heading,
        validation_json,
        validation_notes,
        validation_rows,
    )

    if fmt is ListFormat.json:
        out.print(validation_json(report), highlight=False, soft_wrap=True)
        return
    if fmt is ListFormat.csv:
        print_rows(validation_rows(report), COLUMNS, fmt)
        return
    out.print(validation_heading(report), highlight=False, soft_wrap=True)
    print_rows(validation_rows(report), COLUMNS, fmt)
    for note in validation_notes(report):
        out.print(f"  {note}", highlight=False, soft_wrap=True, markup=False)
