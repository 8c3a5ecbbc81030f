"""`disputelab evaluate`: re-score a stored run with any listed evaluator."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from disputelab import api
from disputelab.api import RULE, MetricResult, StoreError, get_evaluator, on_demand_evaluators
from disputelab.cli.common import (
    RUN_HELP,
    ListFormat,
    counted,
    err,
    fail,
    fail_if_judges_silent,
    open_models,
    open_store,
    out,
    print_rows,
    print_usage,
    run_with_models,
    undefined_reasons,
)
from disputelab.cli.progress import ticker
from disputelab.errors import PlanError

if TYPE_CHECKING:
    from disputelab.api import ModelHub


def _evaluator_help() -> str:
    return "; ".join(f"{n}: {get_evaluator(n).description}" for n in on_demand_evaluators())


BertModel = Annotated[
    str,
    typer.Option(
        help="BERTScore model under points-bertscore: a Hugging Face name already in the "
        "local cache (bert-base-chinese for AgentMediation) or a model directory."
    ),
]
RougeOption = Annotated[
    str,
    typer.Option(
        help="ROUGE-L tokens under points-rouge: char, jieba, or paper (the released "
        "AgentMediation code's jieba words and scorer)."
    ),
]
ScoresFormat = Annotated[
    ListFormat,
    typer.Option(
        "--format",
        help="table (means per condition and arm), or json or csv (one row per episode).",
    ),
]
# The API's names for what this command calls options.
OPTIONS = {"judges": "--judge-model", "bert_model": "--bert-model"}


def evaluate(
    run_ref: Annotated[str, typer.Argument(metavar="RUN", help=RUN_HELP)] = "last",
    evaluator: Annotated[str, typer.Option(help=_evaluator_help())] = "self-report",
    tracker: Annotated[
        str, typer.Option(help="Tracker under the promediate evaluator.")
    ] = "self-report",
    rouge: RougeOption = "char",
    bert_model: BertModel = "",
    judge_model: Annotated[
        list[str] | None,
        typer.Option(help="Judge model (repeat to combine several by the mean)."),
    ] = None,
    fmt: ScoresFormat = ListFormat.table,
) -> None:
    """Re-score a stored run without simulating again; scores are stored beside old ones."""
    from disputelab.api import ModelError

    judges = [j for j in (judge_model or []) if j != RULE]
    try:
        api.check_evaluation(evaluator, judges, tracker, rouge, bert_model)
    except PlanError as exc:
        fail(exc.worded(OPTIONS)[0].replace("bert_model", "--bert-model"))
    try:
        run_id = open_store(create=False).resolve_run(run_ref)
    except StoreError as exc:
        fail(str(exc))
    hub = open_models(judges)
    with ticker(f"evaluate {run_id}", hub) as progress:

        def scored(done: int, total: int) -> None:
            if progress.total is None:
                progress.plan(total)
            progress.advance()

        work = api.evaluate_async(
            run_id,
            evaluator,
            judges=judges,
            tracker=tracker,
            rouge=rouge,
            bert_model=bert_model,
            store=open_store(),
            hub=hub,
            on_scored=scored,
        )
        try:
            results = run_with_models(hub, work)
        except (ModelError, ValueError) as exc:
            fail(str(exc).splitlines()[0])
    _conclude(results, run_id, evaluator, fmt, hub)


def _conclude(
    results: dict[str, dict[str, MetricResult]],
    run_id: str,
    evaluator: str,
    fmt: ListFormat,
    hub: ModelHub,
) -> None:
    """Print the scores (and, as a table, the models' usage); fail in one line when there
    was nothing to score or no judge ever answered."""
    if not results:
        fail(f"run {run_id} has no complete episode to evaluate")
    _print_results(results, run_id, evaluator, fmt)
    if fmt is ListFormat.table:
        print_usage(hub)
    fail_if_judges_silent(hub, undefined_reasons(results))


def _print_results(
    results: dict[str, dict[str, MetricResult]], run_id: str, evaluator: str, fmt: ListFormat
) -> None:
    cells = open_store().episode_cells(run_id)
    if not any(results.values()):
        # e.g. turn-taking on cyclic episodes: say why there are no metric columns.
        err.print(
            f"{evaluator} has nothing to score in run {run_id}: "
            f"{get_evaluator(evaluator).description}",
            highlight=False,
            soft_wrap=True,
        )
    if fmt is not ListFormat.table:
        print_rows(
            _per_episode(results, cells), _columns(results, ("episode", "condition", "arm")), fmt
        )
        return
    out.print(f"{evaluator} scores, run {run_id}: mean per condition and arm", highlight=False)
    print_rows(_per_cell(results, cells), _columns(results, ("condition", "arm", "n")), fmt)
    _print_nan_reasons(results, cells)


def _columns(results: dict[str, dict[str, MetricResult]], first: tuple[str, ...]) -> list[str]:
    metrics = list(dict.fromkeys(m for scores in results.values() for m in scores))
    return [*first, *metrics]


def _per_episode(
    results: dict[str, dict[str, MetricResult]], cells: dict[str, tuple[str, str]]
) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for eid, scores in results.items():
        condition, arm = cells.get(eid, ("", ""))
        row: dict[str, object] = {"episode": eid, "condition": condition, "arm": arm}
        row |= {m: (None if not r.defined else r.value) for m, r in scores.items()}
        rows.append(row)
    return rows


def _per_cell(
    results: dict[str, dict[str, MetricResult]], cells: dict[str, tuple[str, str]]
) -> list[dict[str, object]]:
    """Mean of each metric per (condition, arm), over the episodes where it is defined."""
    groups: dict[tuple[str, str], list[dict[str, MetricResult]]] = {}
    for eid, scores in results.items():
        groups.setdefault(cells.get(eid, ("", "")), []).append(scores)
    metrics = _columns(results, ())
    rows: list[dict[str, object]] = []
    for (condition, arm), members in groups.items():
        row: dict[str, object] = {"condition": condition, "arm": arm, "n": len(members)}
        for m in metrics:
            xs = [s[m].value for s in members if m in s and s[m].defined]
            row[m] = f"{sum(xs) / len(xs):.3g}" if xs else "NaN"
        rows.append(row)
    return rows


def _print_nan_reasons(
    results: dict[str, dict[str, MetricResult]],
    cells: dict[str, tuple[str, str]],
    most: int = 8,
) -> None:
    """Why scores are undefined, each reason once with how many episodes of which arms
    it covers, under a heading of their own (not under the last cell printed)."""
    reasons: dict[tuple[str, str], Counter[str]] = {}
    for eid, scores in results.items():
        arm = cells.get(eid, ("", ""))[1]
        for m, r in scores.items():
            if not r.defined:
                reasons.setdefault((m, r.explanation), Counter())[arm] += 1
    if not reasons:
        return
    out.print("undefined scores, by reason:", highlight=False)
    ranked = sorted(reasons.items(), key=lambda kv: -sum(kv[1].values()))
    for (metric, why), arms in ranked[:most]:
        where = ", ".join(f"{n} {arm}" if arm else str(n) for arm, n in sorted(arms.items()))
        n = sum(arms.values())
        line = f"  [dim]{escape(metric)}: {escape(why)} ({counted(n, 'episode')}: {where})[/]"
        out.print(line, highlight=False)
    if len(reasons) > most:
        out.print(f"  [dim]… {len(reasons) - most} more reasons (--format json lists them)[/]")
