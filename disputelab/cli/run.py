"""`disputelab run`: one episode of any protocol, with its unmediated twin where the
protocol plays twins, stored, scored and summarised. The options are resolved by
`disputelab.plan_run` and played by `disputelab.run`; this module only reads the command
line and prints."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.markup import escape

from disputelab import api
from disputelab.api import (
    DEFAULT_PROTOCOL,
    LLM_TRACKERS,
    MAX_SEED,
    PROTOCOLS,
    RULE,
    TRACKERS,
    chosen_protocol,
    embeddings_line,
    mediator_kinds,
    party_kinds,
    redact,
)
from disputelab.cli.common import (
    check_models,
    counted,
    err,
    fail,
    fail_if_judges_silent,
    fail_lines,
    fail_problems,
    metrics_table,
    open_models,
    open_store,
    out,
    print_undefined,
    print_usage,
    run_with_models,
    state,
    store_option,
    undefined_reasons,
    warn,
)
from disputelab.cli.params import (
    PARAM_HELP,
    complete_param,
    deprecated_params,
    param_values,
    parse_pairs,
    with_param_options,
)
from disputelab.cli.progress import ticker
from disputelab.errors import DisputelabError, PlanError

if TYPE_CHECKING:
    from disputelab.api import Episode, MetricResult, RunPlan, RunResult

# No [@URL] here: the help is rich markup, where square brackets are a tag.
MODEL_HELP = "rule, local, openai:MODEL, PROVIDER/MODEL or a profile"
CASE, PROTOCOL, SEATS = "Case", "Protocol", "Seats and models"
# The plan's names for what the command line calls options.
OPTIONS = {
    "model": "--model",
    "models.parties": "--parties-model",
    "models.mediator": "--mediator-model",
    "models.judge": "--judge-model",
    "models.mediator.when": "--mediator-when-model",
    "models.embeddings": "--embeddings-model",
    "protocol": "--protocol",
    "corpus": "--corpus",
    "tracker": "--tracker",
    "condition": "--condition",
    "seed": "--seed",
    "preset": "--preset",
    "budget": "--budget",
}
TRACKER_HELP = (
    f"Second consensus table from {', '.join(t for t in TRACKERS if t != 'oracle')} "
    f"({' and '.join(LLM_TRACKERS)} ask a judge)."
)


def _seed_in_range(seed: int) -> int:
    # A callback rather than min/max: typer's range column would squeeze the help text.
    if not 0 <= seed <= MAX_SEED:
        raise typer.BadParameter(f"must be from 0 to {MAX_SEED} (2^53), got {seed}")
    return seed


SeedOption = Annotated[
    int,
    typer.Option(
        callback=_seed_in_range,
        help="Seed (default 0; same seed, same episode).",
        show_default=False,
        rich_help_panel=CASE,
    ),
]
ProtocolOption = Annotated[
    str | None,
    typer.Option(
        help=f"{', '.join(PROTOCOLS.names())} (default: the preset's, else {DEFAULT_PROTOCOL}).",
        rich_help_panel=PROTOCOL,
    ),
]
PresetOption = Annotated[
    str | None,
    typer.Option(
        help="A paper's setting (`disputelab presets list`); options given override it.",
        rich_help_panel=PROTOCOL,
    ),
]
BudgetOption = Annotated[
    int | None,
    typer.Option(
        help="The turn budget, in the protocol's unit (`disputelab protocols show NAME`).",
        rich_help_panel=PROTOCOL,
    ),
]
ParamOption = Annotated[
    list[str] | None,
    typer.Option(
        "--param", "-P", help=PARAM_HELP, autocompletion=complete_param, rich_help_panel=PROTOCOL
    ),
]
BehaviourOption = Annotated[
    list[str] | None,
    typer.Option(
        help="A rule-agent parameter NAME=VALUE (`disputelab conditions parameters`); repeatable.",
        rich_help_panel=PROTOCOL,
    ),
]
MediatorOption = Annotated[
    str | None,
    typer.Option(
        help=f"{', '.join(mediator_kinds())} (default: the protocol's).", rich_help_panel=SEATS
    ),
]
PartiesOption = Annotated[
    str | None,
    typer.Option(
        help=f"{', '.join(party_kinds())} (default: rule, or llm with a model).",
        rich_help_panel=SEATS,
    ),
]


def _model_option(help: str, show_default: bool = True) -> Any:
    return typer.Option(help=help, show_default=show_default, rich_help_panel=SEATS)


ConditionOption = Annotated[
    str,
    typer.Option(
        help="Condition(s), joined by ',' (`disputelab conditions list`); default general.",
        show_default=False,
        rich_help_panel=CASE,
    ),
]
CorpusOption = Annotated[
    Path | None,
    typer.Option(
        help="Statute corpus for expertise:ek-topK; default: the other cases' legal bases.",
        rich_help_panel=CASE,
    ),
]
ModelOption = Annotated[
    list[str] | None,
    _model_option(
        f"Model for every LLM role: {MODEL_HELP}; repeat to compare models.",
        show_default=False,
    ),
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Check the run and print its plan; play nothing.")
]
PartiesModel = Annotated[str | None, _model_option("Model for the parties.")]
MediatorModel = Annotated[str | None, _model_option("Model for the mediator or counsel.")]
WhenModel = Annotated[str | None, _model_option("Model of a mediator's when-call.")]
JudgeModel = Annotated[str | None, _model_option("Model for judges (--tracker).")]
EmbeddingsModel = Annotated[
    str | None,
    _model_option(
        "Embeddings of LLM parties' memories: an endpoint, local or lexical (default: "
        "the parties' endpoint)."
    ),
]
TrackerOption = Annotated[str | None, typer.Option(help=TRACKER_HELP, rich_help_panel=SEATS)]


@with_param_options
def run(
    scenario: Annotated[
        str, typer.Argument(help="Built-in scenario id or a scenario file.", show_default=False)
    ],
    condition: ConditionOption = "general",
    seed: SeedOption = 0,
    corpus: CorpusOption = None,
    protocol: ProtocolOption = None,
    preset: PresetOption = None,
    budget: BudgetOption = None,
    param: ParamOption = None,
    behaviour: BehaviourOption = None,
    mediator: MediatorOption = None,
    parties: PartiesOption = None,
    model: ModelOption = None,
    parties_model: PartiesModel = None,
    mediator_model: MediatorModel = None,
    mediator_when_model: WhenModel = None,
    judge_model: JudgeModel = None,
    embeddings_model: EmbeddingsModel = None,
    tracker: TrackerOption = None,
    dry_run: DryRunOption = False,
    **old_options: Any,
) -> None:
    """Run one episode (and a mediator's unmediated twin); repeat --model to compare."""
    models = _models(parties_model, mediator_model, mediator_when_model, judge_model)
    if embeddings_model is not None:
        models["embeddings"] = embeddings_model
    plan = _plan(
        scenario,
        protocol=protocol,
        preset=preset,
        mediator=mediator,
        parties=parties,
        model=model or RULE,
        models=models,
        condition=condition,
        seed=seed,
        params=_params(protocol, preset, param or [], behaviour or [], old_options),
        budget=budget,
        corpus=corpus,
        tracker=tracker,
    )
    for line in plan.warnings:
        warn(*line.split(": ", 1))
    if dry_run:
        check_models(plan.models, keys=False)  # a key may be set later: a plan comes first
        _print_plan(plan)
        return
    hub = open_models(plan.models)
    if plan.embeddings is not None:
        line = f"embeddings: {embeddings_line(plan.embeddings)}"
        err.print(line, highlight=False, soft_wrap=True)
    result = _play(plan, hub)
    _print_results(plan, result)
    print_usage(hub)
    out.print(f"[dim]full transcript: disputelab {store_option()}report {result.run_id}[/]")
    fail_if_judges_silent(hub, undefined_reasons(result.tracked))  # exit 2 after the tables


def _print_results(plan: RunPlan, result: RunResult) -> None:
    """Each model's episodes (the run's own where it has no model axis), then the
    models side by side."""
    shown: set[str | None] = {None}  # twins printed: one all the models share, once
    for name, part in (result.by_model or {"": result}).items():
        _print_result(plan, part, name, part.baseline_id not in shown)
        shown.add(part.baseline_id)
        print_tracked(part)
    if result.by_model:
        _print_models(plan, result)


def _models(
    parties: str | None, mediator: str | None, when: str | None, judge: str | None
) -> dict[str, str]:
    """The model of each role named by its own option; `--model` plays the rest."""
    named = {"parties": parties, "mediator": mediator, "mediator.when": when, "judge": judge}
    return {role: name for role, name in named.items() if name is not None}


def _params(
    protocol: str | None,
    preset: str | None,
    pairs: list[str],
    behaviour: list[str],
    old_options: dict[str, Any],
) -> dict[str, Any]:
    """The protocol parameters the command line names: `--param` pairs (a dotted one sets
    one entry of a mapping parameter), `--behaviour` pairs, and the options each
    parameter had before `--param`, said to be deprecated."""
    values = deprecated_params(protocol, preset, old_options)
    if behaviour:
        values["behaviour"] = parse_pairs(behaviour, "--behaviour")
    return param_values(protocol, preset, values, pairs)


def _plan(scenario: str, **options: Any) -> RunPlan:
    """The run's plan, or every problem found and exit status 2, before anything is
    played or recorded."""
    try:
        return api.plan_run(scenario, store=state.store_path, **options)
    except PlanError as exc:
        proto = chosen_protocol(options.get("protocol"), options.get("preset"))
        _fail_plan(exc, proto.turn_budget if proto is not None else "")
    except DisputelabError as exc:
        fail(str(exc))


def _as_options(problem: str, budget: str = "") -> str:
    """A problem as the command line names its place: `params.turn_taking: ...` is about
    `--param turn_taking`, the protocol's turn budget about `--budget`, `corpus ...`
    about `--corpus`, and `models.mediator.when: ...` about `--mediator-when-model`."""
    head, space, rest = problem.partition(" ")
    where = head.rstrip(":")
    colon = head[len(where) :]
    if where == "params" and colon:  # about the parameters together: it names them itself
        return rest
    if where == f"params.{budget}":
        return f"--budget{colon}{space}{rest}"
    if where in OPTIONS:
        return f"{OPTIONS[where]}{colon}{space}{rest}"
    if where.startswith("params."):
        return f"--param {where.removeprefix('params.')}{colon}{space}{rest}"
    return problem


def _play(plan: RunPlan, hub: Any) -> RunResult:
    """Play the planned run under a progress line of turns and model spend."""
    from disputelab.api import ModelError

    with ticker(f"simulating {plan.scenario.id}: turns", hub, transient=True) as progress:
        work = api.run_async(
            plan, store=open_store(), hub=hub, on_turn=lambda turn: progress.advance()
        )
        try:
            return run_with_models(hub, work)
        except PlanError as exc:
            _fail_plan(exc, plan.protocol.turn_budget)
        except (DisputelabError, ModelError, ValueError) as exc:
            fail(str(exc).splitlines()[0])


def _fail_plan(exc: PlanError, budget: str = "") -> NoReturn:
    problems = [_as_options(p, budget) for p in exc.worded(OPTIONS)]
    if exc.source:
        fail_problems(exc.source, problems)
    fail_lines(problems)


def _print_plan(plan: RunPlan) -> None:
    """The checked run: its case, its episodes (one set per model on a model axis) and
    the models of each role."""
    names = plan.episode_names()
    axis = f", {counted(len(plan.backbones), 'model')} compared" if plan.backbones else ""
    out.print(
        f"run {escape(plan.scenario.id)} ({plan.protocol.name}): condition "
        f"{escape(plan.condition)}, seed {plan.seed}{axis}, {counted(len(names), 'episode')}",
        highlight=False,
        soft_wrap=True,
    )
    out.print(
        f"  episodes: {', '.join(f'RUN-{name}' for name, _ in names)}",
        highlight=False,
        soft_wrap=True,
    )
    by_role = plan.models_by_role()
    if not by_role:
        out.print("  models: none (every role is played by rule agents)", highlight=False)
    for role, listed in by_role.items():
        shown = ", ".join(redact(m) for m in listed)
        out.print(f"  models, {role}: {escape(shown)}", highlight=False, soft_wrap=True)
    out.print("  dry run: nothing was run or stored", highlight=False)


def _print_models(plan: RunPlan, result: RunResult) -> None:
    """A model axis's scores side by side, and how to rank the models."""
    out.print(metrics_table(f"{plan.protocol.report.metrics_title}, by model", result.columns()))
    out.print(f"[dim]rank the models: disputelab {store_option()}compare {result.run_id}[/]")


def _print_result(plan: RunPlan, result: RunResult, backbone: str = "", twin: bool = True) -> None:
    scenario = result.scenario or plan.scenario
    seat = plan.protocol.mediator_seat
    mediator = plan.cast.kind(seat.role, seat.default) if seat else "none"
    names = {p.id: p.name for p in scenario.parties} | {"mediator": "Mediator"}
    at = f" @{backbone}" if backbone else ""
    out.print(
        f"[bold]{escape(scenario.title)}[/] ([green]{escape(scenario.id)}[/]), run "
        f"[magenta]{result.run_id}[/]{escape(at)}",
        highlight=False,
    )
    if result.baseline is not None and twin:
        print_summary(result.baseline, names, "unmediated")
    label = f"mediator: {mediator}" if mediator != "none" else "unmediated"
    print_summary(result.episode, names, label)
    for heading, text in plan.protocol.details(result.episode):
        out.print(f"[bold]{escape(heading)}[/]: {escape(text)}", highlight=False)
    out.print(metrics_table(plan.protocol.report.metrics_title, result.columns()))
    print_undefined({"": result.scores})


def print_tracked(result: RunResult) -> None:
    """The tracker's scores in the columns of the protocol's table (none without one),
    the episode's under the label that table heads it with."""
    if result.tracker is None:
        return
    columns: dict[str, dict[str, MetricResult]] = {}
    if result.baseline_id is not None and result.baseline_id in result.tracked:
        columns["unmediated"] = result.tracked[result.baseline_id]
    if result.episode_id in result.tracked:
        columns[result.label] = result.tracked[result.episode_id]
    if not columns:  # nothing complete to score: the run's own table has said why
        return
    out.print(metrics_table(f"consensus ({result.tracker} tracker)", columns))
    print_undefined(columns if len(columns) > 1 else {"": next(iter(columns.values()))})


def print_summary(ep: Episode, names: dict[str, str], label: str, excerpt: int = 3) -> None:
    """An episode in short: its first and last turns, the stop, and the agreement."""
    outcome = ep.outcome
    assert outcome is not None
    n_med = len(ep.intervention_positions())
    out.print(
        f"[bold]{label}[/]: {ep.party_turns} party turns, {n_med} mediator turns, "
        f"{ep.wall_time_s * 1000:.0f} ms"
    )
    turns = ep.turns
    shown = turns if len(turns) <= 2 * excerpt else turns[:excerpt] + turns[-excerpt:]
    for i, t in enumerate(shown):
        if len(turns) > 2 * excerpt and i == excerpt:
            out.print(f"  [dim]… {len(turns) - 2 * excerpt} more turns …[/]")
        text = t.text if len(t.text) <= 160 else t.text[:157] + "..."
        out.print(
            f"  [cyan]{t.party_turn:>3} {escape(names.get(t.speaker, t.speaker))}:[/] "
            f"{escape(text)}",
            highlight=False,
        )
    out.print(f"  [bold]stop:[/] {outcome.status.value}: {escape(outcome.stop_reason)}")
    if outcome.agreement and any(outcome.agreement.values()):
        agreed = ", ".join(f"{t}={o or '-'}" for t, o in outcome.agreement.items())
        label = "agreement" if outcome.status.value == "resolved" else "common ground"
        out.print(f"  [bold]{label}:[/] {escape(agreed)}", highlight=False)
