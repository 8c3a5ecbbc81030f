"""Experiment plots (matplotlib): PNG files for `report --plots`, inline SVG for the HTML
report.

- `trajectories`: mean oracle consensus per party turn, mediated vs unmediated, one
  panel per condition.
- `gain_shift`: each condition's mean consensus gain minus the reference condition's,
  per mediator, as in SoCRATES Figure 3, bars coloured by socio-cognitive axis;
- `axis_gain`: the same shift averaged over each axis's conditions, with the spread
  of its conditions as error bars.
"""

from __future__ import annotations

import io
import math
from collections import defaultdict
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display needed

import matplotlib.pyplot as plt
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from disputelab import atomic
from disputelab.consensus import consensus_score
from disputelab.episode import Episode
from disputelab.store.sqlite import Store
from disputelab.tables.grids import Grid, axis_gains, axis_of, experiment_rows, unmediated

Curves = dict[tuple[str, str], list[list[float]]]  # (condition, mediator) -> curves


def mean_curve(curves: list[list[float]]) -> list[float]:
    length = max(len(c) for c in curves)
    out = []
    for i in range(length):
        # An episode that ended early keeps its final value (the trajectory is frozen).
        vals = [c[min(i, len(c) - 1)] for c in curves]
        out.append(sum(vals) / len(vals))
    return out


def add_curve(curves: Curves, episode_id: str, ep: Episode) -> None:
    """File an experiment episode's consensus after each party turn under its cell."""
    if ep.initial_consensus is None:
        return
    _, _, cond, med, _ = episode_id.split("/")
    curve = [consensus_score(ep.initial_consensus)]
    curve += [
        consensus_score(t.consensus)
        for t in ep.turns
        if t.role == "party" and t.consensus is not None
    ]
    curves[(cond, med)].append(curve)


def trajectory_curves(store: Store, run_id: str) -> Curves:
    curves: Curves = defaultdict(list)
    for eid in sorted(store.complete_episode_ids(run_id)):
        add_curve(curves, eid, store.load_episode(eid).episode)
    return curves


