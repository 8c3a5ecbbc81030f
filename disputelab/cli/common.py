"""What every command shares: the consoles, the store option, one-line errors, opening
models, and the usage and metric tables."""

from __future__ import annotations

import asyncio
import csv
import json
import re
import sys
from collections.abc import Coroutine, Iterable, Iterator, Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from disputelab import api
from disputelab.api import (
    MetricResult,
    ModelConfigError,
    RoleUsage,
    ScenarioError,
    Store,
    StoreError,
    redact,
)
from disputelab.api.stores import store_missing
from disputelab.errors import DisputelabError

if TYPE_CHECKING:
    from disputelab.api import ModelHub, Profile

T = TypeVar("T")

# No emoji codes: user text such as 'posture:angry' must print as typed.
out = Console(emoji=False)
err = Console(stderr=True, emoji=False)
DEFAULT_STORE = api.DEFAULT_STORE


class _State:
    """What one command invocation shares; `begin` starts each invocation afresh."""

    store_path: Path = DEFAULT_STORE
    store: Store | None = None  # opened once per command, on first use
    interrupt_reported: bool = False  # the command already said what an interrupt kept
    timeout_s: float | None = None  # --timeout: seconds per model request

    def begin(self, store_path: Path, timeout_s: float | None = None) -> None:
        self.store_path = store_path
        self.store = None
        self.interrupt_reported = False
        self.timeout_s = timeout_s

    def close(self) -> None:
        """Close the command's store. The last connection to close folds SQLite's
        write-ahead log into the database file and removes it, so that the file alone
        holds every run (a copy of `disputelab.sqlite` taken after a command is whole)."""
        if self.store is not None:
            store, self.store = self.store, None
            store.close()


state = _State()


# A message line, a file name or value in it, and the problems listed for one input are
# cut to these: a hostile file can hold a megabyte-long name or thousands of faults, and
# rich takes minutes to fold a single long word.
MAX_LINE_CHARS = 1000
MAX_SHOWN_CHARS = 120
MAX_PROBLEM_LINES = 20


