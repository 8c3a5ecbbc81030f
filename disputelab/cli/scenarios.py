"""`disputelab scenarios`: list, show, validate and import scenarios."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from disputelab.api import ScenarioError, UserFileError, catalog, curation, make_user_dir
from disputelab.api.cases import (
    IMPORT_FORMATS,
    RECORD_NAME,
    ImportedFile,
    NotAScenarioError,
    case_files,
    import_cases,
    read_opinions,
    reads_with_model,
    unread_opinions,
    validate_scenario_file,
)
from disputelab.cli.common import (
    MAX_LINE_CHARS,
    MAX_PROBLEM_LINES,
    FormatOption,
    ListFormat,
    clip,
    fail,
    fail_scenario,
    library,
    open_models,
    out,
    print_problem,
    print_problems,
    print_rows,
    print_usage,
    run_with_models,
    state,
    warn,
)
from disputelab.errors import DisputelabError

app = typer.Typer(help="List, show and validate scenarios.", no_args_is_help=True)


@app.command("list")
def scenarios_list(
    fmt: FormatOption = ListFormat.table,
    by_domain: Annotated[
        bool,
        typer.Option(
            "--by-domain", help="One row per domain: how many multi-issue scenarios, and which."
        ),
    ] = False,
) -> None:
    """List the built-in scenarios."""
    if by_domain:
        rows = catalog.scenarios_by_domain()
        print_rows(rows, ("domain", "multi-issue", "other", "ids"), fmt, prose=("ids",))
        return
    rows = catalog.scenarios()
    print_rows(rows, ("id", "domain", "parties", "topics", "title"), fmt, prose=("domain", "title"))


IMPASSE_COLUMNS = ("id", "domain", "zone", "replays", "unresolved", "verdict")


@app.command("impasse")
def scenarios_impasse(
    ids: Annotated[
        list[str] | None,
        typer.Argument(metavar="[ID...]", help="Built-in ids (default: every multi-issue one)."),
    ] = None,
    disclosure: Annotated[
        str, typer.Option(help="What rule parties state: negotiator (the default) or full.")
    ] = "negotiator",
    fmt: FormatOption = ListFormat.table,
) -> None:
    """Run the SoCRATES impasse filter on built-in scenarios: three unmediated rule-party
    replays each, kept when at least two fail to resolve."""
    try:
        rows = curation.impasse_table(ids or (), disclosure=disclosure)
    except ValueError as exc:
        fail(str(exc).splitlines()[0])
    print_rows(rows, IMPASSE_COLUMNS, fmt, prose=("verdict",))


@app.command("show")
def scenarios_show(
    ref: Annotated[str, typer.Argument(metavar="ID", help="Built-in id or a file.")],
    fmt: Annotated[str, typer.Option("--format", help="yaml or json.")] = "yaml",
    condition: Annotated[
        str,
        typer.Option(help="Show the scenario under this condition (offline construction)."),
    ] = "general",
) -> None:
    """Print a scenario in full, optionally as a condition changes it."""
    try:
        text = catalog.show_scenario(ref, format=fmt, condition=condition, store=state.store_path)
    except ScenarioError as exc:
        fail_scenario(exc)
    except ValueError as exc:
        fail(str(exc).splitlines()[0])
    sys.stdout.write(text)


@app.command("validate")
def scenarios_validate(
    files: Annotated[list[Path], typer.Argument(metavar="FILE...", help="Scenario files.")],
) -> None:
    """Check scenario files; one line per problem, exit status 2 if any is invalid."""
    bad = False
    for f in files:
        try:
            checked = validate_scenario_file(f)
        except NotAScenarioError:
            print_problem(
                str(f),
                "this is an experiment spec, not a scenario; check it with "
                f"`disputelab experiment {f} --dry-run`",
            )
            bad = True
            continue
        except ScenarioError as exc:
            bad = True
            print_problems(exc.source, exc.problems)
            continue
        sc = checked.scenario
        out.print(
            f"[green]ok[/] {escape(clip(str(f), MAX_LINE_CHARS))}: {escape(clip(sc.id))}, "
            f"{len(sc.parties)} parties, {len(sc.topics)} topics",
            soft_wrap=True,
        )
        for line in checked.warnings:
            warn(str(f), line)
    if bad:
        raise typer.Exit(2)


FROM_HELP = "Format: promediate, agentmediation, socrates or sadas."


@app.command("import")
def scenarios_import(
    path: Annotated[Path, typer.Argument(help="A case file, or a folder of them.")],
    source: Annotated[str, typer.Option("--from", help=FROM_HELP)],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Write scenario files here (default: the store's library folder)."
        ),
    ] = None,
    lenient: Annotated[
        bool,
        typer.Option(
            "--lenient",
            help="Import a preference the rules cannot read with an assumed ranking "
            "(warned, and recorded in the scenario's assumptions) instead of failing.",
        ),
    ] = False,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="ProMediate: a model reads the preferences the rules cannot (held to the "
            "case's options); the rules still read everything else.",
        ),
    ] = None,
    overwrite: Annotated[
        bool,
        typer.Option(
            "--overwrite",
            help="Replace scenario files that differ from what this import writes (edited "
            "since, say); without it they are kept and named.",
        ),
    ] = False,
) -> None:
    """Convert external cases into scenario files, warning about anything assumed."""
    if model is not None and source in IMPORT_FORMATS and not reads_with_model(source):
        fail("--model reads ProMediate briefs only; AgentMediation records need no reading")
    try:
        files = case_files(source, path)
    except DisputelabError as exc:
        fail(str(exc))
    readings = _model_readings(files, model) if model else {}
    target = out_dir or library()
    try:
        make_user_dir(target)
    except UserFileError as exc:
        fail(f"--out {exc.path}: {exc}")
    found = import_cases(
        source,
        files,
        target,
        lenient=lenient,
        readings=readings,
        model=model or "",
        overwrite=overwrite,
    )
    bad = sum(_print_import(done, target) for done in found)
    if bad:
        raise typer.Exit(2)


def _model_readings(files: list[Path], model: str) -> Mapping[Path, Mapping[tuple[str, str], Any]]:
    """A model's readings of every opinion the rules could not read, in all `files`, asked
    in one event loop; per file, keyed by (party, topic id)."""
    unread = unread_opinions(files)
    if not unread:
        return {}
    hub = open_models([model])
    readings = run_with_models(hub, read_opinions(unread, hub, model))
    print_usage(hub)
    return readings


def _print_import(done: ImportedFile, target: Path) -> int:
    """What importing one file did; returns the number of problems."""
    f = done.path
    for sid, first in done.clashes:
        print_problem(str(f), f"scenario id {sid} was already imported from {first}; skipped")
    if done.kept:
        names = ", ".join(p.name for p in done.kept[:5]) + (" ..." if len(done.kept) > 5 else "")
        warn(
            str(f),
            f"kept {len(done.kept)} scenario file(s) edited since an import wrote them (or "
            f"not written by one): {names}; --overwrite replaces them",
        )
    if done.stale:
        warn(
            str(f),
            f"kept {len(done.stale)} file(s) under old line-number ids, edited since an "
            f"import wrote them: {', '.join(p.name for p in done.stale[:5])}; "
            f"{RECORD_NAME} maps each old id to the case's id now",
        )
    for where, why in done.problems[:MAX_PROBLEM_LINES]:
        print_problem(where, why)
    if len(done.problems) > MAX_PROBLEM_LINES:
        more = len(done.problems) - MAX_PROBLEM_LINES
        print_problem(str(f), f"and {more:,} more records that could not be read")
    if done.failed:
        return done.faults
    if done.one_case_per_file and done.saved:
        out.print(f"[green]imported[/] {escape(str(f))} -> {escape(str(done.saved[0]))}")
    for w in done.warnings:
        warn(str(f), w)
    if not done.one_case_per_file:
        skipped = f", {len(done.problems)} skipped" if done.problems else ""
        out.print(
            f"[green]imported[/] {len(done.saved)} case(s) from {escape(str(f))} -> "
            f"{escape(str(target))}{skipped}",
            highlight=False,
        )
    return done.faults
