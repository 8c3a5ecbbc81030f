"""The `disputelab` command line."""

from __future__ import annotations

import asyncio
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from disputelab.agents.registry import (
    MEDIATOR_KINDS,
    PARTY_KINDS,
    UnknownAgentError,
    check_mediator,
)
from disputelab.episode import Episode
from disputelab.evaluation.metrics import MetricResult
from disputelab.scenario.io import ScenarioError, dump_scenario, load_scenario
from disputelab.scenario.library import builtin_scenarios, resolve_scenario
from disputelab.scenario.schema import Scenario
from disputelab.store.sqlite import Store, StoreError

if TYPE_CHECKING:
    from disputelab.llm.models import ModelHub

app = typer.Typer(
    help="Simulate dispute mediation and negotiation, run experiments, and score outcomes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
scenarios_app = typer.Typer(help="List, show and validate scenarios.", no_args_is_help=True)
app.add_typer(scenarios_app, name="scenarios")
conditions_app = typer.Typer(help="Probing conditions: scenario transforms.", no_args_is_help=True)
app.add_typer(conditions_app, name="conditions")

# No emoji codes: user text such as 'posture:angry' must print as typed.
out = Console(emoji=False)
err = Console(stderr=True, emoji=False)


class _State:
    store_path: Path = Path("disputelab-runs")


state = _State()


def fail(message: str) -> NoReturn:
    """One line on stderr, exit status 2: the contract for every bad input."""
    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def _library() -> Path:
    """Where `scenarios import` puts cases when no --out is given."""
    return state.store_path / "library"


def open_store() -> Store:
    try:
        return Store(state.store_path)
    except StoreError as exc:
        fail(str(exc))


@app.callback()
def main_options(
    store: Annotated[
        Path, typer.Option("--store", help="Directory of the run store.", envvar="DISPUTELAB_STORE")
    ] = Path("disputelab-runs"),
) -> None:
    state.store_path = store


class ReportFormat(StrEnum):
    md = "md"
    json = "json"
    csv = "csv"
    parquet = "parquet"


def _metrics_table(title: str, columns: dict[str, dict[str, MetricResult]]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    for name in columns:
        table.add_column(name, justify="right")
    metrics: list[str] = []
    for scores in columns.values():
        metrics += [m for m in scores if m not in metrics]
    for m in metrics:
        cells = []
        for scores in columns.values():
            r = scores.get(m)
            cells.append("" if r is None else ("NaN" if not r.defined else f"{r.value:.3g}"))
        table.add_row(m, *cells)
    return table


def _print_summary(ep: Episode, names: dict[str, str], label: str, excerpt: int = 3) -> None:
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
    out.print(f"  [bold]stop:[/] {outcome.status.value}: {outcome.stop_reason}")
    if outcome.agreement and any(outcome.agreement.values()):
        agreed = ", ".join(f"{t}={o or '-'}" for t, o in outcome.agreement.items())
        label = "agreement" if outcome.status.value == "resolved" else "common ground"
        out.print(f"  [bold]{label}:[/] {agreed}")


@app.command()
def run(
    scenario: Annotated[str, typer.Argument(help="Built-in scenario id or a scenario file.")],
    mediator: Annotated[
        str | None,
        typer.Option(
            help=f"Mediator: {', '.join(MEDIATOR_KINDS)} (default: none for roundtable; for "
            "staged, rule without a model and llm with one)."
        ),
    ] = None,
    parties: Annotated[
        str | None,
        typer.Option(
            help="Party agents: rule, llm or hybrid (default: rule without a model, llm with one)."
        ),
    ] = None,
    model: Annotated[
        str,
        typer.Option(
            help="Model for every LLM role: rule (none), local, openai:MODEL, "
            "openai:MODEL@URL or a disputelab.toml profile."
        ),
    ] = "rule",
    parties_model: Annotated[str | None, typer.Option(help="Model for the parties.")] = None,
    mediator_model: Annotated[str | None, typer.Option(help="Model for the mediator.")] = None,
    judge_model: Annotated[
        str | None, typer.Option(help="Model for judges (recorded; used by evaluators).")
    ] = None,
    protocol: Annotated[str, typer.Option(help="Protocol: roundtable or staged.")] = "roundtable",
    condition: Annotated[
        str, typer.Option(help="Condition(s), joined by ',' (see `disputelab conditions list`).")
    ] = "general",
    seed: Annotated[int, typer.Option(help="Random seed (same seed, same episode).")] = 0,
    budget: Annotated[int, typer.Option(min=1, max=10_000, help="Party-turn budget.")] = 100,
    rounds: Annotated[
        int, typer.Option(min=0, max=100, help="Bargaining rounds (staged protocol).")
    ] = 5,
    corpus: Annotated[
        Path | None,
        typer.Option(
            help="Statute corpus for expertise:ek-topK (JSONL or YAML of citation and text); "
            "default: the legal bases of the other cases in the scenario file's folder."
        ),
    ] = None,
) -> None:
    """Run one episode; with a mediator, also its matched unmediated episode."""
    from disputelab.experiments.single import Agents, run_matched, run_staged_async
    from disputelab.llm.base import ModelError
    from disputelab.llm.models import ModelConfigError, ModelHub, load_profiles, parse_model
    from disputelab.scenario.conditions import ConditionError

    if protocol not in ("roundtable", "staged"):
        fail(f"unknown protocol {protocol!r}; available: roundtable, staged")
    if mediator is None:
        llm = (mediator_model or model) != "rule"
        mediator = ("llm" if llm else "rule") if protocol == "staged" else "none"
    if mediator not in MEDIATOR_KINDS:
        fail(f"unknown mediator {mediator!r}; available: {', '.join(MEDIATOR_KINDS)}")
    try:
        check_mediator(protocol, mediator)
    except UnknownAgentError as exc:
        fail(str(exc))
    agents = Agents(
        parties=parties or ("rule" if (parties_model or model) == "rule" else "llm"),
        mediator=mediator,
        parties_model=parties_model or model,
        mediator_model=mediator_model or model,
        judge_model=judge_model or model,
    )
    if agents.parties not in PARTY_KINDS:
        fail(f"unknown party kind {agents.parties!r}; available: {', '.join(PARTY_KINDS)}")
    try:
        profiles = load_profiles()
        for spec in {agents.parties_model, agents.mediator_model, agents.judge_model} - {"rule"}:
            parse_model(spec, profiles)  # fail fast on a bad name, before simulating
    except ModelConfigError as exc:
        fail(str(exc))
    store = open_store()
    hub = ModelHub(store.root / "cache.sqlite", profiles)
    if protocol != "staged" and corpus is not None:
        fail(
            "--corpus serves the expertise condition of the staged protocol; add --protocol staged"
        )
    if protocol == "staged" and budget != 100:
        err.print(
            "[yellow]warning:[/] --budget applies to roundtable; a staged session lasts "
            "--rounds bargaining rounds",
            highlight=False,
        )
    try:
        sc = _conditioned(resolve_scenario(scenario, _library()), condition, hub, model)
        if protocol != "staged" and sc.legal is not None and sc.legal.retrieval_top_k:
            fail(
                "the expertise condition applies to the staged protocol, whose mediator "
                "proposes legal bases; add --protocol staged"
            )
        retrieved = _retrieve(scenario, sc, corpus) if protocol == "staged" else ()
    except ScenarioError as exc:
        _fail_scenario(exc)
    except (ConditionError, ModelConfigError, ModelError, ValueError) as exc:
        fail(str(exc).splitlines()[0])
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    ) as progress:
        progress.add_task(f"simulating {sc.id}", total=None)
        try:
            if protocol == "staged":
                result = asyncio.run(
                    run_staged_async(store, sc, agents, seed, rounds, condition, hub, retrieved)
                )
            else:
                result = run_matched(
                    store,
                    sc,
                    agents=agents,
                    seed=seed,
                    budget=budget,
                    hub=hub,
                    condition=condition,
                )
        except (UnknownAgentError, ModelConfigError, ModelError, ValueError) as exc:
            fail(str(exc).splitlines()[0])
    names = {p.id: p.name for p in sc.parties} | {"mediator": "Mediator"}
    out.print(f"[bold]{sc.title}[/] ([green]{sc.id}[/]), run [magenta]{result.run_id}[/]")
    if result.baseline is not None:
        _print_summary(result.baseline, names, "unmediated")
    _print_summary(
        result.episode, names, f"mediator: {mediator}" if mediator != "none" else "unmediated"
    )
    columns = {"mediated" if mediator != "none" else "episode": result.scores}
    if result.baseline_scores is not None:
        columns = {"unmediated": result.baseline_scores} | columns
    title = "metrics (AgentMediation)" if protocol == "staged" else "metrics (oracle consensus)"
    if protocol == "staged":
        _print_proposals(result.episode)
    out.print(_metrics_table(title, columns))
    for name, r in result.scores.items():
        if not r.defined:
            out.print(f"  [dim]{name}: {r.explanation}[/]")
    store_opt = (
        "" if state.store_path == Path("disputelab-runs") else f"--store {state.store_path} "
    )
    _print_usage(hub)
    out.print(f"[dim]full transcript: disputelab {store_opt}report {result.run_id}[/]")


def _conditioned(base: Scenario, condition: str, hub: ModelHub, model: str) -> Scenario:
    """Apply `condition`; LLM-written conditions use `model` when it is not `rule`."""
    from disputelab.agents.scenario_writer import apply_condition_with_model, needs_writer

    writer = hub.model(model, "writer") if model != "rule" and needs_writer(condition) else None
    return asyncio.run(apply_condition_with_model(base, condition, writer))


def _retrieve(ref: str, sc: Scenario, corpus: Path | None) -> tuple[str, ...]:
    """Legal bases for the expertise condition, from `corpus`, else from the other cases in
    the scenario file's folder (or the store's library, for an imported id)."""
    from disputelab.experiments.expertise import build_index, retrieve_for

    if sc.legal is None or sc.legal.retrieval_top_k == 0:
        return ()
    neighbours: list[Scenario] = []
    # The other cases beside a scenario file, or in the library it was imported into.
    folder = Path(ref).parent if Path(ref).is_file() else _library()
    if corpus is None and folder is not None:
        for f in sorted(folder.glob("*.y*ml")) + sorted(folder.glob("*.json")):
            try:
                neighbours.append(load_scenario(f))
            except ScenarioError:
                continue  # a stray file beside the cases does not block the run
    return retrieve_for(build_index(corpus, neighbours), sc)


def _print_proposals(ep: Episode) -> None:
    """The staged mediator's proposals: points of contention and legal bases cited."""
    for t in ep.turns:
        if t.intervention is not None and t.stage in ("option", "closure"):
            m = t.intervention
            out.print(f"[bold]{t.stage} proposal[/]: {escape(m.utterance)}", highlight=False)
            if m.points:
                out.print(f"  points: {escape(m.points)}", highlight=False)
            out.print(f"  bases cited: {escape(', '.join(m.bases) or '-')}", highlight=False)


@app.command()
def evaluate(
    run_ref: Annotated[str, typer.Argument(metavar="RUN", help="A run id, or `last`.")] = "last",
    evaluator: Annotated[
        str,
        typer.Option(
            help="oracle, self-report, topic-localized, per-turn (trackers, scored "
            "with the SoCRATES metrics), promediate (CC/RL/ME on --tracker), "
            "outcome-judges (consensus and litigation risk), mediator-intelligence."
        ),
    ] = "self-report",
    tracker: Annotated[
        str, typer.Option(help="Tracker under the promediate evaluator.")
    ] = "self-report",
    judge_model: Annotated[
        list[str] | None,
        typer.Option(help="Judge model (repeat to combine several by the mean)."),
    ] = None,
) -> None:
    """Re-score a stored run without simulating again; scores are stored beside old ones."""
    import asyncio

    from disputelab.evaluation.trackers import LLM_TRACKERS, TRACKERS
    from disputelab.experiments.judging import EVALUATORS, JUDGE_EVALUATORS, evaluate_run
    from disputelab.llm.base import ModelError
    from disputelab.llm.models import ModelConfigError, ModelHub, load_profiles, parse_model

    if evaluator not in EVALUATORS:
        fail(f"unknown evaluator {evaluator!r}; available: {', '.join(EVALUATORS)}")
    if tracker not in TRACKERS:
        fail(f"unknown tracker {tracker!r}; available: {', '.join(TRACKERS)}")
    judges = [j for j in (judge_model or []) if j != "rule"]
    needs_judge = evaluator in (*LLM_TRACKERS, *JUDGE_EVALUATORS) or (
        evaluator == "promediate" and tracker in LLM_TRACKERS
    )
    if needs_judge and not judges:
        fail(f"evaluator {evaluator!r} needs a judge: pass --judge-model (e.g. local)")
    store = open_store()
    try:
        run_id = store.resolve_run(run_ref)
        profiles = load_profiles()
        for j in judges:
            parse_model(j, profiles)
    except (StoreError, ModelConfigError) as exc:
        fail(str(exc))
    hub = ModelHub(store.root / "cache.sqlite", profiles)
    try:
        results = asyncio.run(evaluate_run(store, run_id, evaluator, hub, judges, tracker))
    except (ModelError, ValueError) as exc:
        fail(str(exc).splitlines()[0])
    if not results:
        fail(f"run {run_id} has no complete episode to evaluate")
    out.print(_metrics_table(f"{evaluator} scores, run {run_id}", results))
    for eid, scores in results.items():
        for name, r in scores.items():
            if not r.defined:
                out.print(f"  [dim]{eid} {name}: {r.explanation}[/]")
    _print_usage(hub)


@app.command("validate-judge")
def validate_judge_cmd(
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
    import asyncio

    from disputelab.evaluation.trackers import LLM_TRACKERS, TRACKERS
    from disputelab.experiments.judging import validate_judge
    from disputelab.llm.base import ModelError
    from disputelab.llm.models import ModelConfigError, ModelHub, load_profiles, parse_model

    judges_given = [j for j in (judge_model or []) if j != "rule"]
    # With a judge and no tracker named, validate the judge-based SoCRATES tracker too;
    # the per-turn tracker costs O(T x P^2) calls, so it is opt-in.
    names = tracker or (["self-report", "topic-localized"] if judges_given else ["self-report"])
    for name in names:
        if name not in TRACKERS:
            fail(f"unknown tracker {name!r}; available: {', '.join(TRACKERS)}")
    if mediator not in ("none", "rule"):
        fail(
            f"validation episodes use rule agents; mediator must be none or rule, not {mediator!r}"
        )
    judges = [j for j in (judge_model or []) if j != "rule"]
    if any(n in LLM_TRACKERS for n in names) and not judges:
        fail("judge-based trackers need a judge: pass --judge-model (e.g. local)")
    try:
        sc = resolve_scenario(scenario, _library())
    except ScenarioError as exc:
        _fail_scenario(exc)
    try:
        profiles = load_profiles()
        for j in judges:
            parse_model(j, profiles)
    except ModelConfigError as exc:
        fail(str(exc))
    store = open_store()
    hub = ModelHub(store.root / "cache.sqlite", profiles)
    try:
        reports = asyncio.run(
            validate_judge(store, hub, sc, names, judges, episodes, budget, mediator)
        )
    except (ModelError, ValueError) as exc:
        fail(str(exc).splitlines()[0])
    table = Table(
        title=f"trackers against the oracle: {episodes} episodes of {sc.id}, "
        f"{budget} party turns, mediator {mediator}",
        title_justify="left",
    )
    table.add_column("tracker", no_wrap=True)
    table.add_column("judge", no_wrap=True)
    for col in ("traj. r", "outcome r", "MAE", "points", "calls/ep", "tokens/ep"):
        table.add_column(col, justify="right")

    def f(x: float) -> str:
        return "NaN" if x != x else f"{x:.3f}"

    for rep in reports:
        a = rep.agreement
        table.add_row(
            rep.tracker,
            rep.judge if rep.tracker in LLM_TRACKERS else "-",
            f(a.trajectory_r),
            f(a.outcome_r),
            f(a.mae),
            str(a.points),
            f"{a.calls_per_episode:.1f}",
            f"{a.tokens_per_episode:.0f}",
        )
    out.print(table)
    for rep in reports:
        for why in rep.agreement.failures[:3]:
            out.print(f"  [dim]{rep.tracker}: {why}[/]")


@app.command()
def experiment(
    spec_path: Annotated[Path, typer.Argument(metavar="SPEC.yaml", help="Experiment spec.")],
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue a stopped run; finished episodes are kept.")
    ] = False,
    concurrency: Annotated[
        int | None, typer.Option(min=1, max=1024, help="Episodes in flight (overrides spec).")
    ] = None,
) -> None:
    """Run an experiment grid: scenarios x conditions x mediators x replicates."""

    from rich.progress import MofNCompleteColumn, TimeRemainingColumn

    from disputelab.experiments.runner import run_experiment
    from disputelab.experiments.spec import SpecError, load_spec
    from disputelab.llm.base import ModelError
    from disputelab.llm.models import ModelConfigError, ModelHub, load_profiles, parse_model

    try:
        spec = load_spec(spec_path)
        profiles = load_profiles()
        for m in set(spec.models.values()) - {"rule"}:
            parse_model(m, profiles)
    except SpecError as exc:
        for problem in exc.problems:
            err.print(
                f"[bold red]error:[/] {escape(exc.source)}: {escape(problem)}",
                highlight=False,
                soft_wrap=True,
            )
        raise typer.Exit(2) from None
    except ModelConfigError as exc:
        fail(str(exc))
    store = open_store()
    hub = ModelHub(store.root / "cache.sqlite", profiles)
    failed = 0
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("failed {task.fields[failed]}"),
        TextColumn("{task.fields[spend]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=not err.is_terminal,
    ) as progress:
        task = progress.add_task(f"experiment {spec.name}", total=None, failed=0, spend="")

        def tick(event: str, ep: object, error: str | None) -> None:
            nonlocal failed
            failed += event == "failed"
            roles = hub.ledger.roles.values()
            tokens = sum(u.input_tokens + u.output_tokens for u in roles)
            costs = [u.cost_usd for u in roles]
            cost = "unknown" if None in costs else f"${sum(c or 0.0 for c in costs):.4f}"
            spend = f"{hub.ledger.calls} calls, {tokens} tokens, {cost}" if roles else ""
            progress.update(task, advance=1, failed=failed, spend=spend)

        try:
            summary = asyncio.run(
                run_experiment(
                    store,
                    spec,
                    spec_path.parent,
                    hub,
                    resume,
                    concurrency,
                    tick,
                    on_plan=lambda n: progress.update(task, total=n),
                )
            )
        except SpecError as exc:
            for problem in exc.problems:
                err.print(
                    f"[bold red]error:[/] {escape(str(spec_path))}: {escape(problem)}",
                    highlight=False,
                    soft_wrap=True,
                )
            raise typer.Exit(2) from None
        except StoreError as exc:
            fail(str(exc))
        except (ModelError, ValueError) as exc:  # a condition writer or the corpus failed
            fail(str(exc).splitlines()[0])
    out.print(
        f"experiment [magenta]{summary.run_id}[/]: {summary.planned} episodes planned, "
        f"{summary.done} run, {summary.skipped} already done, {summary.failed} failed"
    )
    for e in summary.errors[:5]:
        out.print(f"  [dim]{escape(e)}[/]")
    if summary.failed:
        out.print("  failed episodes are kept with their reason and retried by --resume")
    _print_usage(hub)
    out.print(f"[dim]tables: disputelab report {summary.run_id}[/]")


def _print_usage(hub: object) -> None:
    from disputelab.llm.models import ModelHub

    assert isinstance(hub, ModelHub)
    for role, u in hub.ledger.roles.items():
        cost = "unknown" if u.cost_usd is None else f"${u.cost_usd:.4f}"
        out.print(
            f"model use, {role} ({u.model}): {u.calls} calls, {u.cached} from cache, "
            f"{u.retries} retries, {u.input_tokens} tokens in, {u.output_tokens} out, "
            f"cost {cost}",
            highlight=False,
        )


@app.command()
def report(
    run_ref: Annotated[str, typer.Argument(metavar="RUN", help="A run id, or `last`.")] = "last",
    fmt: Annotated[
        ReportFormat,
        typer.Option("--format", help="md, json, csv or parquet (one row per episode)."),
    ] = ReportFormat.md,
    out_path: Annotated[Path | None, typer.Option("--out", help="Write to this file.")] = None,
    plots: Annotated[
        Path | None, typer.Option("--plots", help="Write experiment plots (PNG) to this folder.")
    ] = None,
) -> None:
    """Print a run's transcript and metrics, or an experiment's tables."""
    from disputelab.report.render import rows_csv, run_json, run_markdown, run_rows

    store = open_store()
    try:
        run_id = store.resolve_run(run_ref)
    except StoreError as exc:
        fail(str(exc))
    kind, config = store.run_info(run_id)
    if plots is not None:
        if kind != "experiment":
            fail(f"--plots needs an experiment run; {run_id} is a single run")
        from disputelab.report.plots import write_plots
        from disputelab.report.tables import spec_conditions

        try:
            written = write_plots(store, run_id, spec_conditions(config), plots)
        except OSError as exc:
            fail(f"cannot write plots to {plots}: {exc.strerror}")
        for p in written:
            err.print(f"wrote {p}")
        if len(written) == 1 and len(spec_conditions(config)) > 1:
            err.print(
                "no consensus-gain plots: they need roundtable episodes with unmediated twins",
                highlight=False,
            )
    if fmt is ReportFormat.parquet:
        import pandas as pd

        if out_path is None:
            fail("--format parquet is binary; give a file with --out")
        try:
            pd.DataFrame(run_rows(store, [run_id])).to_parquet(out_path, index=False)
        except (OSError, ImportError, ValueError) as exc:
            fail(f"cannot write {out_path}: {exc}")
        err.print(f"wrote {out_path}")
        return
    if fmt is ReportFormat.md and kind == "experiment" and config.get("protocol") == "staged":
        from disputelab.report.legal_tables import staged_markdown

        text = staged_markdown(store, run_id, config)
    elif fmt is ReportFormat.md and kind == "experiment":
        from disputelab.report.tables import experiment_markdown, spec_conditions

        text = experiment_markdown(store, run_id, spec_conditions(config))
    elif fmt is ReportFormat.md:
        text = run_markdown(store, run_id)
    elif fmt is ReportFormat.json:
        text = run_json(store, run_id)
    else:
        text = rows_csv(run_rows(store, [run_id]))
    if out_path is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        try:
            out_path.write_text(text, encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write {out_path}: {exc.strerror}")
        err.print(f"wrote {out_path}")


@app.command()
def curate(
    paths: Annotated[
        list[Path], typer.Argument(help="Seed files (.txt, .md, .jsonl) or folders of them.")
    ],
    model: Annotated[
        str, typer.Option(help="Model that recasts seeds: local, openai:MODEL[@URL] or a profile.")
    ],
    out_dir: Annotated[
        Path, typer.Option("--out", help="Folder for accepted scenarios and rejected.jsonl.")
    ] = Path("curated"),
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="Seeds in flight.")] = 4,
    keep_if_unresolved: Annotated[
        int,
        typer.Option(
            min=1, max=3, help="Keep a scenario when this many of 3 unmediated replays fail."
        ),
    ] = 2,
) -> None:
    """Recast seed texts into scenarios with an LLM and keep the ones that reach impasse."""
    from disputelab.curation import Accepted, CurationConfig, Rejected
    from disputelab.curation import curate as run_curation
    from disputelab.llm.base import ModelError
    from disputelab.llm.models import ModelConfigError, ModelHub, load_profiles, parse_model

    if model == "rule":
        fail("curation needs a model: pass --model local, openai:MODEL[@URL] or a profile")
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        fail(f"no such seed file or folder: {', '.join(missing)}")
    try:
        profiles = load_profiles()
        parse_model(model, profiles)
    except ModelConfigError as exc:
        fail(str(exc))
    store = open_store()
    hub = ModelHub(store.root / "cache.sqlite", profiles)

    def said(v: Accepted | Rejected) -> None:
        if isinstance(v, Accepted):
            out.print(
                f"[green]kept[/] {escape(v.seed_id)} -> {escape(str(v.path))} "
                f"(unmediated: {', '.join(v.outcomes)})",
                highlight=False,
            )
        else:
            err.print(
                f"[yellow]rejected[/] {escape(v.seed_id)} ({v.stage}): {escape(v.reason)}",
                highlight=False,
                soft_wrap=True,
            )

    config = CurationConfig(concurrency=concurrency, min_unresolved=keep_if_unresolved)
    try:
        result = asyncio.run(
            run_curation(paths, hub.model(model, "curator"), out_dir, config, on_verdict=said)
        )
    except (ModelConfigError, ModelError, ValueError, OSError) as exc:
        fail(str(exc).splitlines()[0])
    out.print(
        f"{len(result.accepted)} kept, {len(result.rejected)} rejected; "
        f"log of rejections: {escape(str(result.rejected_log))}",
        highlight=False,
    )
    _print_usage(hub)
    unread = [r for r in result.rejected if r.stage == "read"]
    if unread:
        fail(f"{len(unread)} seed source(s) could not be read; see the lines above")
    if not result.accepted and not result.rejected:
        fail("no seeds were read")