def clip(text: str, limit: int = MAX_SHOWN_CHARS) -> str:
    """`text` cut to `limit` characters, ending in '…' where something was cut; for ids,
    titles and names from user files wherever they are printed."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


RUN_HELP = "A run: its id, a unique prefix of it, its label, or `last`."


def counted(n: int, noun: str) -> str:
    """ "1 episode", "3 episodes": a count with its noun in the right number."""
    return f"{n} {noun if n == 1 else noun + 's'}"


# The library words a fix in the API's and the spec's names (`give `judges``, `resume`),
# since it is raised from Python too; here those names become the options that set them.
CLI_OPTIONS = {
    "bert_model": "--bert-model",
    "judges": "--judge-model",
    "lenient": "--lenient",
    "model": "--model",
    "models.parties": "--parties-model",
    "resume": "--resume",
    "source": "--from",  # `datasets get`: a mirror or clone to fetch from
    "store": "--store",
    "to": "--to",  # `datasets get`: the folder to keep datasets under
}
_NAMED = re.compile(r"(give )?`([^`]+)`")


def as_cli_advice(message: str) -> str:
    """A library message with the settings it names as this command line's options:
    "give `judges`" reads "pass --judge-model". Names it has no option for stay."""

    def option(found: re.Match[str]) -> str:
        name = CLI_OPTIONS.get(found[2])
        if name is None:
            return found[0]
        return f"pass {name}" if found[1] else name

    return _NAMED.sub(option, message)


def write_out(text: str, out_path: Path | None) -> None:
    """A command's text result on standard output, or into `--out` (the option named when
    the file cannot be written, exit status 2)."""
    if out_path is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    write_out_data(text, out_path)


def write_out_data(data: str | bytes, out_path: Path) -> None:
    """`data` into `--out` whole, or one error line (exit status 2) with the old file
    left as it was: a full disk never swaps a good report for a cut-short one."""
    try:
        api.write_file(out_path, data)
    except api.WriteFailed as exc:
        fail(f"--out {out_path}: cannot write it ({exc.reason}); the file there is unchanged")
    err.print(f"wrote {out_path}")


def given_options(ctx: typer.Context, names: Iterable[str]) -> list[str]:
    """The options among `names` (parameter names) that the command line set, as typed
    (`--voice-model`), in the order of `names`: for a command to refuse those that do
    not apply rather than ignore them."""
    return [
        f"--{name.replace('_', '-')}"
        for name in names
        if (source := ctx.get_parameter_source(name)) is not None and source.name != "DEFAULT"
    ]


def fail(message: str) -> NoReturn:
    """One line on stderr, exit status 2: the contract for every bad input."""
    line = clip(as_cli_advice(redact(message.splitlines()[0]) if message else ""), MAX_LINE_CHARS)
    err.print(f"[bold red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def _line(where: str, text: str) -> str:
    """`WHERE: TEXT` for one message line, each part clipped."""
    return clip(redact(f"{clip(where, MAX_LINE_CHARS // 2)}: {text}"), MAX_LINE_CHARS)


def print_problem(where: str, text: str) -> None:
    """One `error: WHERE: TEXT` line (the first line of `text`)."""
    first = as_cli_advice(text.splitlines()[0] if text else "")
    err.print(f"[bold red]error:[/] {escape(_line(where, first))}", highlight=False, soft_wrap=True)


def print_problems(where: str, problems: Iterable[str]) -> None:
    """One line per problem, at most MAX_PROBLEM_LINES of them and then a line that says
    how many more there are."""
    listed = list(problems)
    for problem in listed[:MAX_PROBLEM_LINES]:
        print_problem(where, problem)
    if len(listed) > MAX_PROBLEM_LINES:
        print_problem(
            where, f"and {len(listed) - MAX_PROBLEM_LINES:,} more problems; fix these first"
        )


def fail_problems(where: str, problems: Iterable[str]) -> NoReturn:
    """One line per problem (see `print_problems`), then exit status 2."""
    print_problems(where, problems)
    raise typer.Exit(2)


def fail_lines(problems: Iterable[str]) -> NoReturn:
    """One `error: ...` line per problem (at most MAX_PROBLEM_LINES), then exit 2."""
    listed = list(problems)
    for problem in listed[:MAX_PROBLEM_LINES]:
        line = clip(
            as_cli_advice(redact(problem.splitlines()[0]) if problem else ""), MAX_LINE_CHARS
        )
        err.print(f"[bold red]error:[/] {escape(line)}", highlight=False, soft_wrap=True)
    if len(listed) > MAX_PROBLEM_LINES:
        more = len(listed) - MAX_PROBLEM_LINES
        err.print(f"[bold red]error:[/] and {more:,} more problems; fix these first")
    raise typer.Exit(2)


def fail_scenario(exc: ScenarioError) -> NoReturn:
    fail_problems(exc.source, exc.problems)


def warn(where: str, text: str) -> None:
    """One `warning: WHERE: TEXT` line (a text of several lines is joined into one)."""
    joined = " ".join(text.splitlines())
    err.print(
        f"[yellow]warning:[/] {escape(_line(where, joined))}", highlight=False, soft_wrap=True
    )


def library() -> Path:
    """Where `scenarios import` puts cases when no --out is given."""
    return api.library(state.store_path)


def store_option() -> str:
    """The `--store PATH ` to repeat in suggested commands, or nothing for the default."""
    return "" if state.store_path == DEFAULT_STORE else f"--store {state.store_path} "


def open_store(writable: bool = True, create: bool = True) -> Store:
    """The command's store, opened on first use and shared by the rest of the command.
    Commands that write check it for damage first (`writable`); read-only ones skip that
    cost on a big store, and a damaged page they meet fails in one line all the same.
    A command that only reads runs (`create` False) fails where there is no store yet,
    rather than leaving an empty one behind at a mistyped path."""
    if not create and state.store is None and store_missing(state.store_path):
        fail(
            f"no store at {state.store_path}: nothing has been run there yet "
            "(--store or DISPUTELAB_STORE names another)"
        )
    try:
        if state.store is None:
            state.store = Store(state.store_path, writable)
        elif writable:
            state.store.check_writable()
    except StoreError as exc:
        fail(str(exc))
    return state.store


def open_models(models: Iterable[str], concurrency: int | None = None) -> ModelHub:
    """A model hub over the store's response cache, after checking every model name, so
    a typo fails before anything is simulated (`check_models`)."""
    models = list(models)
    profiles = check_models(models, concurrency)
    store = open_store(writable=False)  # the cache sits beside the runs
    try:
        return api.open_models(
            models,
            store=store,
            concurrency=concurrency,
            timeout_s=state.timeout_s,
            profiles=profiles,
        )
    except DisputelabError as exc:  # a response cache that cannot be opened
        fail(str(exc))


def check_models(
    models: Iterable[str], concurrency: int | None = None, keys: bool = True
) -> dict[str, Profile]:
    """The profiles, after checking that every model name can be used (exit 2 when one
    cannot). `concurrency` is the run's: endpoints without a limit of their own take it,
    and one whose profile sets a lower limit is named in a warning, since it holds the
    whole run back. Without `keys` (a plan, not a run) a missing API key is a warning."""
    try:
        checked = api.check_models(
            models, concurrency=concurrency, timeout_s=state.timeout_s, keys=keys, on_warning=warn
        )
    except ModelConfigError as exc:
        fail(str(exc))
    return checked.profiles


def run_with_models(hub: ModelHub, work: Coroutine[Any, Any, T]) -> T:
    """Run `work` on a new event loop, then close the hub's connections on that same loop:
    a connection pool belongs to the loop it ran on and cannot be closed after it."""

    async def then_close() -> T:
        try:
            return await work
        finally:
            await hub.aclose()

    return asyncio.run(then_close())


def print_usage(hub: ModelHub) -> None:
    """A line of model use per role, or per role and model where a role called several
    (a model axis): a role's total would name one of its models only."""
    for role, total in hub.ledger.roles.items():
        parts = hub.ledger.models_of(role)
        for u in parts if len(parts) > 1 else [total]:
            _print_use(role, u)


