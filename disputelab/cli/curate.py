"""`disputelab curate`: recast seed texts into scenarios, with an LLM or offline by rules,
and keep the ones that reach impasse unmediated."""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.markup import escape

from disputelab.api import RULE, UserFileError, make_user_dir, path_kind, run_loop
from disputelab.cli.common import err, fail, open_models, out, print_usage, run_with_models
from disputelab.cli.progress import Ticker, ticker
from disputelab.errors import DisputelabError

if TYPE_CHECKING:
    from disputelab.api import ModelHub
    from disputelab.api.curation import CurationResult, Verdict


def curate(
    paths: Annotated[
        list[Path], typer.Argument(help="Seed files (.txt, .md, .jsonl) or folders of them.")
    ],
    model: Annotated[
        str | None,
        typer.Option(
            help="Model for --recast model: local, openai:MODEL, PROVIDER/MODEL, a profile."
        ),
    ] = None,
    recast: Annotated[
        Literal["model", "rules"],
        typer.Option(
            help="Who writes each scenario: the --model, or stated rules and disputelab's "
            "template library, offline and with no model (rules)."
        ),
    ] = "model",
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
    """Recast seed texts into scenarios and keep the ones that reach impasse.

    With an LLM, or offline with --recast rules; near-duplicate seeds are set aside."""
    from disputelab.api.curation import curate_async

    _check_arguments(paths, recast, model)
    # A refused model leaves no --out folder behind.
    hub = open_models([model]) if model is not None else None
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
            recast=recast,
            out=out_dir,
            concurrency=concurrency,
            keep_if_unresolved=keep_if_unresolved,
            on_verdict=lambda v: _said(v, progress),
        )
        try:
            result = _run(hub, work)
        except (DisputelabError, ValueError, OSError) as exc:
            fail(str(exc).splitlines()[0])
    _summary(result, hub)


def _summary(result: CurationResult, hub: ModelHub | None) -> None:
    """The closing lines: the counts, the model use if a model was asked; exit 2 when a
    seed source could not be read."""
    out.print(
        f"{len(result.accepted)} kept, {len(result.rejected)} rejected; "
        f"log of rejections: {escape(str(result.rejected_log))}",
        highlight=False,
    )
    if hub is not None:
        print_usage(hub)
    _fail_if_unread(result)


def _check_arguments(paths: list[Path], recast: str, model: str | None) -> None:
    """Exit 2 for a missing seed path, or a --model that does not fit --recast."""
    missing = [str(p) for p in paths if path_kind(p) == "missing"]
    if missing:
        fail(f"no such seed file or folder: {', '.join(missing)}")
    if recast == "rules":
        if model is not None:
            fail("--recast rules uses no model; drop --model, or use --recast model")
        return
    if model is None or model == RULE:
        fail(
            "--recast model needs a model: pass --model local, openai:MODEL, PROVIDER/MODEL "
            "or a profile, or use --recast rules to curate offline with no model"
        )


def _run(hub: ModelHub | None, work: Coroutine[Any, Any, CurationResult]) -> CurationResult:
    if hub is not None:
        return run_with_models(hub, work)

    async def just() -> CurationResult:
        return await work

    return run_loop(just)


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
