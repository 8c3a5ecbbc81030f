"""`disputelab host`: serve a table in the browser, one invite link per seat a person
takes, agents in every other seat; the play is `disputelab.api.host`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from disputelab.api.host import Table, host, new_table
from disputelab.cli.common import fail, given_options, open_store, out
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
    _fail_plan,
)
from disputelab.errors import DisputelabError, PlanError


def host_command(
    ctx: typer.Context,
    scenario: Annotated[
        str, typer.Argument(help="Built-in scenario id, a scenario file, or a study file.")
    ],
    seat: Annotated[
        list[str] | None,
        typer.Option(help="A seat a person takes (ROLE or ROLE:ID); repeat. Not with a study."),
    ] = None,
    bind: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    expires: Annotated[float, typer.Option(help="Minutes an invite link stays valid.")] = 120.0,
    consent: Annotated[Path | None, typer.Option(help="Consent text file.")] = None,
    questionnaire: Annotated[
        Path | None, typer.Option(help="YAML/JSON list of {key, text} Likert items.")
    ] = None,
    turn_seconds: Annotated[
        float | None,
        typer.Option(help="Seconds a person has for a move; then their seat's default move."),
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
    """Host one episode in the browser; prints one invite link per seat.

    SCENARIO may instead be a study file (YAML with `study:`): one episode per
    participant over its scenarios, assigned balanced and recorded, served at once."""
    _check(expires, port, turn_seconds)
    from disputelab.api.study import is_study_file

    if is_study_file(scenario):
        _refuse_run_options(ctx)
        _host_study(scenario, bind, port)
        return
    if not seat:
        fail("--seat: name the seat a person takes (ROLE or ROLE:ID), or give a study file")
    try:
        options = seated_options(
            protocol=protocol, preset=preset, mediator=mediator, parties=parties, model=model,
            condition=condition, seed=seed, param=param, behaviour=behaviour, budget=budget,
        )  # fmt: skip
        table, tokens = _table(
            scenario, seat, expires, consent, questionnaire, turn_seconds=turn_seconds or 0.0,
            **options,
        )  # fmt: skip
    except PlanError as exc:  # worded as `play` and `run` word it: --param NAME, --budget
        _fail_plan(exc)
    except (DisputelabError, OSError, ValueError) as exc:
        fail(str(exc).splitlines()[0])
    _serve(table, tokens, bind, port)


def _print_links(links: dict[str, str]) -> None:
    """Each invite link on a line of its own, once the server listens."""
    for key, link in links.items():
        out.print(f"{key}: {link}", highlight=False, soft_wrap=True)


def _serve(table: Table, tokens: dict[str, str], bind: str, port: int) -> None:
    """Serve one table until everyone has answered; say where its episode is stored."""
    ended = host(table, tokens, bind=bind, port=port, on_ready=_print_links).ended
    if ended:
        out.print(f"stored as run {ended.run_id}: {ended.stop_reason}", highlight=False)
    elif table.failed:
        fail(table.failed)


def _check(expires: float, port: int, turn_seconds: float | None) -> None:
    if not 0 < expires <= 7 * 24 * 60:
        fail("--expires: give minutes, more than 0 and at most a week")
    if not 0 < port < 65536:
        fail("--port: give a port from 1 to 65535")
    if turn_seconds is not None and not 0 < turn_seconds <= 24 * 3600:
        fail("--turn-seconds: give seconds, more than 0 and at most a day")


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


# Set in a study file, so refused on the command line rather than silently overridden.
RUN_OPTIONS = (
    "seat", "expires", "consent", "questionnaire", "turn_seconds", "condition", "seed",
    "protocol", "preset", "budget", "param", "behaviour", "mediator", "parties", "model",
)  # fmt: skip


def _refuse_run_options(ctx: typer.Context) -> None:
    given = given_options(ctx, RUN_OPTIONS)
    if given:
        fail(f"{', '.join(given)}: a study file sets these; give them in the file")


def _host_study(path: str, bind: str, port: int) -> None:
    """Serve a study's episodes, one link per participant; exit 2 on a bad file."""
    from disputelab.api.study import host_study, new_study, read_study

    try:
        spec = read_study(path)
        tables, tokens = new_study(spec, store=open_store().root)
    except PlanError as exc:
        _fail_plan(exc)
    except (DisputelabError, OSError, ValueError) as exc:
        fail(str(exc).splitlines()[0])

    host_study(tables, tokens, bind=bind, port=port, on_ready=_print_links)
    ended = [t.ended for t in tables if t.ended is not None]
    out.print(
        f"study {spec.study}: {len(ended)} of {len(tables)} episodes stored "
        f"({', '.join(e.run_id for e in ended) or 'none'})",
        highlight=False,
        soft_wrap=True,
    )
    failed = [t.failed for t in tables if t.failed]
    if failed and not ended:
        fail(failed[0])
