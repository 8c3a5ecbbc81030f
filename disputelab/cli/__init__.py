"""The `disputelab` command line: one module per command or command group, all reading
the registries (protocols, agent kinds, evaluators) rather than naming what is in them."""

from __future__ import annotations

import gc
import itertools
import re
import sys
from importlib import import_module
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

# The API's DEFAULT_STORE, spelled here so that `disputelab --version` and `--help` need
# not import the API (tests/cli/test_startup.py holds the two equal).
DEFAULT_STORE_NAME = "disputelab-runs"

# Each command's module, imported when the command is looked up (to run it, show its
# help, or list it in `disputelab --help`): one command does not pay for every other
# command's imports, and `--version` for none. Listed in the order `--help` shows them.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("disputelab.cli.run", "run"),
    "play": ("disputelab.cli.play", "play_command"),
    "host": ("disputelab.cli.host", "host_command"),
    "annotate": ("disputelab.cli.annotate", "annotate_command"),
    "evaluate": ("disputelab.cli.evaluate", "evaluate"),
    "validate-judge": ("disputelab.cli.validate_judge", "validate_judge"),
    "experiment": ("disputelab.cli.experiment", "experiment"),
    "report": ("disputelab.cli.report", "report"),
    "curate": ("disputelab.cli.curate", "curate"),
    "view": ("disputelab.cli.view", "view"),
    "bench": ("disputelab.cli.bench", "bench"),
    "sensitivity": ("disputelab.cli.sensitivity", "sensitivity"),
    "compare": ("disputelab.cli.compare", "compare"),
    "scenarios": ("disputelab.cli.scenarios", "app"),
    "conditions": ("disputelab.cli.conditions", "app"),
    "protocols": ("disputelab.cli.protocols", "app"),
    "presets": ("disputelab.cli.presets", "app"),
    "datasets": ("disputelab.cli.datasets", "app"),
    "runs": ("disputelab.cli.runs", "app"),
    "store": ("disputelab.cli.store", "app"),
    "exemplars": ("disputelab.cli.exemplars", "app"),
    "memory": ("disputelab.cli.memory", "app"),
}


# Each command's line in the `disputelab --help` listing, so that the listing imports no
# command module (it took 1.4 s when it loaded them all, for 22 lines of text).
# tests/test_cli_commands.py holds each line equal to its command's own short help.
LISTED: dict[str, str] = {
    "run": "Run one episode (and a mediator's unmediated twin); repeat --model to compare.",
    "play": "Play one episode yourself at a seat, agents in the others; Enter takes the default.",
    "host": "Host one episode in the browser; prints one invite link per seat.",
    "annotate": "Serve a run's transcripts to annotators; one invite link per annotator.",
    "evaluate": "Re-score a stored run without simulating again; scores are stored beside old "
    "ones.",
    "validate-judge": "Score trackers against the rule agents' known truth, or people's labels.",
    "experiment": "Run an experiment grid: scenarios x conditions x mediators x replicates.",
    "report": "Print a run's transcript and metrics, or an experiment's tables.",
    "curate": "Recast seed texts into scenarios and keep the ones that reach impasse.",
    "view": "Serve the store's runs and their HTML reports, read-only, until Ctrl-C.",
    "bench": "Measure the runner against a local OpenAI-compatible load target (no network).",
    "sensitivity": "Rank behaviour parameters by their influence on each metric (Morris or Sobol).",
    "compare": "Put models, mediators, runs or people side by side, ranked.",
    "scenarios": "List, show and validate scenarios.",
    "conditions": "Probing conditions: scenario transforms.",
    "protocols": "Protocols: who speaks when, and when an episode ends.",
    "presets": "Presets: a paper's exact setting in one word.",
    "datasets": "Public datasets: list them, and fetch them with git into a cache.",
    "runs": "List the runs in the store; delete or rename them, or forget a participant.",
    "store": "Check the run store for damage, and recover its readable runs.",
    "exemplars": "The remediator's exemplars: make a pool, select a set by value impact, compare.",
    "memory": "Show or reset the planning counsel's reflection memory kept in the store.",
}


def load_command(name: str) -> Any:
    """The click command of `name` (one of COMMANDS), its module imported now."""
    module, attribute = COMMANDS[name]
    target = getattr(import_module(module), attribute)
    if isinstance(target, typer.Typer):
        group = typer.main.get_group(target)
        group.name = name  # as `add_typer(app, name=...)` names it
        return group
    single = typer.Typer(add_completion=False)
    single.command(name)(target)
    return typer.main.get_command(single)


