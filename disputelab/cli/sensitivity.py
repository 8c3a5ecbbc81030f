"""`disputelab sensitivity`: rank behaviour parameters by their influence on each metric
(Morris or Sobol, with SALib), over the grid of an experiment spec."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from disputelab.api import SpecError, StoreError, UserFileError, make_user_dir
from disputelab.api import sensitivity as sa
from disputelab.cli.common import (
    err,
    fail,
    fail_problems,
    open_models,
    open_store,
    out,
    state,
    store_option,
    warn,
)
from disputelab.cli.experiment import stop_on_signals
from disputelab.cli.progress import ticker
from disputelab.errors import DisputelabError

if TYPE_CHECKING:
    from disputelab.api import ExperimentSpec, ModelHub
    from disputelab.api.sensitivity import Design, Evaluation, Means


ParamOption = Annotated[
    list[str] | None,
    typer.Option(
        "--param",
        metavar="NAME[=LOW:HIGH]",
        help="A behaviour parameter to vary, over the table's range or LOW:HIGH; repeat "
        "for more (default: those the spec's conditions act through).",
    ),
]
SamplesOption = Annotated[
    int | None,
    typer.Option(help="Morris trajectories (default 4) or Sobol base sample (default 8)."),
]
MetricOption = Annotated[
    list[str] | None,
    typer.Option(
        metavar="EVALUATOR:METRIC",
        help="A metric to rank for, as evaluator:metric; repeat for more (default: the "
        "protocol's headline metrics, else every metric).",
    ),
]


def sensitivity(
    spec_path: Annotated[Path, typer.Argument(metavar="SPEC.yaml", help="Experiment spec.")],
    param: ParamOption = None,
    method: Annotated[str, typer.Option(help="morris or sobol.")] = "morris",
    samples: SamplesOption = None,
    metric: MetricOption = None,
    out_dir: Annotated[
        Path | None,
        typer.Option("--out", help="Folder for the table and plot (default sensitivity/NAME)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the design and its bootstrap.")] = 0,
    resume: Annotated[
        bool, typer.Option("--resume", help="Reuse the points of this design already stored.")
    ] = False,
) -> None:
    """Rank behaviour parameters by their influence on each metric (Morris or Sobol)."""
    spec = _load(spec_path)
    wanted = tuple(metric or []) or sa.headline_metrics(spec)
    _check_metrics(spec, wanted)
    folder = out_dir or Path("sensitivity") / spec.name
    try:  # said now, not after the whole design has been played
        make_user_dir(folder)
    except UserFileError as exc:
        fail(f"--out {exc.path}: {exc}")
    n = sa.default_samples(method) if samples is None else samples
    design = _design(spec, param or [], method, n, seed)
    specs, size = _points(spec, spec_path, design, resume)
    hub = open_models(spec.models.values(), spec.run_concurrency)
    found = _evaluate(spec, spec_path, specs, size, hub, wanted)
    if found.interrupted:
        _interrupted(found, _again(spec_path, param, method, samples, metric, out_dir, seed))
    _report(spec, design, found, size, wanted, folder)
    if found.failed:
        warn(spec.name, f"{found.failed} episode(s) failed; the means leave them out")
        raise typer.Exit(1)


def _report(
    spec: ExperimentSpec,
    design: Design,
    found: Evaluation,
    size: int,
    wanted: tuple[str, ...],
    folder: Path,
) -> None:
    """Rank, write the table, CSV and plot to `folder`, and print the table."""
    ranked = sa.rank(design, found, wanted)
    text = sa.sensitivity_markdown(spec, design, ranked, found, size)
    try:
        sa.write_results(folder, text, design, ranked)
    except DisputelabError as exc:
        fail(str(exc))
    out.print(text, markup=False, highlight=False, soft_wrap=True)
    out.print(
        f"wrote {folder / 'sensitivity.md'}, sensitivity.csv and sensitivity.png",
        markup=False,
        highlight=False,
    )


def _load(spec_path: Path) -> ExperimentSpec:
    try:
        spec = sa.load_spec(spec_path, store=state.store_path)
    except SpecError as exc:
        fail_problems(exc.source, exc.problems)
    for warning in spec.warnings:
        warn(str(spec_path), warning)
    return spec


def _design(
    spec: ExperimentSpec, params: list[str], method: str, samples: int, seed: int
) -> Design:
    """The design the options ask for; every bad option ends in one line, exit 2."""
    try:
        sa.check_protocol(spec)
    except DisputelabError as exc:
        fail(str(exc))
    if method not in sa.METHODS:
        fail(f"--method takes morris or sobol, not {method!r}")
    if samples < 1:
        fail(f"--samples must be at least 1, not {samples}")
    if seed < 0:
        fail(f"--seed must be 0 or more, not {seed}")
    names = params or list(sa.default_parameters(spec))
    if not names:
        fail(
            f"the conditions of {spec.name} ({', '.join(spec.conditions)}) act through "
            "no behaviour parameter; name the ones to vary with --param NAME[=LOW:HIGH]"
        )
    try:
        return sa.design(names, method, samples, seed)
    except (DisputelabError, ValueError) as exc:
        fail(str(exc))


def _points(
    spec: ExperimentSpec, spec_path: Path, design: Design, resume: bool
) -> tuple[list[ExperimentSpec], int]:
    """Each point's spec and the episodes of one grid; says how many episodes it runs."""
    try:
        specs, size = sa.point_grid(spec, spec_path, design, store=state.store_path)
    except SpecError as exc:
        fail_problems(str(spec_path), exc.problems)
    except DisputelabError as exc:
        fail(str(exc))
    stored, done = sa.stored_progress(open_store(), specs, size)
    if stored and not resume:
        fail(
            f"{len(stored)} point(s) of this design are in the store already; pass --resume "
            "to reuse them"
        )
    distinct = len({s.name for s in specs})
    unit = "trajectories" if design.method == "morris" else "base samples"
    out.print(
        f"sensitivity {spec.name}: {design.method}, {design.samples} {unit} over "
        f"{len(design.factors)} parameter(s) = {len(specs)} points ({distinct} distinct), each "
        f"a grid of {size} episodes: {(distinct - done) * size} episodes to run"
        + (f", {done * size} already stored" if done else ""),
        highlight=False,
        soft_wrap=True,
    )
    return specs, size


