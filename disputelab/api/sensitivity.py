"""Sensitivity analysis: which behaviour parameters move which metrics (Morris or Sobol,
with SALib), over the grid of an experiment spec.

    from disputelab.api import sensitivity as sa

    spec = sa.load_spec("probe.yaml")
    sa.check_protocol(spec)
    design = sa.design(list(sa.default_parameters(spec)), "morris", 4, seed=0)
    specs, size = sa.point_grid(spec, "probe.yaml", design)
    found = await sa.evaluate_points(store, specs, Path("."), hub, size)
    ranked = sa.rank(design, found, sa.headline_metrics(spec))
    print(sa.sensitivity_markdown(spec, design, ranked, found, size))

Each point of a design is the spec's whole grid, stored as an experiment of its own, so
an analysis resumes where it stopped. SALib and the runner are imported only when a
design is made or played.
"""

from __future__ import annotations

import csv
import math
import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from disputelab import atomic
from disputelab.api._lazy import lazy_attribute
from disputelab.errors import DisputelabError

if TYPE_CHECKING:
    from disputelab.experiments.runner import Progress
    from disputelab.experiments.sensitivity import (
        Design,
        Evaluation,
        Means,
        Output,
        Ranking,
        SensitivityError,
    )
    from disputelab.llm.models import ModelHub
    from disputelab.plan.spec import ExperimentSpec
    from disputelab.store.sqlite import Store

__all__ = [
    "METHODS",
    "Design",
    "Evaluation",
    "Means",
    "Output",
    "Ranking",
    "SensitivityError",
    "WriteError",
    "check_protocol",
    "default_parameters",
    "default_samples",
    "design",
    "evaluate_points",
    "headline_metrics",
    "label",
    "load_spec",
    "point_grid",
    "rank",
    "scored_evaluators",
    "sensitivity_markdown",
    "stored_progress",
    "unknown_metrics",
    "unscored_metric",
    "write_results",
]

METHODS = ("morris", "sobol")
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

# The design's types, from the module that imports SALib (seconds of start-up).
_LAZY = dict.fromkeys(
    ("Design", "Evaluation", "Means", "Output", "Ranking", "SensitivityError"),
    "disputelab.experiments.sensitivity",
)


def __getattr__(name: str) -> Any:
    return lazy_attribute(globals(), _LAZY, name)


class WriteError(DisputelabError):
    """The results' folder cannot be written."""


def load_spec(
    spec_path: str | os.PathLike[str], *, store: str | os.PathLike[str] | None = None
) -> ExperimentSpec:
    """The experiment spec whose grid each point plays (its `warnings` say what was
    dropped from the grid); SpecError lists every problem."""
    from disputelab.api import library
    from disputelab.plan.spec import load_spec as load

    return load(Path(spec_path), None, library(store))


def default_samples(method: str) -> int:
    """Morris trajectories (4) or Sobol's base sample (8) when none are asked for."""
    from disputelab.experiments.sensitivity import DEFAULT_SAMPLES

    return DEFAULT_SAMPLES.get(method, 4)


def headline_metrics(spec: ExperimentSpec) -> tuple[str, ...]:
    """The protocol's headline metrics (`evaluator:metric`), ranked when none are named;
    empty for every metric."""
    from disputelab.protocols.base import get_protocol

    return tuple(get_protocol(spec.protocol).report.effect_metrics)


def scored_evaluators(spec: ExperimentSpec) -> list[str]:
    """The evaluators this grid stores scores under, as a metric's `evaluator:` prefix
    names them (a family of them ends in ':')."""
    from disputelab.evaluation.registry import get_evaluator
    from disputelab.protocols.base import get_protocol

    proto = get_protocol(spec.protocol)
    names = dict.fromkeys([*proto.evaluators, *proto.judged_evaluators, *spec.evaluators])
    return [(e.stored_as or e.name).split("{")[0] for e in map(get_evaluator, names)]


def unscored_metric(spec: ExperimentSpec, wanted: Iterable[str]) -> str | None:
    """The first of `wanted` (`evaluator:metric`) that no evaluator of this grid stores,
    or None. The metric's own name is checked once the first point is scored
    (`unknown_metrics`): evaluators do not list their metrics ahead of time."""
    stems = scored_evaluators(spec)

    def stored(evaluator: str) -> bool:
        return any(evaluator == s or (s.endswith(":") and evaluator.startswith(s)) for s in stems)

    for name in wanted:
        evaluator, _, metric = name.rpartition(":")
        if not evaluator or not metric or not stored(evaluator):
            return name
    return None


def check_protocol(spec: ExperimentSpec) -> None:
    """SensitivityError when the spec's protocol has no agents with behaviour parameters
    to vary."""
    from disputelab.experiments.sensitivity import check_protocol as check

    check(spec)


