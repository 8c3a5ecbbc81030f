"""`disputelab sensitivity`: rank behaviour parameters by their influence on each metric
(Morris or Sobol, with SALib), over the grid of an experiment spec."""

from __future__ import annotations

import asyncio
import csv
import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from disputelab.cli.common import (
    err,
    fail,
    fail_problems,
    library,
    open_models,
    open_store,
    out,
    state,
    store_option,
    warn,
)
from disputelab.cli.experiment import stop_on_signals
from disputelab.cli.progress import ticker
from disputelab.scenario.inputs import UserFileError, make_user_dir
from disputelab.store.sqlite import StoreError

if TYPE_CHECKING:
    from disputelab.experiments.sensitivity import Design, Evaluation, Output, Ranking
    from disputelab.llm.models import ModelHub
    from disputelab.plan.spec import ExperimentSpec

HEADERS = {
    "morris": ("mu*", "mu* 95% CI", "sigma", "mu"),
    "sobol": ("S1", "S1 95% CI", "ST", "ST 95% CI"),
}
EXPLAIN = {
    "morris": "mu* is the mean absolute elementary effect: the change in the metric when the "
    "parameter alone takes a step (two thirds of its range), scaled to a step across its "
    "whole range, in the metric's units; sigma, the effects' spread, is large where the "
    "effect depends on where the other parameters are (interaction or curvature); mu is "
    "the signed mean. Ranked by mu*.",
    "sobol": "S1 is the share of the metric's variance over the design due to the parameter "
    "alone; ST the share it has a hand in, interactions included. Ranked by ST.",
}


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
    from disputelab.experiments.sensitivity import DEFAULT_SAMPLES

    spec = _load(spec_path)
    wanted = tuple(metric or []) or _headline(spec)
    _check_metrics(spec, wanted)
    folder = out_dir or Path("sensitivity") / spec.name
    try:  # said now, not after the whole design has been played
        make_user_dir(folder)
    except UserFileError as exc:
        fail(f"--out {exc.path}: {exc}")
    n = DEFAULT_SAMPLES.get(method, 4) if samples is None else samples
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
    from disputelab.experiments.sensitivity import outputs, rankings

    means = [m for m in found.means if m is not None]
    ranked = rankings(design, outputs(means, wanted))
    text = markdown(spec, design, ranked, found, size)
    _write(folder, text, design, ranked)
    out.print(text, markup=False, highlight=False, soft_wrap=True)
    out.print(
        f"wrote {folder / 'sensitivity.md'}, sensitivity.csv and sensitivity.png",
        markup=False,
        highlight=False,
    )


def _load(spec_path: Path) -> ExperimentSpec:
    from disputelab.plan.spec import SpecError, load_spec

    try:
        spec = load_spec(spec_path, None, library())
    except SpecError as exc:
        fail_problems(exc.source, exc.problems)
    for warning in spec.warnings:
        warn(str(spec_path), warning)
    return spec


def _design(
    spec: ExperimentSpec, params: list[str], method: str, samples: int, seed: int
) -> Design:
    """The design the options ask for; every bad option ends in one line, exit 2."""
    from disputelab.experiments.sensitivity import (
        SensitivityError,
        check_protocol,
        default_parameters,
        make_design,
        parse_factors,
    )

    try:
        check_protocol(spec)
        if method not in HEADERS:
            raise SensitivityError(f"--method takes morris or sobol, not {method!r}")
        if samples < 1:
            raise SensitivityError(f"--samples must be at least 1, not {samples}")
        if seed < 0:
            raise SensitivityError(f"--seed must be 0 or more, not {seed}")
        names = params or list(default_parameters(spec))
        if not names:
            raise SensitivityError(
                f"the conditions of {spec.name} ({', '.join(spec.conditions)}) act through "
                "no behaviour parameter; name the ones to vary with --param NAME[=LOW:HIGH]"
            )
        return make_design(parse_factors(names), method, samples, seed)
    except (SensitivityError, ValueError) as exc:
        fail(str(exc))


