"""`disputelab protocols`: the registered protocols, their parameters, seats and the agent
kinds that can fill each seat."""

from __future__ import annotations

import typer
from rich.markup import escape
from rich.table import Table

from disputelab.cli.common import out
from disputelab.protocols.base import PROTOCOLS, DisputeProtocol

app = typer.Typer(
    help="Protocols: who speaks when, and when an episode ends.", no_args_is_help=True
)


@app.command("list")
def protocols_list() -> None:
    """List every protocol with its parameters, seats, twins and evaluators."""
    table = Table(
        "protocol", "parameters", "seats (agent kinds)", "twin", "evaluators", "what it is"
    )
    for name, p in PROTOCOLS.items():
        table.add_row(
            name,
            escape(_params(p)),
            escape(_seats(p)),
            "yes" if p.plays_twin else "no",
            ", ".join(p.evaluators) or "-",
            p.summary,
        )
    out.print(table)


def _params(p: DisputeProtocol) -> str:
    fields = p.Params.model_fields
    if not fields:
        return "-"
    return "\n".join(
        f"{f}={info.default} ({info.description or info.annotation})" for f, info in fields.items()
    )


def _seats(p: DisputeProtocol) -> str:
    lines = []
    for s in p.seats:
        optional = ", optional" if s.optional else ""
        lines.append(f"{s.role} [{s.interface}{optional}]: {', '.join(s.kinds())}")
    return "\n".join(lines)