def _print_use(role: str, u: RoleUsage) -> None:
    cost = "unknown" if u.cost_usd is None else f"${u.cost_usd:.4f}"
    out.print(
        f"model use, {role} ({u.model}): {u.calls} calls to the model, "
        f"{u.cached} answered from the cache, "
        f"{u.retries} retries, {u.input_tokens} tokens in, {u.output_tokens} out, "
        f"cost {cost}"
        + (f" (token counts unknown: {u.tokens_unknown_reason})" if u.tokens_unknown else ""),
        highlight=False,
        soft_wrap=True,
    )


def metrics_table(title: str, columns: Mapping[str, Mapping[str, MetricResult]]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("metric")
    for name in columns:
        table.add_column(name, justify="right")
    metrics: list[str] = []
    for scores in columns.values():
        metrics += [m for m in scores if m not in metrics]
    for m in metrics:
        cells = []
        for scores in columns.values():
            r = scores.get(m)
            cells.append("" if r is None else ("NaN" if not r.defined else metric_text(r.value)))
        table.add_row(m, *cells)
    return table


def metric_text(value: float) -> str:
    """Three significant digits, without switching to exponents for amounts and prices
    (4,600 rather than 4.6e+03)."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def print_undefined(scores: Mapping[str, Mapping[str, MetricResult]]) -> None:
    """Why each undefined score is undefined, one dim line each."""
    for prefix, results in scores.items():
        for name, r in results.items():
            if not r.defined:
                label = f"{prefix} {name}" if prefix else name
                out.print(f"  [dim]{escape(label)}: {escape(r.explanation)}[/]")


class ListFormat(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"


FormatOption = Annotated[ListFormat, typer.Option("--format", help="table, json or csv.")]


def print_rows(
    rows: Sequence[Mapping[str, object]],
    columns: Sequence[str],
    fmt: ListFormat,
    prose: Sequence[str] = (),
) -> None:
    """Rows as a table, or as JSON or CSV for scripts. Nothing is cut short: `prose`
    columns (titles, descriptions) wrap at words, the others (ids, numbers) never wrap,
    and where even that cannot fit the terminal, each row becomes a short record."""
    if fmt is ListFormat.json:
        data = [{c: r.get(c) for c in columns} for r in rows]
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    if fmt is ListFormat.csv:
        writer = csv.DictWriter(sys.stdout, fieldnames=list(columns), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
        return
    cells = [[str(r.get(c, "")) for c in columns] for r in rows]
    widths = [
        10 if c in prose else max([len(c), *(len(row[i]) for row in cells)])
        for i, c in enumerate(columns)
    ]
    if sum(widths) + 3 * len(columns) + 1 > out.width:
        for row in cells:
            out.print(f"[bold]{escape(row[0])}[/]", highlight=False, soft_wrap=True)
            rest = "; ".join(f"{c}: {v}" for c, v in zip(columns[1:], row[1:], strict=True))
            out.print(f"  {escape(rest)}", highlight=False, soft_wrap=True)
        return
    table = Table()
    for c in columns:
        table.add_column(c, no_wrap=c not in prose, overflow="fold")
    for row in cells:
        table.add_row(*(escape(v) for v in row))
    out.print(table)


def fail_if_judges_silent(hub: ModelHub, reasons: Iterable[str]) -> None:
    """Exit status 2 when judges were asked and not one answered (no reply from a model,
    none from the cache) and scores are undefined for it. Each score stays NaN with its
    reason, as the evaluation contract has it, but a pass whose judge never answered
    scored nothing: a script must not take it for a result."""
    asked = [u for role, u in hub.ledger.roles.items() if role.split(":")[0] == "judge"]
    if not asked or any(u.calls or u.cached for u in asked):
        return
    why = next((r for r in reasons if "judge" in r), None)
    if why is not None:
        fail(f"the judge never answered, so its scores are NaN: {why.removeprefix('undefined: ')}")


def undefined_reasons(results: Mapping[str, Mapping[str, MetricResult]]) -> Iterator[str]:
    """Why each undefined score of a pass over episodes is undefined, for
    `fail_if_judges_silent`."""
    return (r.explanation for scores in results.values() for r in scores.values() if not r.defined)
