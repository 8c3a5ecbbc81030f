"""`disputelab exemplars`: the remediator's candidate pool and its selected exemplar sets.

`pool` simulates dialogues and saves their violations with silver remediations; `import`
makes a pool of an external file (the remediator paper's released exemplars); `select`
chooses a set by value impact and saves it by name; `compare` plays the selection methods
on held-out dialogues; `list` and `show` read what is saved. Pools and sets are JSON files
under `<store>/exemplars/`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.markup import escape

from disputelab.api import ModelError, ModelHub, exemplars
from disputelab.api.exemplars import BUILTIN, ExemplarsExistError
from disputelab.cli.common import (
    FormatOption,
    ListFormat,
    fail,
    open_models,
    out,
    print_rows,
    print_usage,
    state,
    warn,
)
from disputelab.errors import DisputelabError

if TYPE_CHECKING:
    from disputelab.api.exemplars import ExemplarFile

app = typer.Typer(
    help="The remediator's exemplars: make a pool, select a set by value impact, compare.",
    no_args_is_help=True,
)
T = TypeVar("T")
ModelOption = Annotated[
    str, typer.Option(help="Model for parties, moderator and remediator: rule (none) or a model.")
]
SeedOption = Annotated[int, typer.Option(min=0, max=2**31, help="Seed (same seed, same result).")]


def _new_file(name: str, overwrite: bool) -> Path:
    """Where a set saved as `name` goes; refused up front (before any simulation) when one
    is saved there already and `--overwrite` was not given."""
    try:
        return exemplars.new_exemplar_file(name, overwrite, state.store_path)
    except ExemplarsExistError as exc:
        fail(f"{exc}; pass --overwrite to replace them, or another --name")
    except DisputelabError as exc:
        fail(str(exc))


OverwriteOption = Annotated[
    bool, typer.Option("--overwrite", help="Replace a set already saved under the name.")
]


def _reference(name: str) -> str:
    """What to pass as --exemplars or --pool: runs in this store find saved names."""
    return name


def _load(ref: str) -> ExemplarFile:
    try:
        return exemplars.load_exemplars(ref, state.store_path)
    except DisputelabError as exc:
        fail(str(exc))


def _run(models: list[str], job: Callable[[ModelHub], Awaitable[T]]) -> tuple[T, ModelHub]:
    """Run `job` with a model hub on one event loop; model failures end in one line."""
    hub = open_models(models)

    async def main() -> T:
        try:
            return await job(hub)
        finally:
            await hub.aclose()

    try:
        return asyncio.run(main()), hub
    except (ModelError, DisputelabError, ValueError) as exc:
        fail(str(exc).splitlines()[0])


@app.command("pool")
def pool_command(
    name: Annotated[str, typer.Option(help="Save the pool under this name.")] = "pool",
    size: Annotated[int, typer.Option(min=1, max=10_000, help="Candidates in the pool.")] = 80,
    seed: SeedOption = 0,
    model: ModelOption = "rule",
    max_rounds: Annotated[int, typer.Option(min=1, max=100, help="Rounds per dialogue.")] = 10,
    overwrite: OverwriteOption = False,
) -> None:
    """Simulate dialogues and save their violations, each with a silver remediation."""
    target = _new_file(name, overwrite)
    made, hub = _run(
        [model],
        lambda h: exemplars.generate_pool_async(
            name, size, seed, hub=h, model=model, max_rounds=max_rounds
        ),
    )
    path = exemplars.save_exemplars(made, target)
    out.print(
        f"[green]saved[/] pool {name}: {len(made.exemplars)} candidates in {escape(str(path))}"
    )
    out.print(f"  use it with: --pool {escape(_reference(name))}", highlight=False)
    print_usage(hub)


@app.command("import")
def import_command(
    path: Annotated[Path, typer.Argument(help="The file: a JSON list of exemplars or a CSV.")],
    source: Annotated[
        str, typer.Option("--from", help="Its format: sadas (the remediator paper's data).")
    ],
    name: Annotated[str, typer.Option(help="Save the pool under this name.")] = "sadas",
    lenient: Annotated[
        bool,
        typer.Option(
            "--lenient",
            help="Skip records that cannot be read (each warned, and listed in the pool) "
            "instead of failing.",
        ),
    ] = False,
    overwrite: OverwriteOption = False,
) -> None:
    """Make a pool of an external file, each exemplar's labels inferred from its text."""
    target = _new_file(name, overwrite)
    try:
        made = exemplars.import_exemplars(source, path, name, lenient=lenient)
    except DisputelabError as exc:
        fail(str(exc))
    for line in made.warnings:
        warn(str(path), line)
    saved = exemplars.save_exemplars(made.pool, target)
    meta = made.pool.meta
    out.print(
        f"[green]saved[/] pool {name}: {len(made.pool.exemplars)} exemplars from "
        f"{meta['records']} records in {escape(str(saved))}",
        highlight=False,
    )
    for kind, counts in made.label_counts().items():
        ranked = sorted(counts.items(), key=lambda x: (-x[1], x[0]))
        listed = ", ".join(f"{k} {v}" for k, v in ranked)
        out.print(f"  inferred {kind}: {escape(listed)}", highlight=False)
    out.print(f"  use it with: --pool {escape(_reference(name))}", highlight=False)


