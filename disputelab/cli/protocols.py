"""`disputelab protocols`: the registered protocols, their parameters, seats and the agent
kinds that can fill each seat. `show NAME` lists one protocol's parameters in full: the
keys `run --param KEY=VALUE` takes."""

from __future__ import annotations

import dataclasses
import json
import sys
from enum import StrEnum
from typing import Annotated

import typer
from rich.markup import escape

from disputelab.api import catalog
from disputelab.api.catalog import ProtocolInfo, SeatInfo
from disputelab.cli.common import ListFormat, fail, out, print_rows
from disputelab.errors import DisputelabError

app = typer.Typer(
    help="Protocols: who speaks when, and when an episode ends.", no_args_is_help=True
)


@app.command("list")
def protocols_list() -> None:
    """List every protocol with its parameters, seats, twins and evaluators."""
    for p in catalog.protocols():
        out.print(f"[bold]{escape(p.name)}[/]: {escape(p.summary)}", highlight=False)
        out.print(f"  parameters: {escape(_params(p))}", highlight=False)
        for line in _seats(p.seats):
            out.print(f"  seat {escape(line)}", highlight=False)
        twin = "yes" if p.plays_twin else "no"
        evaluators = ", ".join(p.evaluators) or "-"
        out.print(f"  unmediated twin: {twin}; evaluators: {evaluators}", highlight=False)


def _params(p: ProtocolInfo) -> str:
    if not p.parameters:
        return "none"
    return "; ".join(f"{f.name}={f.default} ({f.help})" for f in p.parameters)


def _seats(seats: list[SeatInfo]) -> list[str]:
    lines = []
    for s in seats:
        optional = ", optional" if s.optional else ""
        lines.append(f"{s.role} [{s.interface}{optional}]: {', '.join(s.kinds)}")
    return lines


class ShowFormat(StrEnum):
    text = "text"
    json = "json"


@app.command("show")
def protocols_show(
    name: Annotated[str, typer.Argument(help="A protocol: see `disputelab protocols list`.")],
    fmt: Annotated[ShowFormat, typer.Option("--format", help="text or json.")] = (ShowFormat.text),
) -> None:
    """One protocol in full: its parameters (the keys of `run --param KEY=VALUE`) with
    their types, defaults and help, its turn budget (`run --budget N`), its seats and the
    agent kinds each takes, its evaluators and the presets that play it."""
    try:
        p = catalog.describe_protocol(name)
    except DisputelabError as exc:
        fail(str(exc))
    if fmt is ShowFormat.json:
        # Defaults that JSON has no type for (a tuple, an enum) are written as text.
        sys.stdout.write(json.dumps(dataclasses.asdict(p), indent=2, default=str) + "\n")
        return
    out.print(f"[bold]{escape(p.name)}[/]: {escape(p.summary)}", highlight=False, soft_wrap=True)
    budget = (
        f"{p.turn_budget} ({p.turn_budget_unit}); `run --budget N` sets it"
        if p.turn_budget
        else "none"
    )
    out.print(f"turn budget: {escape(budget)}", highlight=False)
    _print_parameters(p)
    out.print("seats (`run --mediator KIND`, `--parties KIND`):", highlight=False)
    for line in _seats(p.seats):
        out.print(f"  {escape(line)}", highlight=False)
    twin = "yes" if p.plays_twin else "no"
    out.print(f"unmediated twin: {twin}", highlight=False)
    out.print(f"evaluators: {', '.join(p.evaluators) or '-'}", highlight=False)
    if p.judged_evaluators:
        judged = ", ".join(p.judged_evaluators)
        out.print(f"judged evaluators (with a judge model): {judged}", highlight=False)
    out.print(f"presets: {', '.join(p.presets) or '-'}", highlight=False)


def _print_parameters(p: ProtocolInfo) -> None:
    """The parameters as a table, one row each (`--param KEY=VALUE`)."""
    if not p.parameters:
        out.print("parameters: none", highlight=False)
        return
    out.print("parameters (`run --param KEY=VALUE`):", highlight=False)
    rows = [
        {"name": f.name, "type": f.type, "default": _default(f.default), "help": f.help}
        for f in p.parameters
    ]
    print_rows(rows, ("name", "type", "default", "help"), ListFormat.table, prose=("help",))


def _default(value: object) -> str:
    """A default as it would be given on the command line (`true`, not `True`)."""
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "{}"
    return str(value)
