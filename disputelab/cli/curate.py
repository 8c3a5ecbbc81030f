"""`disputelab curate`: recast seed texts into scenarios with an LLM and keep the ones
that reach impasse unmediated."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from disputelab.api import RULE, UserFileError, make_user_dir, path_kind
from disputelab.cli.common import err, fail, open_models, out, print_usage, run_with_models
from disputelab.cli.progress import Ticker, ticker
from disputelab.errors import DisputelabError

if TYPE_CHECKING:
    from disputelab.api.curation import CurationResult, Verdict


def curate(
    paths: Annotated[
        list[Path], typer.Argument(help="Seed files (.txt, .md, .jsonl) or folders of them.")
    ],
    model: Annotated[
        str,
        typer.Option(help="Model for the seeds: local, openai:MODEL, PROVIDER/MODEL, a profile."),
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
    from disputelab.api.curation import curate_async

    if model == RULE:
        fail(
            "curation needs a model: pass --model local, openai:MODEL, PROVIDER/MODEL or a profile"
        )
    missing = [str(p) for p in paths if path_kind(p) == "missing"]
    if missing:
        fail(f"no such seed file or folder: {', '.join(missing)}")
    hub = open_models([model])  # a refused model leaves no --out folder behind
    try:
        make_user_dir(out_dir)
    except UserFileError as exc:
        fail(f"--out {exc.path}: {exc}")

    # Progress (a bar, or a line every few seconds off a terminal, with the tokens the
    # embedded model has generated so far): a seed's recast can take minutes.
    with ticker("curate", hub, transient=True) as progress:
        work = curate_async(
            paths,
            model=model,
            hub=hub,
            out=out_dir,
            concurrency=concurrency,
            keep_if_unresolved=keep_if_unresolved,
            on_verdict=lambda v: _said(v, progress),
        )
        try:
            result = run_with_models(hub, work)
        except (DisputelabError, ValueError, OSError) as exc:
            fail(str(exc).splitlines()[0])
    out.print(
        f"{len(result.accepted)} kept, {len(result.rejected)} rejected; "
        f"log of rejections: {escape(str(result.rejected_log))}",
        highlight=False,
    )
    print_usage(hub)
    _fail_if_unread(result)


def _fail_if_unread(result: CurationResult) -> None:
    """Exit 2 when a seed source could not be read, or when there were no seeds at all."""
    unread = [r for r in result.rejected if r.stage == "read"]
    if unread:
        fail(f"{len(unread)} seed source(s) could not be read; see the lines above")
    if not result.accepted and not result.rejected:
        fail("no seeds were read")


def _said(v: Verdict, progress: Ticker) -> None:
    """One line per verdict: kept on stdout, rejected (with its stage) on stderr."""
    from disputelab.api.curation import Accepted

    progress.advance(failed=not isinstance(v, Accepted))
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