def default_parameters(spec: ExperimentSpec) -> tuple[str, ...]:
    """The behaviour parameters the spec's conditions act through: those varied when
    none are named (possibly none)."""
    from disputelab.experiments.sensitivity import default_parameters as defaults

    return defaults(spec)


def design(params: list[str], method: str, samples: int, seed: int = 0) -> Design:
    """The points `method` evaluates over `params` (each `NAME` or `NAME=LOW:HIGH`):
    Morris trajectories or a Saltelli sample of `samples`. SensitivityError for a bad
    parameter, method or sample size."""
    from disputelab.experiments.sensitivity import make_design, parse_factors

    return make_design(parse_factors(params), method, samples, seed)


def point_grid(
    spec: ExperimentSpec,
    spec_path: str | os.PathLike[str],
    design: Design,
    *,
    store: str | os.PathLike[str] | None = None,
) -> tuple[list[ExperimentSpec], int]:
    """Each point's spec, and the episodes of one point's grid (the behaviour values do
    not change the grid). SpecError for scenarios that do not resolve."""
    from disputelab.api import library
    from disputelab.experiments.sensitivity import grid_size, point_specs

    size = grid_size(spec, Path(spec_path).parent, library(store))
    return point_specs(spec, design), size


def stored_progress(store: Store, specs: list[ExperimentSpec], size: int) -> tuple[list[str], int]:
    """The points' grids already in `store` (each once), and how many of them are
    finished: what resuming the design reuses."""
    from disputelab.experiments.sensitivity import finished, stored_points

    stored = stored_points(store, specs)
    return stored, sum(finished(store, n, size) for n in stored)


async def evaluate_points(
    store: Store,
    specs: list[ExperimentSpec],
    spec_dir: Path,
    hub: ModelHub,
    size: int,
    *,
    on_episode: Progress | None = None,
    on_skipped: Callable[[int], None] | None = None,
    on_point: Callable[[str, Means], None] | None = None,
    stop: threading.Event | None = None,
) -> Evaluation:
    """Play each distinct point's grid (continuing one left half-run, reading back one
    finished before) and take its means; stops between episodes when `stop` is set.
    `on_episode` hears each episode, `on_skipped` the episodes of a point finished
    before, `on_point` each point's means as they are known."""
    from disputelab.experiments.sensitivity import Hooks
    from disputelab.experiments.sensitivity import evaluate_points as evaluate

    hooks = Hooks(on_episode, on_skipped, on_point)
    return await evaluate(store, specs, spec_dir, hub, size, hooks, stop)


def unknown_metrics(wanted: tuple[str, ...], found: Means) -> list[str]:
    """The metrics of `wanted` that a point's means do not have."""
    from disputelab.experiments.sensitivity import unknown_metrics as unknown

    return unknown(wanted, found)


def rank(design: Design, found: Evaluation, wanted: tuple[str, ...] = ()) -> list[Ranking]:
    """Per metric of `wanted` (every metric when empty) and mediator arm, the parameters
    most influential first."""
    from disputelab.experiments.sensitivity import outputs, rankings

    means = [m for m in found.means if m is not None]
    return rankings(design, outputs(means, wanted))


def label(output: Output, single: bool) -> str:
    """A metric's name, with the mediator arm when the grid has more than one."""
    mediator, metric = output
    return metric if single else f"{metric} ({mediator})"


def _single(ranked: list[Ranking]) -> bool:
    return len({r.output[0] for r in ranked}) <= 1


ROUNDING_NOISE = 1e-9
"""Below this an index or interval is float rounding (a bootstrap over equal effects gives
1e-14, say), shown as 0."""


def _fmt(value: float, ci: bool = False) -> str:
    if math.isnan(value):
        return "n/a"
    shown = 0.0 if abs(value) < ROUNDING_NOISE else value
    return f"± {shown:.3g}" if ci else f"{shown:.3g}"


def sensitivity_markdown(
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
        if r.note:
            lines += ["", f"Note: {r.note}."]
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


def write_results(folder: Path, text: str, design: Design, ranked: list[Ranking]) -> list[Path]:
    """The table (`sensitivity.md`, the markdown `text`), its rows (`sensitivity.csv`)
    and a plot (`sensitivity.png`) in `folder`; WriteError when it cannot be written."""
    paths = [folder / f"sensitivity.{ext}" for ext in ("md", "csv", "png")]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic.write_text(paths[0], text)
        _write_csv(paths[1], design, ranked)
        _plot(paths[2], design, ranked)
    except OSError as exc:
        raise WriteError(f"cannot write to {folder}: {atomic.why_not_written(exc)}") from None
    return paths


def _write_csv(path: Path, design: Design, ranked: list[Ranking]) -> None:
    from disputelab.experiments.sensitivity import COLUMNS

    columns = COLUMNS[design.method]
    bounds = {f.name: f for f in design.factors}
    with atomic.replacing(path, "w", newline="") as fh:
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
    with atomic.replacing(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=110)
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
