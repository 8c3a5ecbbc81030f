"""`disputelab conditions`: the probing conditions (scenario transforms)."""

from __future__ import annotations

import typer

from disputelab.cli.common import FormatOption, ListFormat, out, print_rows

app = typer.Typer(help="Probing conditions: scenario transforms.", no_args_is_help=True)


@app.command("list")
def conditions_list(
    fmt: FormatOption = ListFormat.table,
) -> None:
    """List the conditions and SoCRATES's fifteen probing conditions."""
    from disputelab.scenario.conditions import CONDITIONS, SOCRATES_CONDITIONS

    rows = [{"condition": c.usage, "what it changes": c.description} for c in CONDITIONS.values()]
    print_rows(rows, ("condition", "what it changes"), fmt, prose=("what it changes",))
    if fmt is not ListFormat.table:
        return
    out.print("SoCRATES's 15 conditions: " + ", ".join(SOCRATES_CONDITIONS), highlight=False)
    out.print("Compose with ',': e.g. --condition posture:competing,culture:US-CN")
