"""`disputelab conditions`: the probing conditions (scenario transforms) and the rule
agents' behaviour parameters through which they act."""

from __future__ import annotations

from typing import Annotated

import typer

from disputelab.api import ScenarioError, catalog
from disputelab.api.catalog import BehaviourParameter
from disputelab.cli.common import (
    FormatOption,
    ListFormat,
    fail,
    fail_scenario,
    out,
    print_rows,
    state,
)

app = typer.Typer(help="Probing conditions: scenario transforms.", no_args_is_help=True)


@app.command("list")
def conditions_list(
    fmt: FormatOption = ListFormat.table,
) -> None:
    """List the conditions and SoCRATES's fifteen probing conditions."""
    rows = [{"condition": c.usage, "what it changes": c.description} for c in catalog.conditions()]
    print_rows(rows, ("condition", "what it changes"), fmt, prose=("what it changes",))
    if fmt is not ListFormat.table:
        return
    socrates = catalog.socrates_conditions()
    out.print("SoCRATES's 15 conditions: " + ", ".join(socrates), highlight=False)
    out.print("Compose with ',': e.g. --condition posture:competing,culture:US-CN")


@app.command("parameters")
def conditions_parameters(fmt: FormatOption = ListFormat.table) -> None:
    """List every behaviour parameter of the rule agents: default, neutral value, the
    range `disputelab sensitivity` samples, what it does and its source."""
    rows = [_parameter_row(p) for p in catalog.behaviour_parameters()]
    print_rows(
        rows,
        ("parameter", "default", "neutral", "range sampled", "what it does", "source"),
        fmt,
        prose=("what it does", "source"),
    )


def _parameter_row(p: BehaviourParameter) -> dict[str, str]:
    neutral = "none (a level)" if p.neutral is None else f"{p.neutral:g}"
    return {
        "parameter": p.name,
        "default": f"{p.default:g}",
        "neutral": neutral,
        "range sampled": f"{p.low:g} to {p.high:g}",
        "what it does": p.what,
        "source": p.source,
    }


@app.command("show")
def conditions_show(
    condition: Annotated[str, typer.Argument(help="A condition, e.g. posture:competing.")],
    scenario: Annotated[
        str, typer.Option(help="Scenario on which to show the effective change per party.")
    ] = "tenancy",
) -> None:
    """Which behaviour parameters a condition moves, and what it changes per party."""
    try:
        effect = catalog.condition_effects(condition, scenario, store=state.store_path)
    except ScenarioError as exc:
        fail_scenario(exc)
    except ValueError as exc:
        fail(str(exc).splitlines()[0])
    out.print(f"[bold]{condition}[/] acts on the rule agents through:", highlight=False)
    if effect.parameters:
        rows = [_parameter_row(p) for p in effect.parameters]
        print_rows(rows, ("parameter", "default", "neutral", "source"), ListFormat.table)
    else:
        out.print(
            "  no behaviour parameter: its effect on rule agents is structural "
            "(the scenario's parties, topics or text), so ablation cannot remove it"
        )
    changes = [
        {
            "party": c.party,
            "quantity": c.quantity,
            "general": f"{c.before:.4g}",
            condition: f"{c.after:.4g}",
        }
        for c in effect.changes
    ]
    out.print(f"\nWhat changes on {effect.scenario}, per party (the numbers the policy runs on):")
    if changes:
        print_rows(changes, ("party", "quantity", "general", condition), ListFormat.table)
    else:
        out.print("  nothing in the parties' behaviour profiles")
    if effect.added:
        out.print(f"  parties added: {', '.join(effect.added)}")