def _points(
    spec: ExperimentSpec, spec_path: Path, design: Design, resume: bool
) -> tuple[list[ExperimentSpec], int]:
    """Each point's spec and the episodes of one grid; says how many episodes it runs."""
    from disputelab.experiments.sensitivity import (
        SensitivityError,
        finished,
        grid_size,
        point_specs,
        stored_points,
    )
    from disputelab.plan.spec import SpecError

    try:
        size = grid_size(spec, spec_path.parent, library())
        specs = point_specs(spec, design)
    except SpecError as exc:
        fail_problems(str(spec_path), exc.problems)
    except SensitivityError as exc:
        fail(str(exc))
    store = open_store()
    stored = stored_points(store, specs)
    if stored and not resume:
        fail(
            f"{len(stored)} point(s) of this design are in the store already; pass --resume "
            "to reuse them"
        )
    distinct = len({s.name for s in specs})
    done = sum(finished(store, n, size) for n in stored)
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
    """Refuse, before anything is played, a metric no evaluator of this grid stores. The
    metric's own name is checked once the first point is scored: evaluators do not list
    their metrics ahead of time."""
    from disputelab.evaluation.registry import get_evaluator
    from disputelab.protocols.base import get_protocol

    proto = get_protocol(spec.protocol)
    names = dict.fromkeys([*proto.evaluators, *proto.judged_evaluators, *spec.evaluators])
    stems = [(e.stored_as or e.name).split("{")[0] for e in map(get_evaluator, names)]

    def stored(evaluator: str) -> bool:
        return any(evaluator == s or (s.endswith(":") and evaluator.startswith(s)) for s in stems)

    for name in wanted:
        evaluator, _, metric = name.rpartition(":")
        if not evaluator or not metric or not stored(evaluator):
            fail(
                f"--metric {name}: not a metric this grid scores; give EVALUATOR:METRIC for "
                f"one of its evaluators ({', '.join(s.rstrip(':') for s in stems)})"
            )


def _headline(spec: ExperimentSpec) -> tuple[str, ...]:
    from disputelab.protocols.base import get_protocol

    return tuple(get_protocol(spec.protocol).report.effect_metrics)


def _evaluate(
    spec: ExperimentSpec,
    spec_path: Path,
    specs: list[ExperimentSpec],
    size: int,
    hub: ModelHub,
    wanted: tuple[str, ...],
) -> Evaluation:
    """Every point, under a progress bar of episodes; stops cleanly on a signal."""
    from disputelab.experiments.sensitivity import Hooks, Means, evaluate_points, unknown_metrics
    from disputelab.plan.spec import SpecError

    distinct = len({s.name for s in specs})
    with stop_on_signals() as stop, ticker(f"sensitivity {spec.name}", hub) as progress:
        progress.plan(distinct * size)

        def skipped(n: int) -> None:
            for _ in range(n):
                progress.advance()

        def point(name: str, means: Means) -> None:
            missing = unknown_metrics(wanted, means)
            if missing:
                known = ", ".join(sorted({m for _, m in means}))
                fail(
                    f"no metric {', '.join(missing)} in this grid's scores; it has: {known} "
                    "(what was played is kept: run again with --resume and one of those)"
                )

        hooks = Hooks(lambda e, ep, error: progress.advance(failed=e == "failed"), skipped, point)

        async def run() -> Evaluation:
            try:
                return await evaluate_points(
                    open_store(), specs, spec_path.parent, hub, size, hooks, stop
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


def label(output: Output, single: bool) -> str:
    """A metric's name, with the mediator arm when the grid has more than one."""
    mediator, metric = output
    return metric if single else f"{metric} ({mediator})"


def _single(ranked: list[Ranking]) -> bool:
    return len({r.output[0] for r in ranked}) <= 1


def _fmt(value: float, ci: bool = False) -> str:
    if math.isnan(value):
        return "n/a"
    return f"± {value:.3g}" if ci else f"{value:.3g}"


def markdown(
    spec: ExperimentSpec, design: Design, ranked: list[Ranking], found: Evaluation, size: int
) -> str:
    """The ranking table per metric, with what the design was and what the numbers mean."""
    from disputelab.experiments.sensitivity import CONF_LEVEL, RESAMPLES

    unit = "trajectories" if design.method == "morris" else "base samples (Saltelli)"
    lines = [
        f"# Sensitivity of {spec.name}: {design.method}",
        "",
        f"{design.samples} {unit}, seed {design.seed}: {len(design.X)} points "
        f"({found.distinct} distinct), each the grid of {size} episodes under the spec's "
        "seeds; a point's value is the mean of the metric over the grid's complete "
        f"episodes. {EXPLAIN[design.method]} CIs are bootstrap {CONF_LEVEL:.0%} intervals "
        f"(half-widths) over {RESAMPLES} resamples.",
        "",
        "| parameter | low | high |",
        "|---|---:|---:|",
        *(f"| {f.name} | {f.low:g} | {f.high:g} |" for f in design.factors),
    ]
    single = _single(ranked)
    flat = [r for r in ranked if r.constant]
    for r in ranked:
        if r.constant:
            continue
        lines += ["", f"## {label(r.output, single)}", ""]
        if not r.rows:
            lines.append(f"n/a: {r.note}")
            continue
        lines += _table(design.method, r)
    if flat:
        names = ", ".join(label(r.output, single) for r in flat)
        lines += ["", f"The same in every point (no parameter moves them): {names}."]
    return "\n".join(lines) + "\n"


def _table(method: str, r: Ranking) -> list[str]:
    from disputelab.experiments.sensitivity import COLUMNS

    heads = HEADERS[method]
    lines = [
        "| rank | parameter | " + " | ".join(heads) + " |",
        "|---:|---|" + "---:|" * len(heads),
    ]
    for i, (name, values) in enumerate(r.rows, 1):
        cells = [_fmt(values[c], ci=c.endswith("_conf")) for c in COLUMNS[method]]
        lines.append(f"| {i} | {name} | " + " | ".join(cells) + " |")
    return lines


def _write(folder: Path, text: str, design: Design, ranked: list[Ranking]) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "sensitivity.md").write_text(text, encoding="utf-8")
        _write_csv(folder / "sensitivity.csv", design, ranked)
        _plot(folder / "sensitivity.png", design, ranked)
    except OSError as exc:
        fail(f"cannot write to {folder}: {exc.strerror or exc}")


