"""`disputelab presets`: each paper's setting in one word, and where each value comes from."""

from __future__ import annotations

from typing import Annotated

import typer

from disputelab.api import catalog
from disputelab.cli.common import FormatOption, ListFormat, fail, out, print_rows
from disputelab.errors import DisputelabError

app = typer.Typer(help="Presets: a paper's exact setting in one word.", no_args_is_help=True)


@app.command("list")
def presets_list(fmt: FormatOption = ListFormat.table) -> None:
    """List the presets: the paper and the protocol each plays."""
    rows = [
        {
            "preset": p.name,
            "paper": p.paper,
            "protocol": p.protocol,
            "settings": str(len(p.settings)),
        }
        for p in catalog.presets()
    ]
    print_rows(rows, ("preset", "paper", "protocol", "settings"), fmt)


@app.command("show")
def presets_show(
    name: Annotated[str, typer.Argument(help="A preset: see `disputelab presets list`.")],
) -> None:
    """Every setting of a preset, its value, its source in the paper, and what
    disputelab does without it (markdown)."""
    try:
        text = catalog.describe_preset(name)
    except DisputelabError as exc:
        fail(str(exc))
    out.print(text, markup=False, highlight=False, soft_wrap=True)
