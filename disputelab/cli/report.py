"""`disputelab report`: a run's transcript and metrics, or an experiment's tables in its
protocol's layout; also JSON, CSV, Parquet, a self-contained HTML page, and plots."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from disputelab import api
from disputelab.api import Store, StoreError
from disputelab.api.stores import overwrites_data
from disputelab.cli.common import RUN_HELP, err, fail, open_store, write_out, write_out_data
from disputelab.errors import DisputelabError


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
            help="md (or markdown), json, csv or parquet (one row per episode; with --out FOLDER, "
            "a folder or a name without an extension, tidy tables of episodes, turns, "
            "actions, answers and labels), or html "
            "(one self-contained page: tables, plots and an episode viewer).",
        ),
    ] = ReportFormat.md,
    out_path: Annotated[Path | None, typer.Option("--out", help="Write to this file.")] = None,
    plots: Annotated[
        Path | None, typer.Option("--plots", help="Write experiment plots (PNG) to this folder.")
    ] = None,
) -> None:
    """Print a run's transcript and metrics, or an experiment's tables."""
    store = open_store(writable=False, create=False)
    if out_path is not None:
        _refuse_to_overwrite_data(out_path, Path(store.root))
    try:
        run_id = store.resolve_run(run_ref)
    except StoreError as exc:
        fail(str(exc))
    if plots is not None:
        _plots(store, run_id, plots)
    if fmt is ReportFormat.parquet:
        _parquet(store, run_id, out_path)
        return
    if out_path is not None:
        _to_file(store, run_id, fmt, out_path)
        return
    try:
        text = api.report(run_id, format=fmt.value, store=store)
    except DisputelabError as exc:
        fail(str(exc))
    write_out(text, None)


def _to_file(store: Store, run_id: str, fmt: ReportFormat, out_path: Path) -> None:
    """The report straight into `--out`: the html page is written as the run is read."""
    try:
        api.write_report(run_id, out_path, format=fmt.value, store=store)
    except api.WriteFailed as exc:
        fail(f"--out {out_path}: cannot write it ({exc.reason}); the file there is unchanged")
    except DisputelabError as exc:
        fail(str(exc))
    err.print(f"wrote {out_path}")


def _refuse_to_overwrite_data(out_path: Path, store_root: Path) -> None:
    """A report never overwrites a database (the store, a response cache, anyone's) nor
    one of the store's own files: a slip of `--out` would otherwise lose every run."""
    found = overwrites_data(out_path, store_root)
    if found is not None:
        own = " of the store" if found == "store" else ""
        fail(
            f"--out {out_path} is a database{own}; a report would overwrite it: write the "
            "report to another file"
        )


def _plots(store: Store, run_id: str, folder: Path) -> None:
    try:
        written = api.write_plots(run_id, folder, store=store)
    except DisputelabError as exc:
        fail(str(exc))
    for p in written:
        err.print(f"wrote {p}")
    conditions = store.run_info(run_id)[1].get("conditions") or ["general"]
    if len(written) == 1 and len(conditions) > 1:
        err.print(
            "no consensus-gain plots: they need episodes with unmediated twins", highlight=False
        )


def _parquet(store: Store, run_id: str, out_path: Path | None) -> None:
    if out_path is None:
        fail("--format parquet is binary; give a file, or a folder for tidy tables, with --out")
    if out_path.is_dir() or not out_path.suffix:
        _tidy_tables(store, run_id, out_path)
        return
    try:
        data = api.episode_frame(store, run_id).to_parquet(index=False)
    except (ImportError, ValueError) as exc:
        fail(f"--out {out_path}: cannot write it ({exc})")
    write_out_data(data, out_path)


def _tidy_tables(store: Store, run_id: str, folder: Path) -> None:
    """`--out FOLDER` (a folder, or a name without an extension): the run's tidy
    tables, one Parquet file each."""
    from disputelab.api.export import write_tables

    try:
        written = write_tables(run_id, folder, store=store)
    except api.WriteFailed as exc:
        fail(f"--out {folder}: cannot write {exc.path} ({exc.reason})")
    except OSError as exc:
        fail(f"--out {folder}: cannot make the folder ({exc.strerror or exc})")
    for path in written:
        err.print(f"wrote {path}", highlight=False)
