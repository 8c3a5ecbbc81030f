"""`disputelab conditions`: the probing conditions (scenario transforms) and the rule
agents' behaviour parameters through which they act."""

from __future__ import annotations

from typing import Annotated

import typer

from disputelab.cli.common import (
    FormatOption,
    ListFormat,
    fail,
    fail_scenario,
    library,
    out,
    print_rows,
)

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


@app.command("parameters")
def conditions_parameters(fmt: FormatOption = ListFormat.table) -> None:
    """List every behaviour parameter of the rule agents: default, neutral value, the
    range `disputelab sensitivity` samples, what it does and its source."""
    from disputelab.scenario.behaviour import PARAMETERS

    rows = [_parameter_row(name) for name in PARAMETERS]
    print_rows(
        rows,
        ("parameter", "default", "neutral", "range sampled", "what it does", "source"),
        fmt,
        prose=("what it does", "source"),
    )


def _parameter_row(name: str) -> dict[str, str]:
    from disputelab.scenario.behaviour import PARAMETERS

    p = PARAMETERS[name]
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
    from disputelab.agents.utility import rule_profile
    from disputelab.scenario.conditions import apply_condition, condition_parameters
    from disputelab.scenario.io import ScenarioError
    from disputelab.scenario.library import resolve_scenario

    try:
        moved = condition_parameters(condition)
        base = resolve_scenario(scenario, library())
        after = apply_condition(base, condition)
    except ScenarioError as exc:
        fail_scenario(exc)
    except ValueError as exc:
        fail(str(exc).splitlines()[0])
    out.print(f"[bold]{condition}[/] acts on the rule agents through:", highlight=False)
    if moved:
        rows = [_parameter_row(name) for name in moved]
        print_rows(rows, ("parameter", "default", "neutral", "source"), ListFormat.table)
    else:
        out.print(
            "  no behaviour parameter: its effect on rule agents is structural "
            "(the scenario's parties, topics or text), so ablation cannot remove it"
        )
    changes = []
    for p, q in zip(base.parties, after.parties, strict=False):
        before, now = rule_profile(p), rule_profile(q)
        changes += [
            {"party": p.id, "quantity": k, "general": f"{v:.4g}", condition: f"{now[k]:.4g}"}
            for k, v in before.items()
            if abs(now[k] - v) > 1e-12
        ]
    added = [q.id for q in after.parties[len(base.parties) :]]
    out.print(f"\nWhat changes on {base.id}, per party (the numbers the policy runs on):")
    if changes:
        print_rows(changes, ("party", "quantity", "general", condition), ListFormat.table)
    else:
        out.print("  nothing in the parties' behaviour profiles")
    if added:
        out.print(f"  parties added: {', '.join(added)}")