@app.command("select")
def select_command(
    name: Annotated[str, typer.Option(help="Save the chosen set under this name.")] = "vi",
    pool: Annotated[
        str, typer.Option(help="Pool: builtin, a saved name, or a .json file.")
    ] = BUILTIN,
    seed: SeedOption = 0,
    k: Annotated[int, typer.Option(min=1, max=64, help="Exemplars in the set (K).")] = 8,
    candidates: Annotated[int, typer.Option(min=1, max=10_000, help="|S'|, from the pool.")] = 50,
    rollouts: Annotated[int, typer.Option(min=1, max=10_000, help="|D_s| dialogues.")] = 20,
    patience: Annotated[int, typer.Option(min=1, max=100, help="M: pruning patience.")] = 2,
    budget: Annotated[
        int, typer.Option(min=1, max=100_000, help="Set valuations in stage 2.")
    ] = 120,
    model: ModelOption = "rule",
    judge_model: Annotated[
        str | None, typer.Option(help="Judge of trust and relationship (default: rule state).")
    ] = None,
    overwrite: OverwriteOption = False,
) -> None:
    """Choose K exemplars by value impact (stage 1 ranking, stage 2 search) and save them."""
    source = _load(pool)
    target = _new_file(name, overwrite)
    models = [model] + ([judge_model] if judge_model else [])

    def job(hub: ModelHub) -> Awaitable[ExemplarFile]:
        return exemplars.select_exemplars_async(
            source,
            name,
            seed,
            hub=hub,
            model=model,
            judge_model=judge_model,
            k=k,
            candidates=candidates,
            rollouts=rollouts,
            patience=patience,
            budget=budget,
        )

    chosen, hub = _run(models, job)
    path = exemplars.save_exemplars(chosen, target)
    meta = chosen.meta
    out.print(
        f"[green]saved[/] set {name}: value impact {meta['value_impact']:+.4f} (top-{k} of "
        f"stage 1: {meta['initial_value_impact']:+.4f}) in {escape(str(path))}",
        highlight=False,
    )
    out.print(
        f"  |S'| {meta['candidates']}, |D_s| {meta['rollouts']}, M {patience}, "
        f"{meta['set_evaluations']} sets valued, {meta['episodes_played']} episodes, "
        f"model calls {meta['model_calls'] or 'none (offline)'}",
        highlight=False,
    )
    out.print(f"  use it with: --mediator remediator --exemplars {escape(_reference(name))}")
    print_usage(hub)


@app.command("compare")
def compare_command(
    chosen: Annotated[str, typer.Argument(help="The selected set: a saved name or .json file.")],
    pool: Annotated[str, typer.Option(help="Pool of random and retrieval ICL.")] = BUILTIN,
    tasks: Annotated[int, typer.Option(min=2, max=1000, help="Held-out tasks per topic.")] = 8,
    replicates: Annotated[int, typer.Option(min=1, max=1000, help="Seeds per task.")] = 4,
    seed: SeedOption = 0,
    lexical: Annotated[bool, typer.Option(help="Retrieve with lexical vectors.")] = False,
    model: ModelOption = "rule",
    against: Annotated[
        list[str] | None,
        typer.Option(help="Another saved set to play beside it (one chosen from another pool)."),
    ] = None,
) -> None:
    """Play every selection method on the same held-out dialogues; reward with CIs."""
    the_set, the_pool = _load(chosen), _load(pool)
    others = [_load(ref) for ref in against or []]
    result, hub = _run(
        [model],
        lambda h: exemplars.compare_async(
            the_set,
            the_pool,
            hub=h,
            tasks=tasks,
            replicates=replicates,
            seed=seed,
            lexical=lexical,
            model=model,
            against=others,
        ),
    )
    out.print(exemplars.comparison_markdown(result), highlight=False, markup=False, soft_wrap=True)
    out.print(_retrieval_note(lexical), highlight=False, markup=False)
    print_usage(hub)


def _retrieval_note(lexical: bool) -> str:
    """Which vectors retrieval ICL ranked the pool by: its numbers depend on it, and
    without the `embed` extra the sentence model is not there to use."""
    kind, missing = exemplars.retrieval_vectors(lexical)
    if lexical:
        return f"retrieval ICL ranked the pool by {kind} vectors (--lexical)"
    if kind == "lexical":
        return f"retrieval ICL ranked the pool by lexical vectors: {missing}"
    return f"retrieval ICL ranked the pool by {kind} sentence embeddings"


@app.command("list")
def list_command(fmt: FormatOption = ListFormat.table) -> None:
    """Saved pools and sets, with how each was made."""
    rows = []
    for f in exemplars.saved_exemplars(state.store_path):
        if f.problem:
            rows.append({"name": f.name, "kind": f.kind, "size": 0, "made by": f.problem})
            continue
        vi = f.value_impact
        made = f.method + (f", value impact {vi:+.4f}" if vi is not None else "")
        rows.append({"name": f.name, "kind": f.kind, "size": f.size, "made by": made})
    print_rows(rows, ("name", "kind", "size", "made by"), fmt, prose=("made by",))


@app.command("show")
def show_command(
    name: Annotated[str, typer.Argument(help="A saved name, builtin, or a file.")],
) -> None:
    """One pool or set: each exemplar's violation and its remediation."""
    f = _load(name)
    out.print(f"[bold]{escape(f.name)}[/] ({f.kind}, {len(f.exemplars)} exemplars)")
    for key, value in f.meta.items():
        if key != "single_value_impact":
            out.print(f"  {key}: {escape(str(value))}", highlight=False, soft_wrap=True)
    for e in f.exemplars:
        category = e.category or "no category"
        kind = escape(f"[{category}{', ' + e.style if e.style else ''}]")
        out.print(f"[cyan]{escape(e.id)}[/] {kind}", highlight=False)
        out.print(f"  said:  {escape(e.violation)}", highlight=False, soft_wrap=True)
        out.print(f"  fixed: {escape(e.remediation)}", highlight=False, soft_wrap=True)
        if e.inferred:
            out.print(f"  labels {escape(e.label_source)}", highlight=False, soft_wrap=True)
