"""`disputelab datasets`: the public datasets, fetched with git into a user cache."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from disputelab.api import catalog
from disputelab.cli.common import FormatOption, ListFormat, fail, out, print_rows
from disputelab.errors import DisputelabError

app = typer.Typer(
    help="Public datasets: list them, and fetch them with git into a cache.",
    no_args_is_help=True,
)


@app.command("list")
def datasets_list(
    fmt: FormatOption = ListFormat.table,
) -> None:
    """The datasets disputelab can fetch, and whether each is fetched here."""
    rows = [
        {
            "name": d.name,
            "what": d.description,
            "source": d.url,
            "here": "not fetched" if d.here is None else str(d.here),
        }
        for d in catalog.datasets()
    ]
    print_rows(rows, ("name", "what", "source", "here"), fmt, prose=("what",))


@app.command("get")
def datasets_get(
    name: Annotated[str, typer.Argument(help="agentmediation or promediate.")],
    to: Annotated[
        Path | None,
        typer.Option("--to", help=f"Keep it under this folder (default {catalog.dataset_root()})."),
    ] = None,
    source: Annotated[
        str | None, typer.Option("--from", help="A mirror or local clone to fetch from instead.")
    ] = None,
) -> None:
    """Fetch a dataset's public repository and lay out its case files for the importers."""
    try:
        fetched = catalog.fetch_dataset(name, source, to)
    except DisputelabError as exc:
        fail(str(exc))
    d, where, files = fetched.dataset, fetched.folder, fetched.files
    out.print(f"[green]fetched[/] {name}: {len(files)} case file(s) in {escape(str(where))}")
    out.print(f"  licence: {d.licence}", highlight=False, soft_wrap=True)
    out.print(f"  cite: {d.citation}", highlight=False, soft_wrap=True)
    spec_ref = f"{name}:" if to is None else f"{name}:{files[0] if len(files) == 1 else where}"
    out.print(f'  in a spec: scenarios: ["{escape(spec_ref)}"]', highlight=False, soft_wrap=True)
