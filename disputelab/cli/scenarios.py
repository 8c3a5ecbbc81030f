"""`disputelab scenarios`: list, show, validate and import scenarios."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

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
    warn,
)
from disputelab.scenario.checks import unsettlable
from disputelab.scenario.import_record import RECORD_NAME, ImportRecord
from disputelab.scenario.importers import (
    FORMATS,
    ONE_CASE_PER_FILE,
    CaseFile,
    case_files,
    read_cases,
)
from disputelab.scenario.inputs import UserFileError, make_user_dir, path_kind, read_user_file
from disputelab.scenario.io import (
    ScenarioError,
    dump_scenario,
    load_scenario,
    load_yaml,
)
from disputelab.scenario.library import builtin_scenarios, resolve_scenario

app = typer.Typer(help="List, show and validate scenarios.", no_args_is_help=True)


@app.command("list")
def scenarios_list(
    fmt: FormatOption = ListFormat.table,
) -> None:
    """List the built-in scenarios."""
    rows = [
        {
            "id": sid,
            "domain": s.domain,
            "parties": len(s.parties),
            "topics": len(s.topics),
            "title": s.title,
        }
        for sid, s in builtin_scenarios().items()
    ]
    print_rows(rows, ("id", "domain", "parties", "topics", "title"), fmt, prose=("domain", "title"))


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
    from disputelab.scenario.conditions import apply_condition

    if fmt not in ("yaml", "json"):
        fail(f"unknown format {fmt!r}; use yaml or json")
    try:
        sc = apply_condition(resolve_scenario(ref, library()), condition)
    except ScenarioError as exc:
        fail_scenario(exc)
    except ValueError as exc:
        fail(str(exc).splitlines()[0])
    sys.stdout.write(dump_scenario(sc, fmt))


@app.command("validate")
def scenarios_validate(
    files: Annotated[list[Path], typer.Argument(metavar="FILE...", help="Scenario files.")],
) -> None:
    """Check scenario files; one line per problem, exit status 2 if any is invalid."""
    bad = False
    for f in files:
        if _looks_like_a_spec(f):
            print_problem(
                str(f),
                "this is an experiment spec, not a scenario; check it with "
                f"`disputelab experiment {f} --dry-run`",
            )
            bad = True
            continue
        try:
            sc = load_scenario(f)
        except ScenarioError as exc:
            bad = True
            print_problems(exc.source, exc.problems)
            continue
        out.print(
            f"[green]ok[/] {escape(clip(str(f), MAX_LINE_CHARS))}: {escape(clip(sc.id))}, "
            f"{len(sc.parties)} parties, {len(sc.topics)} topics",
            soft_wrap=True,
        )
        for line in unsettlable(sc):
            warn(str(f), line)
    if bad:
        raise typer.Exit(2)


def _looks_like_a_spec(path: Path) -> bool:
    """A YAML mapping with a spec's `scenarios` list and no scenario `parties`."""
    import yaml

    try:
        data = load_yaml(read_user_file(path))
    except (ValueError, yaml.YAMLError):
        return False  # load_scenario will say what is wrong
    return isinstance(data, dict) and "scenarios" in data and "parties" not in data