def trajectories_figure(curves: Curves, conditions: list[str]) -> Figure:
    conds = [c for c in conditions if any(k[0] == c for k in curves)]
    ncols = min(5, max(1, len(conds)))
    nrows = max(1, math.ceil(len(conds) / ncols))
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(3.4 * ncols, 2.8 * nrows), sharey=True, squeeze=False
    )
    flat = [ax for row in axes for ax in row]
    for ax in flat[len(conds) :]:
        ax.set_visible(False)
    for ax, cond in zip(flat, conds, strict=False):
        for (c, med), cs in sorted(curves.items()):
            if c != cond:
                continue
            label = "unmediated" if med == "none" else f"mediator: {med}"
            ax.plot(
                mean_curve(cs),
                label=f"{label} (n={len(cs)})",
                linestyle="--" if med == "none" else "-",
            )
        ax.set_title(cond, fontsize=9)
        ax.set_xlabel("party turn")
        ax.set_ylim(0, 1.02)
    for row in axes:
        row[0].set_ylabel("consensus (oracle)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def _save_png(fig: Figure, path: Path) -> Path:
    with atomic.replacing(path, "wb") as fh:  # a killed write leaves the old plot
        fig.savefig(fh, format="png", dpi=120)
    plt.close(fig)
    return path


def figure_svg(fig: Figure) -> bytes:
    """The figure as SVG with its text kept as text (smaller than glyph outlines), and no
    creation date, so the same data give the same bytes."""
    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "disputelab"}):
        fig.savefig(buf, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buf.getvalue()


def trajectories_png(store: Store, run_id: str, conditions: list[str], path: Path) -> Path:
    return _save_png(trajectories_figure(trajectory_curves(store, run_id), conditions), path)


def gain_shift_png(store: Store, run_id: str, conditions: list[str], path: Path) -> Path:
    return _save_png(gain_shift_figure(experiment_rows(store, run_id), conditions), path)


def gain_shift_figure(grid: Grid, conditions: list[str]) -> Figure:
    mediators = sorted({m for (_, m) in grid if not unmediated(m)})
    reference = conditions[0]
    fig, ax = plt.subplots(figsize=(min(14, max(4, 0.8 * len(conditions))), 3.4))
    width = 0.8 / max(1, len(mediators))
    for j, med in enumerate(mediators):
        ref_vals = [
            v.get("consensus_gain", math.nan) for v in grid.get((reference, med), {}).values()
        ]
        ref_vals = [x for x in ref_vals if not math.isnan(x)]
        ref = sum(ref_vals) / len(ref_vals) if ref_vals else math.nan
        shifts = []
        for cond in conditions[1:]:
            vals = [v.get("consensus_gain", math.nan) for v in grid.get((cond, med), {}).values()]
            vals = [x for x in vals if not math.isnan(x)]
            shifts.append(sum(vals) / len(vals) - ref if vals else math.nan)
        xs = [i + j * width for i in range(len(shifts))]
        colours = [_colour(axis_of(c)) for c in conditions[1:]]
        ax.bar(
            xs,
            shifts,
            width=width,
            color=colours,
            edgecolor="black",
            linewidth=0.4,
            hatch=HATCHES[j % len(HATCHES)],
        )
    # The legend says what the colours and hatches mean: one swatch per axis, and one per
    # mediator when there are several.
    axes = list(dict.fromkeys(axis_of(c) for c in conditions[1:]))
    handles = [Patch(facecolor=_colour(a), edgecolor="black", label=a) for a in axes]
    if len(mediators) > 1:
        handles += [
            Patch(
                facecolor="white",
                edgecolor="black",
                hatch=HATCHES[j % len(HATCHES)],
                label=f"mediator: {m}",
            )
            for j, m in enumerate(mediators)
        ]
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(conditions) - 1)])
    ax.set_xticklabels(conditions[1:], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(f"consensus gain shift vs {reference}")
    ax.legend(handles=handles, fontsize=7, title="axis", title_fontsize=7)
    fig.tight_layout()
    return fig


HATCHES = ("", "//", "..", "xx")
_AXES: dict[str, int] = {}


def _colour(axis: str) -> str:
    """A stable colour per axis, in order of first appearance."""
    i = _AXES.setdefault(axis, len(_AXES))
    return str(to_hex(plt.get_cmap("tab10")(i % 10)))


def axis_gain_png(store: Store, run_id: str, conditions: list[str], path: Path) -> Path:
    return _save_png(axis_gain_figure(experiment_rows(store, run_id), conditions), path)


def axis_gain_figure(grid: Grid, conditions: list[str]) -> Figure:
    mediators = sorted({m for (_, m) in grid if not unmediated(m)})
    fig, ax = plt.subplots(figsize=(6, 3.2))
    width = 0.8 / max(1, len(mediators))
    names: list[str] = []
    for j, med in enumerate(mediators):
        axes = axis_gains(grid, conditions, med)
        names = list(axes)
        means = [sum(r[2] for r in rows) / len(rows) for rows in axes.values()]
        lows = [m - min(r[2] for r in rows) for m, rows in zip(means, axes.values(), strict=True)]
        highs = [max(r[2] for r in rows) - m for m, rows in zip(means, axes.values(), strict=True)]
        ax.bar(
            [i + j * width for i in range(len(means))],
            means,
            width=width,
            yerr=[lows, highs],
            capsize=3,
            color=[_colour(a) for a in names],
            label=f"mediator: {med}",
        )
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(names))])
    ax.set_xticklabels(names, fontsize=8)
    ax.set_ylabel(f"mean consensus-gain shift vs {conditions[0]}")
    ax.set_title("per axis: mean over its conditions (bars: their range)", fontsize=8)
    fig.tight_layout()
    return fig


def experiment_figures(
    store: Store, run_id: str, conditions: list[str], curves: Curves | None = None
) -> list[tuple[str, Figure]]:
    """The experiment's figures by name: the trajectories when episodes track consensus
    turn by turn (the protocols over topics); the gain shifts when there are several
    conditions and consensus gains to compare. None for a protocol that tracks neither
    (a price bargained, a settlement). `curves` saves reading every episode again when
    the caller has already filed them."""
    if curves is None:
        curves = trajectory_curves(store, run_id)
    out = [("trajectories", trajectories_figure(curves, conditions))] if curves else []
    grid = experiment_rows(store, run_id)
    gains = any("consensus_gain" in v for cell in grid.values() for v in cell.values())
    if len(conditions) > 1 and gains:
        out.append(("gain_shift", gain_shift_figure(grid, conditions)))
        out.append(("axis_gain", axis_gain_figure(grid, conditions)))
    return out


def write_plots(store: Store, run_id: str, conditions: list[str], folder: Path) -> list[Path]:
    """The experiment's figures as PNG files in `folder`; none (and no folder made) when
    no figure applies to the run."""
    figures = experiment_figures(store, run_id, conditions)
    if figures:
        folder.mkdir(parents=True, exist_ok=True)
    return [_save_png(fig, folder / f"{name}.png") for name, fig in figures]
