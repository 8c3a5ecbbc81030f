"""`disputelab report`: a run's transcript and metrics, or an experiment's tables in its
protocol's layout; also JSON, CSV, Parquet, a self-contained HTML page, and plots."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from disputelab.cli.common import RUN_HELP, counted, err, fail, open_store, store_option
from disputelab.llm.cache import CACHE_NAME
from disputelab.registry import UnknownPluginError
from disputelab.store.health import is_sqlite_file
from disputelab.store.sqlite import DB_NAME, Store, StoreError


class ReportFormat(StrEnum):
    md = "md"
    markdown = "markdown"  # the same as md
    json = "json"
    csv = "csv"
    parquet = "parquet"
    html = "html"


def report(
    run_ref: Annotated[str, typer.Argument(metavar="RUN", help=RUN_HELP)] = "last",
    fmt: Annotated[
        ReportFormat,
        typer.Option(
            "--format",
            help="md (or markdown), json, csv or parquet (one row per episode), or html "
            "(one self-contained page: tables, plots and an episode viewer).",
        ),
    ] = ReportFormat.md,
    out_path: Annotated[Path | None, typer.Option("--out", help="Write to this file.")] = None,
    plots: Annotated[
        Path | None, typer.Option("--plots", help="Write experiment plots (PNG) to this folder.")
    ] = None,
) -> None:
    """Print a run's transcript and metrics, or an experiment's tables."""
    from disputelab.report.render import rows_csv, run_json, run_markdown, run_rows

    store = open_store(writable=False, create=False)
    if out_path is not None:
        _refuse_to_overwrite_data(out_path, Path(store.root))
    try:
        run_id = store.resolve_run(run_ref)
    except StoreError as exc:
        fail(str(exc))
    kind, config = store.run_info(run_id)
    if plots is not None:
        _plots(store, run_id, kind, config, plots)
    if fmt is ReportFormat.markdown:
        fmt = ReportFormat.md
    if fmt is ReportFormat.parquet:
        _parquet(run_rows(store, [run_id]), out_path)
        return
    if kind == "validation" and fmt in (ReportFormat.md, ReportFormat.json):
        text = _validation(store, run_id, fmt is ReportFormat.json)
    elif fmt is ReportFormat.md and kind == "experiment":
        text = experiment_tables(store, run_id, config)
    elif fmt is ReportFormat.md:
        text = run_markdown(store, run_id)
    elif fmt is ReportFormat.json:
        text = run_json(store, run_id)
    elif fmt is ReportFormat.html:
        from disputelab.report.html import run_html

        text = run_html(store, run_id)
    else:
        text = rows_csv(run_rows(store, [run_id]))
    if out_path is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    try:
        out_path.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {out_path}: {exc.strerror}")
    err.print(f"wrote {out_path}")


def _refuse_to_overwrite_data(out_path: Path, store_root: Path) -> None:
    """A report never overwrites a database (the store, a response cache, anyone's) nor
    one of the store's own files: a slip of `--out` would otherwise lose every run."""
    own = out_path.resolve().parent == store_root.resolve() and out_path.name.startswith(
        (DB_NAME, CACHE_NAME)
    )
    if is_sqlite_file(out_path) or own:
        fail(
            f"--out {out_path} is a database{' of the store' if own else ''}; a report would "
            "overwrite it: write the report to another file"
        )


def experiment_tables(store: Store, run_id: str, config: dict[str, Any]) -> str:
    """The experiment's tables in the layout its protocol declares."""
    try:
        from disputelab.report.layout import protocol_tables  # scipy: only when asked

        text = protocol_tables(store, run_id, config)
    except UnknownPluginError as exc:
        fail(f"{run_id}: {exc}")
    return _progress_note(store.run_summary(run_id)) + text


def _validation(store: Store, run_id: str, as_json: bool) -> str:
    """A judge validation's table, rebuilt from the stored trajectories."""
    from disputelab.experiments.validation import load_validation
    from disputelab.report.validation import validation_json, validation_markdown

    report = load_validation(store, run_id)
    return validation_json(report) if as_json else validation_markdown(report)


def _progress_note(run: dict[str, Any]) -> str:
    """For an unfinished experiment, a first line that says so and how to go on."""
    if run["status"] == "complete":
        return ""
    failed = f", {run['failed']} failed" if run["failed"] else ""
    spec = run["source"] or "SPEC.yaml"
    return (
        f"> **Incomplete: {run['complete']} of {run['planned']} episodes done{failed}.** "
        "Cells count only finished episodes (n); significance markers are left out where "
        f"pairs are missing. Resume with `disputelab {store_option()}experiment {spec} "
        "--resume`.\n\n"
    )


def _plots(store: Store, run_id: str, kind: str, config: dict[str, Any], folder: Path) -> None:
    if kind != "experiment":
        fail(f"--plots needs an experiment run; {run_id} is a single run")
    from disputelab.report.plots import write_plots
    from disputelab.tables.grids import spec_conditions

    try:
        written = write_plots(store, run_id, spec_conditions(config), folder)
    except OSError as exc:
        fail(f"cannot write plots to {folder}: {exc.strerror}")
    if not written:
        from disputelab.protocols.base import DEFAULT_PROTOCOL

        protocol = config.get("protocol", DEFAULT_PROTOCOL)
        complete = len(store.complete_episode_ids(run_id))
        if not complete:
            fail(f"no plots for {run_id}: none of its episodes is complete")
        # The oracle reads the rule parties' hidden stances on topics: LLM parties have
        # none to read, and a price or a settlement has no topics.
        fail(
            f"no plots for {run_id}: every plot draws oracle consensus over topics, and none "
            f"of its complete episodes has it ({counted(complete, 'episode')}, {protocol}); "
            "that takes rule parties and a protocol over topics. The report's tables still "
            "apply"
        )
    for p in written:
        err.print(f"wrote {p}")
    if len(written) == 1 and len(spec_conditions(config)) > 1:
        err.print(
            "no consensus-gain plots: they need episodes with unmediated twins", highlight=False
        )


def _parquet(rows: list[dict[str, Any]], out_path: Path | None) -> None:
    import pandas as pd

    if out_path is None:
        fail("--format parquet is binary; give a file with --out")
    try:
        pd.DataFrame(rows).to_parquet(out_path, index=False)
    except (OSError, ImportError, ValueError) as exc:
        fail(f"cannot write {out_path}: {exc}")
    err.print(f"wrote {out_path}")
