"""The `disputelab` command line: one module per command or command group, all reading
the registries (protocols, agent kinds, evaluators) rather than naming what is in them."""

from __future__ import annotations

import itertools
import re
import sqlite3
import sys
from importlib import metadata
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from disputelab.api import CacheError, StoreError
from disputelab.api.stores import is_sqlite_message, store_failure
from disputelab.cli import (
    conditions,
    datasets,
    exemplars,
    memory,
    presets,
    protocols,
    runs,
    scenarios,
    store,
)
from disputelab.cli.bench import bench
from disputelab.cli.common import DEFAULT_STORE, err, fail, out, state
from disputelab.cli.compare import compare
from disputelab.cli.curate import curate
from disputelab.cli.evaluate import evaluate
from disputelab.cli.experiment import experiment
from disputelab.cli.play import play_command
from disputelab.cli.report import report
from disputelab.cli.run import run
from disputelab.cli.sensitivity import sensitivity
from disputelab.cli.validate_judge import validate_judge
from disputelab.cli.view import view


class _Commands(TyperGroup):
    """The command group. A store that fails mid-command (a damaged page, a stored value
    that does not decode) ends it like bad input: one line, exit status 2."""

    def invoke(self, ctx: Any) -> Any:
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
        out.print(f"disputelab {metadata.version('disputelab')}", highlight=False)
        raise typer.Exit()


@app.callback()
def main_options(
    # Text, not a Path: an empty value must be told from "." (which a Path makes of it).
    store: Annotated[
        str,
        typer.Option(
            "--store", metavar="PATH", help="Directory of the run store.", envvar="DISPUTELAB_STORE"
        ),
    ] = str(DEFAULT_STORE),
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


app.command()(run)
app.command("play")(play_command)
app.command()(evaluate)
app.command("validate-judge")(validate_judge)
app.command()(experiment)
app.command()(report)
app.command()(curate)
app.command()(view)
app.command()(bench)
app.command()(sensitivity)
app.command()(compare)
app.add_typer(scenarios.app, name="scenarios")
app.add_typer(conditions.app, name="conditions")
app.add_typer(protocols.app, name="protocols")
app.add_typer(presets.app, name="presets")
app.add_typer(datasets.app, name="datasets")
app.add_typer(runs.app, name="runs")
app.add_typer(store.app, name="store")
app.add_typer(exemplars.app, name="exemplars")
app.add_typer(memory.app, name="memory")


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
    try:
        code = app(args=args, standalone_mode=False)
    except _USAGE_ERROR as exc:
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
    if code == 130 and not state.interrupt_reported:
        # typer turns Ctrl-C into exit status 130 without a word; say what was kept.
        err.print("interrupted; finished turns are in the store")
    raise SystemExit(code if isinstance(code, int) else 0)
