"""Judge validation: how well each consensus tracker recovers the known truth (the oracle)
of rule-policy episodes, on several scenarios, with parties that talk rather than recite
their stances. Stored as a run that `report` prints again.

    from disputelab.api import judge_validation as jv

    plan, scenarios = jv.plan_validation(trackers=["self-report"], episodes=2)
    report = await jv.validate_judge_async(plan, scenarios, store=store, hub=hub)
    print(jv.validation_table(report).rows)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from disputelab.api._lazy import lazy_attribute
from disputelab.errors import PlanError, Problem
from disputelab.evaluation.trackers import LLM_TRACKERS
from disputelab.plan.cast import RULE
from disputelab.scenario.library import resolve_scenario
from disputelab.scenario.schema import Scenario

if TYPE_CHECKING:
    from disputelab.annotation.agreement import HumanReport
    from disputelab.experiments.validation import ValidationPlan, ValidationReport
    from disputelab.llm.models import ModelHub
    from disputelab.store.sqlite import Store

__all__ = [
    "DEFAULT_SCENARIOS",
    "VALIDATED_TRACKERS",
    "VOICES",
    "HumanReport",
    "ValidationPlan",
    "ValidationReport",
    "ValidationTable",
    "human_run",
    "human_table",
    "plan_validation",
    "validate_against_humans_async",
    "validate_judge_async",
    "validation_json",
    "validation_table",
]

# Five library scenarios, so that a judge is not validated on one kind of dispute: two,
# three and four parties, three to five topics.
DEFAULT_SCENARIOS = (
    "tenancy",
    "workplace",
    "community-centre",
    "kitchen-renovation",
    "library-closures",
)
VALIDATED_TRACKERS = ("self-report", "topic-localized", "per-turn")
VOICES = ("template", "paraphrase", "hybrid")
_MEDIATORS = ("none", RULE)
# The plan and report types, from a module that takes seconds to import.
_LAZY = {
    "HumanReport": "disputelab.annotation.agreement",
    "ValidationPlan": "disputelab.experiments.validation",
    "ValidationReport": "disputelab.experiments.validation",
}


def __getattr__(name: str) -> Any:
    return lazy_attribute(globals(), _LAZY, name)


def _trackers(named: Sequence[str] | None, judges: list[str]) -> list[str]:
    """The trackers to validate, checked. With a judge and none named, the judge-based
    SoCRATES tracker too; per-turn costs O(T x P^2) calls, so it is opt-in."""
    names = list(dict.fromkeys(named or ()))
    if not names:
        names = ["self-report", "topic-localized"] if judges else ["self-report"]
    for name in names:
        if name == "oracle":
            raise PlanError(
                "",
                ["oracle is the truth the trackers are scored against, not a tracker to validate"],
            )
        if name not in VALIDATED_TRACKERS:
            raise PlanError(
                "", [f"unknown tracker {name!r}; available: {', '.join(VALIDATED_TRACKERS)}"]
            )
    return names


def _voice_model(voice: str, named: str | None, judges: list[str]) -> str:
    """The model of the hybrid voice (the named one, else the first judge); "" otherwise."""
    if voice != "hybrid":
        return ""
    speaker = named or (judges[0] if judges else "")
    if not speaker:
        raise PlanError("", [Problem("the hybrid voice needs a model", ("voice_model", "judges"))])
    return speaker


def _scenarios(refs: Sequence[str], store: str | os.PathLike[str] | None) -> list[Scenario]:
    from disputelab.api import library

    found: dict[str, Scenario] = {}
    for ref in refs:
        sc = resolve_scenario(ref, library(store))
        if not sc.topics:
            raise PlanError(
                "", [f"{sc.id} has no topics to agree on; validation needs a topic scenario"]
            )
        found[sc.id] = sc
    return list(found.values())


def plan_validation(
    *,
    trackers: Sequence[str] | None = None,
    judges: Sequence[str] = (),
    scenarios: Sequence[str] | None = None,
    episodes: int = 3,
    budget: int = 30,
    mediator: str = RULE,
    voice: str = "paraphrase",
    voice_model: str | None = None,
    seed: int = 0,
    store: str | os.PathLike[str] | None = None,
) -> tuple[ValidationPlan, list[Scenario]]:
    """Check a validation and plan it: `trackers` (default self-report, and
    topic-localized with a judge), `judges` for the judged ones, `scenarios` (default
    DEFAULT_SCENARIOS), rule-policy `episodes` per scenario of `budget` party turns each,
    a `mediator` (none or rule), how the parties speak (`voice`: template, paraphrase,
    or hybrid with `voice_model`, else the first judge) and the first `seed`. PlanError
    (its problem naming the input that mends it), ScenarioError."""
    from disputelab.experiments.validation import ValidationPlan

    judged = [j for j in judges if j != RULE]
    names = _trackers(trackers, judged)
    if mediator not in _MEDIATORS:
        raise PlanError(
            "",
            [
                "validation episodes use rule agents; mediator must be none or rule, not "
                f"{mediator!r}"
            ],
        )
    if any(n in LLM_TRACKERS for n in names) and not judged:
        raise PlanError("", [Problem("judge-based trackers need a judge", ("judges",))])
    if voice not in VOICES:
        raise PlanError("", [f"unknown voice {voice!r}; available: {', '.join(VOICES)}"])
    speaker = _voice_model(voice, voice_model, judged)
    found = _scenarios(scenarios or DEFAULT_SCENARIOS, store)
    ids = tuple(s.id for s in found)
    plan = ValidationPlan(
        ids, tuple(names), tuple(judged), voice, speaker, episodes, budget, mediator, seed
    )
    return plan, found


async def validate_judge_async(
    plan: ValidationPlan,
    scenarios: Sequence[Scenario],
    *,
    store: Store,
    hub: ModelHub,
    progress: Callable[[int, int], None] | None = None,
) -> ValidationReport:
    """Play the plan's episodes into a new `validation` run of `store`, track each with
    every tracker (judged ones asking the hub's judges), store the trajectories and
    score the trackers against the oracle; `progress` hears (done, total)."""
    from disputelab.experiments.validation import validate_judge

    return await validate_judge(store, hub, scenarios, plan, progress)


@dataclass(frozen=True)
class ValidationTable:
    """A validation as a table: its heading, columns, a row per tracker and judge, and
    notes (every NaN's reason, the points dropped)."""

    heading: str
    columns: tuple[str, ...]
    rows: list[dict[str, str]]
    notes: list[str]


def validation_table(report: ValidationReport) -> ValidationTable:
    """The validation's table, as `report` prints it."""
    from disputelab.report.validation import (
        COLUMNS,
        validation_heading,
        validation_notes,
        validation_rows,
    )

    return ValidationTable(
        validation_heading(report), COLUMNS, validation_rows(report), validation_notes(report)
    )


def validation_json(report: ValidationReport) -> str:
    """The validation as one JSON document, every statistic with its interval."""
    from disputelab.report.validation import validation_json as as_json

    return as_json(report)


HUMAN = "human:"
# Trackers scored against people by default: the rule parties' hidden state (where the
# run's parties had one) and the stances they stated; judged ones with a judge.
HUMAN_TRACKERS = ("oracle", "self-report")


def human_run(against: str) -> str:
    """The run reference of `human:RUN`; PlanError for anything else."""
    if not against.startswith(HUMAN) or not against[len(HUMAN) :].strip():
        raise PlanError("", [f"give human:RUN (RUN a run people annotated), not {against!r}"])
    return against[len(HUMAN) :].strip()


def _human_trackers(named: Sequence[str] | None, judges: list[str]) -> list[str]:
    names = list(dict.fromkeys(named or ()))
    if not names:
        names = [*HUMAN_TRACKERS, *(["topic-localized"] if judges else [])]
    for name in names:
        if name not in ("oracle", *VALIDATED_TRACKERS):
            known = ", ".join(("oracle", *VALIDATED_TRACKERS))
            raise PlanError("", [f"unknown tracker {name!r}; available: {known}"])
    if any(n in LLM_TRACKERS for n in names) and not judges:
        raise PlanError("", [Problem("judge-based trackers need a judge", ("judges",))])
    return names


async def validate_against_humans_async(
    against: str,
    *,
    trackers: Sequence[str] | None = None,
    judges: Sequence[str] = (),
    store: Store,
    hub: ModelHub | None = None,
) -> HumanReport:
    """Score `trackers` (default oracle and self-report, and topic-localized with a
    judge) and the baselines on the run `against` names (`human:RUN`) against the
    consensus labels its annotators gave in `disputelab annotate`. PlanError for a bad
    reference or tracker, StoreError for no such run, NoLabels for a run not labelled."""
    from disputelab.annotation.agreement import human_agreement

    run_id = store.resolve_run(human_run(against))
    judged = [j for j in judges if j != RULE]
    names = _human_trackers(trackers, judged)
    models = [hub.model(m, "judge") for m in judged] if hub is not None else []
    return await human_agreement(store, run_id, names, models, ",".join(judged))


def human_table(report: HumanReport) -> ValidationTable:
    """The human validation as the validation table prints: a row for the annotators
    with each other, then one per tracker and baseline."""
    from disputelab.annotation.agreement import human_table as table

    return ValidationTable(*table(report))
