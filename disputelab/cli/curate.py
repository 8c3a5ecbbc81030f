"""`disputelab curate`: recast seed texts into scenarios with an LLM and keep the ones
that reach impasse unmediated."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from disputelab.cli.common import err, fail, open_models, out, print_usage, run_with_models
from disputelab.scenario.inputs import UserFileError, make_user_dir, path_kind

if TYPE_CHECKING:
    from disputelab.curation import Accepted, Rejected


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
    from disputelab.curation import CurationConfig
    from disputelab.curation import curate as run_curation
    from disputelab.llm.base import ModelError
    from disputelab.llm.models import ModelConfigError

    if model == "rule":
        fail("curation needs a model: pass --model local, openai:MODEL[@URL] or a profile")
    missing = [str(p) for p in paths if path_kind(p) == "missing"]
    if missing:
        fail(f"no such seed file or folder: {', '.join(missing)}")
    hub = open_models([model])  # a refused model leaves no --out folder behind
    try:
        make_user_dir(out_dir)
    except UserFileError as exc:
        fail(f"--out {exc.path}: {exc}")

    config = CurationConfig(concurrency=concurrency, min_unresolved=keep_if_unresolved)
    try:
        result = run_with_models(
            hub, run_curation(paths, hub.model(model, "curator"), out_dir, config, on_verdict=_said)
        )
    except (ModelConfigError, ModelError, ValueError, OSError) as exc:
        fail(str(exc).splitlines()[0])
    out.print(
        f"{len(result.accepted)} kept, {len(result.rejected)} rejected; "
        f"log of rejections: {escape(str(result.rejected_log))}",
        highlight=False,
    )
    print_usage(hub)
    unread = [r for r in result.rejected if r.stage == "read"]
    if unread:
        fail(f"{len(unread)} seed source(s) could not be read; see the lines above")
    if not result.accepted and not result.rejected:
        fail("no seeds were read")


def _said(v: Accepted | Rejected) -> None:
    """One line per verdict: kept on stdout, rejected (with its stage) on stderr."""
    from disputelab.curation import Accepted

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