@app.command("import")
def scenarios_import(
    path: Annotated[Path, typer.Argument(help="A case file, or a folder of them.")],
    source: Annotated[str, typer.Option("--from", help="Format: promediate or agentmediation.")],
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
    if source not in FORMATS:
        fail(f"unknown format {source!r}; available: {', '.join(FORMATS)}")
    if model is not None and source != "promediate":
        fail("--model reads ProMediate briefs only; AgentMediation records need no reading")
    if path_kind(path) == "missing":
        fail(f"{path}: no such file or folder")
    files = case_files(source, path)
    if not files:
        fail(f"{path}: no {source} case files in this folder")
    readings = _model_readings(files, model) if model else {}
    target = out_dir or library()
    try:
        make_user_dir(target)
    except UserFileError as exc:
        fail(f"--out {exc.path}: {exc}")
    bad = 0
    written: dict[str, Path] = {}  # scenario id -> the file it came from, in this import
    for f in files:
        found = read_cases(source, f, len(files) > 1, lenient, readings.get(f), model or "")
        bad += _import_file(source, f, found, target, written, overwrite)
    if bad:
        raise typer.Exit(2)


def _model_readings(files: list[Path], model: str) -> dict[Path, dict[tuple[str, str], Any]]:
    """A model's readings of every opinion the rules could not read, in all `files`, asked
    in one event loop; per file, keyed by (party, topic id)."""
    from disputelab.authoring.preference_reader import read_all

    unread = {f: read_cases("promediate", f, lenient=True).unread for f in files}
    items = [(f, u) for f, us in unread.items() for u in us]
    if not items:
        return {}
    hub = open_models([model])
    reader = hub.model(model, "reader")
    results = run_with_models(hub, read_all(reader, [u for _, u in items]))
    print_usage(hub)
    out: dict[Path, dict[tuple[str, str], Any]] = {}
    for (f, _), r in zip(items, results, strict=True):
        out.setdefault(f, {})[(r.party, r.topic_id)] = r
    return out


def _retire_positional(f: Path, found: CaseFile, record: ImportRecord) -> None:
    """Map the line-number ids an earlier import used to the ids now, removing the old
    files an import wrote; name those kept because someone edited them since."""
    stale = [p for o, (n, t) in found.positional.items() if (p := record.retire(o, n, t))]
    if stale:
        warn(
            str(f),
            f"kept {len(stale)} file(s) under old line-number ids, edited since an import "
            f"wrote them: {', '.join(p.name for p in stale[:5])}; {RECORD_NAME} maps each "
            "old id to the case's id now",
        )


def _import_file(
    source: str,
    f: Path,
    found: CaseFile,
    target: Path,
    written: dict[str, Path],
    overwrite: bool = False,
) -> int:
    """Save what `found` read from `f` into `target`; returns the number of problems."""
    saved: list[Path] = []
    clashes = 0
    kept: list[Path] = []
    record = ImportRecord(target)
    for s in found.scenarios:
        if s.id in written:
            print_problem(
                str(f), f"scenario id {s.id} was already imported from {written[s.id]}; skipped"
            )
            clashes += 1
            continue
        written[s.id] = f
        path = target / f"{s.id}.yaml"
        text = dump_scenario(s, "yaml")
        if not overwrite and not record.may_write(path, text):
            kept.append(path)  # edited since it was imported, or not an import's: keep it
            continue
        path.write_text(text, encoding="utf-8")
        record.wrote(path, text)
        saved.append(path)
    _retire_positional(f, found, record)
    if saved or found.positional:
        record.save()
    if kept:
        names = ", ".join(p.name for p in kept[:5]) + (" ..." if len(kept) > 5 else "")
        warn(
            str(f),
            f"kept {len(kept)} scenario file(s) edited since an import wrote them (or not "
            f"written by one): {names}; --overwrite replaces them",
        )
    for where, why in found.problems[:MAX_PROBLEM_LINES]:
        print_problem(where, why)
    if len(found.problems) > MAX_PROBLEM_LINES:
        more = len(found.problems) - MAX_PROBLEM_LINES
        print_problem(str(f), f"and {more:,} more records that could not be read")
    if found.failed:
        return 1
    if source in ONE_CASE_PER_FILE and saved:
        out.print(f"[green]imported[/] {escape(str(f))} -> {escape(str(saved[0]))}")
    for w in found.warnings:
        warn(str(f), w)
    if source not in ONE_CASE_PER_FILE:
        skipped = f", {len(found.problems)} skipped" if found.problems else ""
        out.print(
            f"[green]imported[/] {len(saved)} case(s) from {escape(str(f))} -> "
            f"{escape(str(target))}{skipped}",
            highlight=False,
        )
    return len(found.problems) + clashes
