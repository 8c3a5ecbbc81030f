"""A stored run as text, in the format asked: the one place that picks the renderer for
a run's kind (a single run, an experiment, a judge validation) and format."""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from disputelab.errors import DisputelabError
from disputelab.registry import UnknownPluginError
from disputelab.store.sqlite import Store

FORMATS = ("md", "markdown", "json", "csv", "html")


class ReportError(DisputelabError, ValueError):
    """A report that cannot be made of this run (an unknown format, a protocol that is
    not installed here)."""


def render(store: Store, run_id: str, fmt: str = "md", store_option: str = "") -> str:
    """The run in `fmt`: md (or markdown), json, csv or html. `store_option` is what a
    suggested command must repeat to reach this store (`--store PATH `)."""
    from disputelab.report.render import rows_csv, run_json, run_markdown, run_rows

    if fmt not in FORMATS:
        raise ReportError(f"format: unknown {fmt!r}; use {', '.join(FORMATS)}")
    kind, config = store.run_info(run_id)
    if kind == "validation" and fmt in ("md", "markdown", "json"):
        return validation_text(store, run_id, fmt == "json")
    if fmt in ("md", "markdown"):
        if kind == "experiment":
            return experiment_tables(store, run_id, config, store_option)
        return run_markdown(store, run_id)
    if fmt == "json":
        return run_json(store, run_id)
    if fmt == "html":
        from disputelab.report.html import run_html

        return run_html(store, run_id)
    return rows_csv(run_rows(store, [run_id]))


def write(store: Store, run_id: str, out: IO[str], fmt: str = "md", store_option: str = "") -> None:
    """The run in `fmt`, as `render` makes it, written to `out`; the html page goes out
    while the run is read, so a big run's page is never held whole in memory."""
    if fmt == "html":
        from disputelab.report.html import write_run_html

        write_run_html(store, run_id, out)
        return
    out.write(render(store, run_id, fmt, store_option))


def experiment_tables(
    store: Store, run_id: str, config: dict[str, Any], store_option: str = ""
) -> str:
    """The experiment's tables in the layout its protocol declares, after a note on an
    unfinished run."""
    from disputelab.report.layout import protocol_tables  # scipy: only when asked

    try:
        text = protocol_tables(store, run_id, config)
    except UnknownPluginError as exc:
        raise ReportError(f"{run_id}: {exc}") from None
    return progress_note(store.run_summary(run_id), store_option) + text


def validation_text(store: Store, run_id: str, as_json: bool) -> str:
    """A judge validation's table, rebuilt from the stored trajectories."""
    from disputelab.experiments.validation import load_validation
    from disputelab.report.validation import validation_json, validation_markdown

    report = load_validation(store, run_id)
    return validation_json(report) if as_json else validation_markdown(report)


def progress_note(run: dict[str, Any], store_option: str = "") -> str:
    """For an unfinished experiment, a first line that says so and how to go on."""
    if run["status"] == "complete":
        return ""
    failed = f", {run['failed']} failed" if run["failed"] else ""
    spec = run["source"] or "SPEC.yaml"
    return (
        f"> **Incomplete: {run['complete']} of {run['planned']} episodes done{failed}.** "
        "Cells count only finished episodes (n); significance markers are left out where "
        f"pairs are missing. Resume with `disputelab {store_option}experiment {spec} "
        "--resume`.\n\n"
    )


def write_plots(store: Store, run_id: str, folder: Path) -> list[Path]:
    """An experiment's plots as PNG files in `folder`; ReportError with the reason when
    there is nothing to draw."""
    from disputelab.protocols.base import DEFAULT_PROTOCOL
    from disputelab.report.plots import write_plots as write
    from disputelab.tables.grids import spec_conditions

    kind, config = store.run_info(run_id)
    if kind != "experiment":
        raise ReportError(f"--plots needs an experiment run; {run_id} is a single run")
    try:
        written = write(store, run_id, spec_conditions(config), folder)
    except OSError as exc:
        raise ReportError(f"cannot write plots to {folder}: {exc.strerror}") from None
    if written:
        return written
    protocol = config.get("protocol", DEFAULT_PROTOCOL)
    complete = len(store.complete_episode_ids(run_id))
    if not complete:
        raise ReportError(f"no plots for {run_id}: none of its episodes is complete")
    # The oracle reads the rule parties' hidden stances on topics: LLM parties have
    # none to read, and a price or a settlement has no topics.
    episodes = f"{complete} episode" + ("" if complete == 1 else "s")
    raise ReportError(
        f"no plots for {run_id}: every plot draws oracle consensus over topics, and none "
        f"of its complete episodes has it ({episodes}, {protocol}); "
        "that takes rule parties and a protocol over topics. The report's tables still "
        "apply"
    )
