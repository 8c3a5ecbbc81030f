"""`disputelab datasets`: the public datasets, fetched with git into a user cache."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from disputelab.cli.common import FormatOption, ListFormat, fail, out, print_rows
from disputelab.scenario.datasets import (
    DATASETS,
    DatasetError,
    case_files,
    data_root,
    fetch,
    get_dataset,
)

app = typer.Typer(
    help="Public datasets: list them, and fetch them with git into a cache.",
    no_args_is_help=True,
)


@app.command("list")
def datasets_list(
    fmt: FormatOption = ListFormat.table,
) -> None:
    """The datasets disputelab can fetch, and whether each is fetched here."""
    rows = []
    for name, d in DATASETS.items():
        try:
            where = str(case_files(name)[0].parent)
        except DatasetError:
            where = "not fetched"
        rows.append({"name": name, "what": d.description, "source": d.url, "here": where})
    print_rows(rows, ("name", "what", "source", "here"), fmt, prose=("what",))


@app.command("get")
def datasets_get(
    name: Annotated[str, typer.Argument(help="agentmediation or promediate.")],
    to: Annotated[
        Path | None,
        typer.Option("--to", help=f"Keep it under this folder (default {data_root()})."),
    ] = None,
    source: Annotated[
        str | None, typer.Option("--from", help="A mirror or local clone to fetch from instead.")
    ] = None,
) -> None:
    """Fetch a dataset's public repository and lay out its case files for the importers."""
    try:
        d = get_dataset(name)
        where = fetch(name, source, to)
        files = case_files(name, to)
    except DatasetError as exc:
        fail(str(exc))
    out.print(f"[green]fetched[/] {name}: {len(files)} case file(s) in {escape(str(where))}")
    out.print(f"  licence: {d.licence}", highlight=False, soft_wrap=True)
    out.print(f"  cite: {d.citation}", highlight=False, soft_wrap=True)
    spec_ref = f"{name}:" if to is None else f"{name}:{files[0] if len(files) == 1 else where}"
    out.print(f'  in a spec: scenarios: ["{escape(spec_ref)}"]', highlight=False, soft_wrap=True)