def _check_metrics(spec: ExperimentSpec, wanted: tuple[str, ...]) -> None:
    """Refuse, before anything is played, a metric no evaluator of this grid stores."""
    name = sa.unscored_metric(spec, wanted)
    if name is not None:
        stems = sa.scored_evaluators(spec)
        fail(
            f"--metric {name}: not a metric this grid scores; give EVALUATOR:METRIC for "
            f"one of its evaluators ({', '.join(s.rstrip(':') for s in stems)})"
        )


def _evaluate(
    spec: ExperimentSpec,
    spec_path: Path,
    specs: list[ExperimentSpec],
    size: int,
    hub: ModelHub,
    wanted: tuple[str, ...],
) -> Evaluation:
    """Every point, under a progress bar of episodes; stops cleanly on a signal."""
    distinct = len({s.name for s in specs})
    with stop_on_signals() as stop, ticker(f"sensitivity {spec.name}", hub) as progress:
        progress.plan(distinct * size)

        def skipped(n: int) -> None:
            for _ in range(n):
                progress.advance()

        def point(name: str, means: Means) -> None:
            missing = sa.unknown_metrics(wanted, means)
            if missing:
                known = ", ".join(sorted({m for _, m in means}))
                fail(
                    f"no metric {', '.join(missing)} in this grid's scores; it has: {known} "
                    "(what was played is kept: run again with --resume and one of those)"
                )

        async def run() -> Evaluation:
            try:
                return await sa.evaluate_points(
                    open_store(),
                    specs,
                    spec_path.parent,
                    hub,
                    size,
                    on_episode=lambda e, ep, error: progress.advance(failed=e == "failed"),
                    on_skipped=skipped,
                    on_point=point,
                    stop=stop,
                )
            finally:
                await hub.aclose()

        try:
            return asyncio.run(run())
        except SpecError as exc:
            fail_problems(str(spec_path), exc.problems)
        except StoreError as exc:
            fail(str(exc))
        except ValueError as exc:
            fail(str(exc).splitlines()[0])


def _again(
    spec_path: Path,
    params: list[str] | None,
    method: str,
    samples: int | None,
    metrics: list[str] | None,
    out_dir: Path | None,
    seed: int,
) -> str:
    """The arguments that go on with this very design."""
    flags = [str(spec_path), "--method", method, "--seed", str(seed)]
    flags += [f"--param {p}" for p in params or []] + [f"--metric {m}" for m in metrics or []]
    flags += [f"--samples {samples}"] if samples is not None else []
    flags += [f"--out {out_dir}"] if out_dir is not None else []
    return " ".join(flags)


def _interrupted(found: Evaluation, again: str) -> NoReturn:
    state.interrupt_reported = True
    done = found.run + found.reused
    err.print(
        f"interrupted: {done} of {found.distinct} points done; finished episodes are in "
        f"the store\nresume with: disputelab {store_option()}sensitivity {again} --resume",
        highlight=False,
        soft_wrap=True,
    )
    raise typer.Exit(130)
