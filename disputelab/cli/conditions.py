"""`disputelab conditions`: the probing conditions (scenario transforms)."""

from __future__ import annotations

import typer
from rich.table import Table

from disputelab.cli.common import out

app = typer.Typer(help="Probing conditions: scenario transforms.", no_args_is_help=True)


@app.command("list")
def conditions_list() -> None:
    """List the conditions and SoCRATES's fifteen probing conditions."""
    from disputelab.scenario.conditions import CONDITIONS, SOCRATES_CONDITIONS

    table = Table("condition", "what it changes")
    for c in CONDITIONS.values():
        table.add_row(c.usage, c.description)
    out.print(table)
    out.print("SoCRATES's 15 conditions: " + ", ".join(SOCRATES_CONDITIONS), highlight=False)
    out.print("Compose with ',': e.g. --condition posture:competing,culture:US-CN")