def _write_csv(path: Path, design: Design, ranked: list[Ranking]) -> None:
    from disputelab.experiments.sensitivity import COLUMNS

    columns = COLUMNS[design.method]
    bounds = {f.name: f for f in design.factors}
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(
            ["method", "metric", "mediator", "rank", "parameter", "low", "high", *columns, "note"]
        )
        for r in ranked:
            mediator, metric = r.output
            if not r.rows:
                blank = [""] * (4 + len(columns))
                w.writerow([design.method, metric, mediator, *blank, r.note])
            for i, (name, values) in enumerate(r.rows, 1):
                f = bounds[name]
                nums = [f"{values[c]:.6g}" for c in columns]
                w.writerow([design.method, metric, mediator, i, name, f.low, f.high, *nums, r.note])


def _plot(path: Path, design: Design, ranked: list[Ranking]) -> None:
    """mu* against sigma (Morris) or bars of ST and S1 (Sobol), one panel per metric that
    varies."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in ranked if r.rows and not r.constant]
    cols = max(1, min(3, len(shown)))
    rows = max(1, math.ceil(len(shown) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.8 * rows), squeeze=False)
    single = _single(ranked)
    for ax, r in zip(axes.flat, shown, strict=False):
        _panel(ax, design.method, r)
        ax.set_title(label(r.output, single), fontsize=9)
    for ax in list(axes.flat)[len(shown) :]:
        ax.axis("off")
    if not shown:
        axes[0][0].text(0.5, 0.5, "no metric varied across the points", ha="center")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _panel(ax: object, method: str, r: Ranking) -> None:
    from matplotlib.axes import Axes

    assert isinstance(ax, Axes)
    names = [n for n, _ in r.rows]
    if method == "morris":
        x = [v["mu_star"] for _, v in r.rows]
        y = [v["sigma"] if not math.isnan(v["sigma"]) else 0.0 for _, v in r.rows]
        half = [0.0 if math.isnan(v["mu_star_conf"]) else v["mu_star_conf"] for _, v in r.rows]
        ax.errorbar(x, y, xerr=half, fmt="o", capsize=3)
        for n, xi, yi in zip(names, x, y, strict=True):
            ax.annotate(n, (xi, yi), fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax.margins(x=0.3, y=0.15)
        ax.set_xlabel("mu* (mean |elementary effect|)")
        ax.set_ylabel("sigma")
        return
    pos = list(range(len(names)))[::-1]
    for key, shift, colour in (("ST", 0.2, "tab:blue"), ("S1", -0.2, "tab:orange")):
        vals = [0.0 if math.isnan(v[key]) else v[key] for _, v in r.rows]
        errs = [0.0 if math.isnan(v[f"{key}_conf"]) else v[f"{key}_conf"] for _, v in r.rows]
        ax.barh([p + shift for p in pos], vals, 0.4, xerr=errs, label=key, color=colour)
    ax.set_yticks(pos, names, fontsize=7)
    ax.set_xlabel("Sobol index")
    ax.legend(fontsize=7)