@app.command("runs")
def list_runs() -> None:
    """List the runs in the store."""
    import datetime as dt

    store = open_store()
    table = Table("run", "kind", "label", "episodes", "created")
    for r in store.runs():
        when = dt.datetime.fromtimestamp(r["created_at"]).strftime("%Y-%m-%d %H:%M:%S")
        table.add_row(r["run_id"], r["kind"], r["label"], str(r["episodes"]), when)
    out.print(table)


def _fail_scenario(exc: ScenarioError) -> NoReturn:
    for problem in exc.problems:
        err.print(
            f"[bold red]error:[/] {escape(exc.source)}: {escape(problem)}",
            highlight=False,
            soft_wrap=True,
        )
    raise typer.Exit(2)


@conditions_app.command("list")
def conditions_list() -> None:
    """List the conditions and SoCRATES's fifteen probing conditions."""
    from disputelab.scenario.conditions import CONDITIONS, SOCRATES_CONDITIONS

    table = Table("condition", "what it changes")
    for c in CONDITIONS.values():
        table.add_row(c.usage, c.description)
    out.print(table)
    out.print("SoCRATES's 15 conditions: " + ", ".join(SOCRATES_CONDITIONS), highlight=False)
    out.print("Compose with ',': e.g. --condition posture:competing,culture:US-CN")


