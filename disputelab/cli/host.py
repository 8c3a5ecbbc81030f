"""`disputelab host`: serve a table in the browser, one invite link per seat a person
takes, agents in every other seat; the play is `disputelab.api.host`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from disputelab.api.host import Table, host, new_table
from disputelab.cli.common import fail, open_store, out
from disputelab.cli.play import AgentModelOption, seated_options
from disputelab.cli.run import (
    BehaviourOption,
    BudgetOption,
    ConditionOption,
    MediatorOption,
    ParamOption,
    PartiesOption,
    PresetOption,
    ProtocolOption,
    SeedOption,
)
from disputelab.errors import DisputelabError


def host_command(
    scenario: Annotated[str, typer.Argument(help="Built-in scenario id or a scenario file.")],
    seat: Annotated[
        list[str], typer.Option(help="A seat a person takes (ROLE or ROLE:ID); repeat.")
    ],
    bind: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    expires: Annotated[float, typer.Option(help="Minutes an invite link stays valid.")] = 120.0,
    consent: Annotated[Path | None, typer.Option(help="Consent text file.")] = None,
    questionnaire: Annotated[
        Path | None, typer.Option(help="YAML/JSON list of {key, text} Likert items.")
    ] = None,
    condition: ConditionOption = "general",
    seed: SeedOption = 0,
    protocol: ProtocolOption = None,
    preset: PresetOption = None,
    budget: BudgetOption = None,
    param: ParamOption = None,
    behaviour: BehaviourOption = None,
    mediator: MediatorOption = None,
    parties: PartiesOption = None,
    model: AgentModelOption = None,
) -> None:
    """Host one episode in the browser; prints one invite link per seat."""
    if not 0 < expires <= 7 * 24 * 60:
        fail("--expires: give minutes, more than 0 and at most a week")
    if not 0 < port < 65536:
        fail("--port: give a port from 1 to 65535")
    try:
        options = seated_options(
            protocol=protocol,
            preset=preset,
            mediator=mediator,
            parties=parties,
            model=model,
            condition=condition,
            seed=seed,
            param=param,
            behaviour=behaviour,
            budget=budget,
        )
        table, tokens = _table(scenario, seat, expires, consent, questionnaire, **options)
    except (DisputelabError, OSError, ValueError) as exc:
        fail(str(exc).splitlines()[0])

    def ready(links: dict[str, str]) -> None:
        for key, link in links.items():
            out.print(f"{key}: {link}", highlight=False, soft_wrap=True)

    ended = host(table, tokens, bind=bind, port=port, on_ready=ready).ended
    if ended:
        out.print(f"stored as run {ended.run_id}: {ended.stop_reason}", highlight=False)
    elif table.failed:
        fail(table.failed)


def _table(
    scenario: str,
    seats: list[str],
    expires: float,
    consent: Path | None,
    questionnaire: Path | None,
    **run_options: Any,
) -> tuple[Table, dict[str, str]]:
    """The table to serve, its consent text and questionnaire read from their files."""
    from disputelab.api.host import DEFAULT_CONSENT, DEFAULT_ITEMS, read_items

    text = consent.read_text(encoding="utf-8") if consent else DEFAULT_CONSENT
    items = read_items(questionnaire) if questionnaire else DEFAULT_ITEMS
    root = open_store().root
    return new_table(
        scenario, seats=seats, store=root, expires=expires, consent=text, items=items, **run_options
    )
