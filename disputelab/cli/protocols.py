"""`disputelab protocols`: the registered protocols, their parameters, seats and the agent
kinds that can fill each seat."""

from __future__ import annotations

import typer
from rich.markup import escape

from disputelab.cli.common import out
from disputelab.protocols.base import PROTOCOLS, DisputeProtocol

app = typer.Typer(
    help="Protocols: who speaks when, and when an episode ends.", no_args_is_help=True
)


@app.command("list")
def protocols_list() -> None:
    """List every protocol with its parameters, seats, twins and evaluators."""
    for name, p in PROTOCOLS.items():
        out.print(f"[bold]{escape(name)}[/]: {escape(p.summary)}", highlight=False)
        out.print(f"  parameters: {escape(_params(p))}", highlight=False)
        for line in _seats(p):
            out.print(f"  seat {escape(line)}", highlight=False)
        twin = "yes" if p.plays_twin else "no"
        evaluators = ", ".join(p.evaluators) or "-"
        out.print(f"  unmediated twin: {twin}; evaluators: {evaluators}", highlight=False)


def _params(p: DisputeProtocol) -> str:
    fields = p.Params.model_fields
    if not fields:
        return "none"
    return "; ".join(
        f"{f}={info.get_default(call_default_factory=True)} "
        f"({(info.description or '').rstrip('.')})"
        for f, info in fields.items()
    )


def _seats(p: DisputeProtocol) -> list[str]:
    lines = []
    for s in p.seats:
        optional = ", optional" if s.optional else ""
        lines.append(f"{s.role} [{s.interface}{optional}]: {', '.join(s.kinds())}")
    return lines