@scenarios_app.command("import")
def scenarios_import(
    path: Annotated[Path, typer.Argument(help="A case file, or a folder of them.")],
    source: Annotated[str, typer.Option("--from", help="Format: promediate or agentmediation.")],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Write scenario files here (default: the store's library folder)."
        ),
    ] = None,
) -> None:
    """Convert external cases into scenario files, warning about anything assumed."""
    if source not in IMPORTERS:
        fail(f"unknown format {source!r}; available: {', '.join(IMPORTERS)}")
    if not path.exists():
        fail(f"{path}: no such file or folder")
    pattern = "*.jsonl" if source == "agentmediation" else "*.json"
    files = sorted(path.glob(pattern)) if path.is_dir() else [path]
    target = out_dir or state.store_path / "library"
    target.mkdir(parents=True, exist_ok=True)
    bad = 0
    written: dict[str, Path] = {}  # scenario id -> the file it came from, in this import
    for f in files:
        bad += IMPORTERS[source](f, target, written, len(files) > 1)
    if bad:
        raise typer.Exit(2)


def _warn(where: str, text: str) -> None:
    err.print(
        f"[yellow]warning:[/] {escape(where)}: {escape(text)}", highlight=False, soft_wrap=True
    )


def _problem(where: str, text: str) -> None:
    err.print(
        f"[bold red]error:[/] {escape(where)}: {escape(text.splitlines()[0])}",
        highlight=False,
        soft_wrap=True,
    )


