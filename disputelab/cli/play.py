"""`disputelab play`: one episode with a person at a seat, asked at this terminal, and
agents (rule, or any model) in every other seat. The plan is `run`'s; the play itself
is `disputelab.api.play.play`; this module only reads the command line and prints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from disputelab.api import RULE, play
from disputelab.cli.common import err, fail, open_store, out, state, store_option
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
    _params,
)
from disputelab.errors import DisputelabError, PlanError

if TYPE_CHECKING:
    from disputelab.api.play import PlayResult

SEAT_HELP = (
    "The seat you take: ROLE or ROLE:ID, e.g. parties:tenant or mediator "
    "(`disputelab protocols show NAME` lists the seats); repeat to take several in turn."
)


AgentModelOption = Annotated[
    str | None, typer.Option(help="Model for the agents' LLM roles (default: rule agents).")
]


def seated_options(
    *,
    protocol: str | None,
    preset: str | None,
    mediator: str | None,
    parties: str | None,
    model: str | None,
    condition: str,
    seed: int,
    param: list[str] | None,
    behaviour: list[str] | None,
    budget: int | None,
) -> dict[str, Any]:
    """The run options of a table with people at it, as `play` and `host` take them
    from the command line (rule agents where no model is named)."""
    return dict(
        protocol=protocol,
        preset=preset,
        mediator=mediator,
        parties=parties,
        model=model or RULE,
        condition=condition,
        seed=seed,
        params=_params(protocol, preset, param or [], behaviour or [], {}),
        budget=budget,
    )


def play_command(
    scenario: Annotated[
        str | None,
        typer.Argument(help="Built-in scenario id or a scenario file.", show_default=False),
    ] = None,
    seat: Annotated[list[str] | None, typer.Option(help=SEAT_HELP)] = None,
    resume: Annotated[
        str | None,
        typer.Option(
            help="Continue a play that stopped (its run id): your moves so far are replayed."
        ),
    ] = None,
    participant: Annotated[
        str | None, typer.Option(help="Your pseudonymous participant id (default: a random one).")
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
    """Play one episode yourself at a seat, agents in the others; Enter takes the default."""
    if resume is None and (scenario is None or not seat):
        fail("name a scenario and --seat, or --resume RUN")
    if resume is not None and (scenario is not None or seat):
        fail("--resume continues a stored play: give no scenario or --seat with it")
    options: dict[str, Any] = {}
    if resume is None:
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
    who = {s: participant for s in seat or []} if participant else None
    result = _play(scenario, seat or [], resume, who, options)
    _print_ending(result)


def _play(
    scenario: str | None,
    seats: list[str],
    resume: str | None,
    participants: dict[str, str] | None,
    options: dict[str, Any],
) -> PlayResult:
    """The play, with one-line errors, and a resume command when it is stopped."""
    started: list[str] = []

    def begun(run_id: str) -> None:
        started.append(run_id)
        again = f"disputelab {store_option()}play --resume {run_id}"
        err.print(
            f"[dim]run {run_id}; if you stop (Ctrl-C), resume with: {escape(again)}[/]",
            highlight=False,
            soft_wrap=True,
        )

    try:
        return play.play(
            scenario,
            seat=seats,
            source=play.TerminalMoves(),
            resume=resume,
            store=open_store(),
            participants=participants,
            on_run=begun,
            **options,
        )
    except KeyboardInterrupt:
        if started:
            again = f"disputelab {store_option()}play --resume {started[0]}"
            err.print(
                f"stopped; your finished turns are stored. resume with: {escape(again)}",
                highlight=False,
                soft_wrap=True,
            )
            state.interrupt_reported = True
        raise
    except PlanError as exc:
        _fail_plan(exc)
    except (DisputelabError, ValueError) as exc:
        fail(str(exc).splitlines()[0])


def _print_ending(result: PlayResult) -> None:
    """How the episode ended, what was agreed, and where it is stored."""
    outcome = result.episode.outcome
    assert outcome is not None
    if result.resumed:
        went = "; the table went otherwise, so you played on from there" if result.diverged else ""
        out.print(f"resumed: {result.replayed} of your moves replayed from the log{went}")
    out.print(f"[bold]stop:[/] {outcome.status.value}: {escape(outcome.stop_reason)}")
    if outcome.agreement and any(outcome.agreement.values()):
        agreed = ", ".join(f"{t}={o or '-'}" for t, o in outcome.agreement.items())
        label = "agreement" if outcome.status.value == "resolved" else "common ground"
        out.print(f"[bold]{label}:[/] {escape(agreed)}", highlight=False)
    if outcome.amounts:
        amounts = ", ".join(f"{k}={v:,.2f}" for k, v in outcome.amounts.items())
        out.print(f"[bold]amounts:[/] {escape(amounts)}", highlight=False)
    out.print(
        f"stored as run [magenta]{result.run_id}[/]; the transcript: "
        f"{escape(f'disputelab {store_option()}report {result.run_id}')}",
        highlight=False,
        soft_wrap=True,
    )