class _Commands(TyperGroup):
    """The command group, its commands loaded on first use. A store that fails
    mid-command (a damaged page, a stored value that does not decode) ends it like bad
    input: one line, exit status 2."""

    # Set by `main`, the console process: the modules, classes and functions a command's
    # imports made live as long as the process, so the collector is told to leave them
    # alone (gc.freeze) rather than walk them at every full collection and again at exit,
    # where that walk took a sixth of a short command's CPU time. What the command itself
    # makes is collected as before.
    freeze_after_load = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(n for n in super().list_commands(ctx) if n not in COMMANDS)]

    # True while the group's own help is written: its listing needs only each command's
    # line (LISTED), not the command.
    listing = False

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if self.listing and cmd_name in LISTED and cmd_name not in self.commands:
            return TyperCommand(cmd_name, help=LISTED[cmd_name])
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            self.add_command(load_command(cmd_name), cmd_name)
            if self.freeze_after_load:
                gc.freeze()
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: Any) -> Any:
        import sqlite3

        from disputelab.api import CacheError, StoreError
        from disputelab.api.stores import is_sqlite_message, store_failure
        from disputelab.cli.common import fail, state

        try:
            return super().invoke(ctx)
        except (StoreError, CacheError) as exc:
            fail(str(exc))
        except sqlite3.DatabaseError as exc:
            fail(str(store_failure(state.store_path, exc)))
        except UnicodeDecodeError as exc:
            if not is_sqlite_message(exc):
                raise
            fail(str(store_failure(state.store_path, exc)))
        finally:
            state.close()


app = typer.Typer(
    cls=_Commands,
    help="Simulate dispute mediation and negotiation, run experiments, and score outcomes.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
)


def _check_timeout(value: float | None) -> float | None:
    if value is not None and not 0 < value <= 3600:
        raise typer.BadParameter("must be more than 0 and at most 3600 seconds")
    return value


def _show_version(value: bool) -> None:
    if value:
        from importlib import metadata

        typer.echo(f"disputelab {metadata.version('disputelab')}")
        raise typer.Exit()


@app.callback()
def main_options(
    # Text, not a Path: an empty value must be told from "." (which a Path makes of it).
    store: Annotated[
        str,
        typer.Option(
            "--store", metavar="PATH", help="Directory of the run store.", envvar="DISPUTELAB_STORE"
        ),
    ] = DEFAULT_STORE_NAME,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            help="Seconds one model request may take (default 60; a call with its "
            "retries gets three times that).",
            envvar="DISPUTELAB_TIMEOUT",
            callback=_check_timeout,
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option("--version", is_eager=True, callback=_show_version, help="Print the version."),
    ] = False,
) -> None:
    if not store.strip():
        raise typer.BadParameter("is empty; name the store's folder", param_hint="--store")
    from disputelab.cli.common import state

    state.begin(Path(store), timeout)


GLOBAL_OPTIONS = ("--store", "--timeout")


def hoist_global_options(args: list[str]) -> list[str]:
    """Move `--store PATH` and `--timeout S` (or `--store=PATH`...) written after the
    command to the front, where the command line expects a global option."""
    out_args: list[str] = []
    hoisted: list[str] = []
    i = 0
    while i < len(args):
        if args[i] in GLOBAL_OPTIONS and i + 1 < len(args) and out_args:
            hoisted += args[i : i + 2]
            i += 2
            continue
        if args[i].startswith(tuple(f"{o}=" for o in GLOBAL_OPTIONS)) and out_args:
            hoisted.append(args[i])
        else:
            out_args.append(args[i])
        i += 1
    return hoisted + out_args


def _click_class(name: str) -> type[Exception]:
    """Click's exception class, wherever this typer release takes click from."""
    for cls in typer.BadParameter.__mro__:
        if cls.__name__ == name and issubclass(cls, Exception):
            return cls
    raise RuntimeError(f"typer has no click {name}")


_USAGE_ERROR = _click_class("UsageError")


_YES_NO = re.compile(
    r"unexpected extra argument(?:\(s\)|s)? \((?:true|false|yes|no|on|off|1|0)\)", re.I
)


def _hint(message: str, args: list[str]) -> str:
    """What a usage error most likely means, where click's words leave it unsaid: a
    value after a yes/no flag (`--stop-on-consensus false`, as older docs had it)."""
    if not _YES_NO.search(message):
        return ""
    for flag, word in itertools.pairwise(args):
        if flag.startswith("--") and f"({word})" in message:
            name = flag.removeprefix("--no-").removeprefix("--")
            return f"; --{name} takes no value: --{name} turns it on, --no-{name} off"
    return ""


def main() -> None:
    """Console entry point: every usage error is one line and exit status 2."""
    args = hoist_global_options(sys.argv[1:])
    _Commands.freeze_after_load = True
    try:
        code = app(args=args, standalone_mode=False)
    except _USAGE_ERROR as exc:
        from disputelab.cli.common import err, out

        ctx = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
            out.print(ctx.get_help(), end="")  # a bare group shows its help
            raise SystemExit(0) from None
        where = ctx.command_path if ctx is not None else "disputelab"
        message = str(getattr(exc, "format_message", exc.__str__)()).replace("Value error, ", "")
        err.print(
            f"[bold red]error:[/] {message}{_hint(message, args)} (see `{where} --help`)",
            highlight=False,
            soft_wrap=True,
        )
        raise SystemExit(2) from None
    except (KeyboardInterrupt, typer.Abort):
        code = 130
    if code == 130:
        from disputelab.cli.common import err, state

        if not state.interrupt_reported:
            # typer turns Ctrl-C into exit status 130 without a word; say what was kept.
            err.print("interrupted; finished turns are in the store")
    raise SystemExit(code if isinstance(code, int) else 0)