def _claim(sid: str, f: Path, written: dict[str, Path]) -> bool:
    """Record that `f` provides scenario `sid`; False (with an error) if another file did."""
    if sid in written:
        _problem(str(f), f"scenario id {sid} was already imported from {written[sid]}; skipped")
        return False
    written[sid] = f
    return True


def _import_promediate(f: Path, target: Path, written: dict[str, Path], many: bool) -> int:
    """One ProMediate case file; returns the number of problems (0 or 1)."""
    from disputelab.scenario.importers.promediate import import_promediate_file
    from disputelab.scenario.io import save_scenario

    try:
        result = import_promediate_file(f)
    except (OSError, ValueError) as exc:  # JSONDecodeError and pydantic errors included
        _problem(str(f), str(exc))
        return 1
    if not _claim(result.scenario.id, f, written):
        return 1
    dest = target / f"{result.scenario.id}.yaml"
    save_scenario(result.scenario, dest)
    out.print(f"[green]imported[/] {escape(str(f))} -> {escape(str(dest))}")
    for w in result.warnings:
        _warn(str(f), w)
    return 0


def _import_agentmediation(f: Path, target: Path, written: dict[str, Path], many: bool) -> int:
    """One JSONL file of AgentMediation case records; returns the number of bad records.
    From a folder of several files, ids carry the file's name (am-FILE-001)."""
    from disputelab.scenario.importers.agentmediation import (
        AgentMediationError,
        id_prefix,
        import_agentmediation,
    )
    from disputelab.scenario.io import save_scenario

    try:
        result = import_agentmediation(f, id_prefix(f, many))
    except AgentMediationError as exc:
        _problem(str(f), str(exc))
        return 1
    clashes = 0
    for s in result.scenarios:
        if _claim(s.id, f, written):
            save_scenario(s, target / f"{s.id}.yaml")
        else:
            clashes += 1
    for line, reason in result.problems:
        _problem(f"{f}:{line}", reason)
    for w in result.warnings:
        _warn(str(f), w)
    out.print(
        f"[green]imported[/] {len(result.scenarios)} case(s) from {escape(str(f))} -> "
        f"{escape(str(target))}" + (f", {len(result.problems)} skipped" if result.problems else ""),
        highlight=False,
    )
    return len(result.problems) + clashes


