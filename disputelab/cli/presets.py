"""`disputelab presets`: each paper's setting in one word, and where each value comes from."""

from __future__ import annotations

from typing import Annotated

import typer

from disputelab.cli.common import FormatOption, ListFormat, fail, out, print_rows

app = typer.Typer(help="Presets: a paper's exact setting in one word.", no_args_is_help=True)


@app.command("list")
def presets_list(fmt: FormatOption = ListFormat.table) -> None:
    """List the presets: the paper and the protocol each plays."""
    from disputelab.protocols.presets import PRESETS

    rows = [
        {"preset": name, "paper": p.paper, "protocol": p.protocol, "settings": str(len(p.settings))}
        for name, p in PRESETS.items()
    ]
    print_rows(rows, ("preset", "paper", "protocol", "settings"), fmt)


@app.command("show")
def presets_show(
    name: Annotated[str, typer.Argument(help="A preset: see `disputelab presets list`.")],
) -> None:
    """Every setting of a preset, its value, its source in the paper, and what
    disputelab does without it (markdown)."""
    from disputelab.protocols.presets import PRESETS, get_preset, preset_markdown

    if name not in PRESETS:
        fail(f"unknown preset {name!r}; available: {', '.join(PRESETS.names())}")
    out.print(preset_markdown(get_preset(name)), markup=False, highlight=False, soft_wrap=True)