IMPORTERS = {"promediate": _import_promediate, "agentmediation": _import_agentmediation}


@scenarios_app.command("list")
def scenarios_list() -> None:
    """List the built-in scenarios."""
    table = Table("id", "domain", "parties", "topics", "title")
    for sid, s in builtin_scenarios().items():
        table.add_row(sid, s.domain, str(len(s.parties)), str(len(s.topics)), s.title)
    out.print(table)


@scenarios_app.command("show")
def scenarios_show(
    ref: Annotated[str, typer.Argument(metavar="ID", help="Built-in id or a file.")],
    fmt: Annotated[str, typer.Option("--format", help="yaml or json.")] = "yaml",
) -> None:
    """Print a scenario in full."""
    if fmt not in ("yaml", "json"):
        fail(f"unknown format {fmt!r}; use yaml or json")
    try:
        sc = resolve_scenario(ref, _library())
    except ScenarioError as exc:
        _fail_scenario(exc)
    sys.stdout.write(dump_scenario(sc, fmt))


@scenarios_app.command("validate")
def scenarios_validate(
    files: Annotated[list[Path], typer.Argument(metavar="FILE...", help="Scenario files.")],
) -> None:
    """Check scenario files; one line per problem, exit status 2 if any is invalid."""
    bad = False
    for f in files:
        try:
            sc = load_scenario(f)
        except ScenarioError as exc:
            bad = True
            for problem in exc.problems:
                err.print(
                    f"[bold red]error:[/] {escape(exc.source)}: {escape(problem)}",
                    highlight=False,
                    soft_wrap=True,
                )
            continue
        out.print(
            f"[green]ok[/] {escape(str(f))}: {escape(sc.id)}, {len(sc.parties)} parties, "
            f"{len(sc.topics)} topics"
        )
    if bad:
        raise typer.Exit(2)


def _click_class(name: str) -> type[Exception]:
    """Click's exception class, wherever this typer release takes click from."""
    for cls in typer.BadParameter.__mro__:
        if cls.__name__ == name and issubclass(cls, Exception):
            return cls
    raise RuntimeError(f"typer has no click {name}")


_USAGE_ERROR = _click_class("UsageError")


def main() -> None:
    """Console entry point: every usage error is one line and exit status 2."""
    try:
        code = app(standalone_mode=False)
    except _USAGE_ERROR as exc:
        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
            out.print(ctx.get_help(), end="")  # a bare group shows its help
            raise SystemExit(0) from None
        where = ctx.command_path if ctx is not None else "disputelab"
        message = str(getattr(exc, "format_message", exc.__str__)()).replace("Value error, ", "")
        err.print(
            f"[bold red]error:[/] {message} (see `{where} --help`)",
            highlight=False,
            soft_wrap=True,
        )
        raise SystemExit(2) from None
    except (KeyboardInterrupt, typer.Abort):
        err.print("interrupted; finished turns are in the store")
        raise SystemExit(130) from None
    raise SystemExit(code if isinstance(code, int) else 0)
