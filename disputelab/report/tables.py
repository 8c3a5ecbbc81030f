"""Experiment tables in the papers' style: rows are condition x mediator, columns metrics,
each cell a mean with a 95% bootstrap CI and a significance marker against the reference
row (the spec's first condition, same mediator), by a paired Wilcoxon signed-rank test on
episodes matched by scenario and replicate."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from disputelab.evaluation.stats import bootstrap_ci, wilcoxon
from disputelab.store.sqlite import Store

METRICS = (
    "consensus_gain",
    "intervention_timeliness",
    "intervention_effectiveness",
    "final_consensus",
    "resolved",
)
SCALE = {"final_consensus": 100.0, "resolved": 100.0}  # shown as percentages
DECIMALS = {"speaking_gini": 2, "quietest_share": 2, "spoken_motivation": 2}  # else 1


def _marker(p: float) -> str:
    if math.isnan(p):
        return ""
    return "††" if p < 0.01 else "†" if p < 0.05 else ""


TURN_TAKING_METRICS = (
    "speaking_gini",
    "quietest_share",
    "interruptions",
    "spoken_motivation",
)

Grid = dict[tuple[str, str], dict[tuple[str, int], dict[str, float]]]


def experiment_rows(store: Store, run_id: str, evaluator: str = "socrates-oracle") -> Grid:
    """(condition, mediator) -> (scenario, replicate) -> metric -> value."""
    return experiment_grids(store, run_id, (evaluator,))[evaluator]


def experiment_grids(store: Store, run_id: str, evaluators: tuple[str, ...]) -> dict[str, Grid]:
    """`experiment_rows` for several evaluators, reading each episode's scores once."""
    grids: dict[str, Grid] = {e: defaultdict(dict) for e in evaluators}
    for eid in sorted(store.complete_episode_ids(run_id)):
        _, sid, cond, med, rep = eid.split("/")
        values: dict[str, dict[str, float]] = {e: {} for e in evaluators}
        for s in store.scores(eid):
            if s.evaluator in values:
                values[s.evaluator][s.metric] = s.value
        for e in evaluators:
            grids[e][(cond, med)][(sid, int(rep.removeprefix("r")))] = values[e]
    return grids


def experiment_markdown(store: Store, run_id: str, conditions: list[str]) -> str:
    grids = experiment_grids(store, run_id, ("socrates-oracle", "turn-taking"))
    grid = grids["socrates-oracle"]
    lines = [f"# Experiment `{run_id}`", "", *_table(grid, conditions, METRICS)]
    lines += [
        "",
        f"Cells: mean ± half-width of the 95% bootstrap CI over episodes. "
        f"† p < 0.05, †† p < 0.01 against `{conditions[0] if conditions else '-'}` with "
        "the same mediator: paired Wilcoxon signed-rank test, episodes matched by "
        "scenario and replicate. final_consensus and resolved in %; NaN metrics "
        "(undefined, e.g. timeliness without drops) are left out of the means.",
    ]
    turns = turn_taking_markdown(grids["turn-taking"], conditions)
    axes = axis_markdown(grid, conditions)
    return "\n".join(lines) + "\n" + "".join("\n" + t for t in (turns, axes) if t)


def turn_taking_markdown(grid: Grid, conditions: list[str]) -> str:
    """Who held the floor, per condition and mediator: only for motivated turn-taking,
    where the shares are not equal by construction."""
    if not any("interruptions" in v for cells in grid.values() for v in cells.values()):
        return ""
    lines = ["## Turn-taking (motivated)", "", *_table(grid, conditions, TURN_TAKING_METRICS)]
    lines += [
        "",
        "speaking_gini: Gini coefficient of the parties' shares of party turns (0 = equal); "
        "quietest_share: the share of the party that spoke least; interruptions: turns "
        "taken from the predicted speaker; spoken_motivation: mean motivation (1-5) of "
        "the voiced thoughts. Cells and markers as above.",
    ]
    return "\n".join(lines) + "\n"


def _table(grid: Grid, conditions: list[str], metrics: tuple[str, ...]) -> list[str]:
    order = {c: i for i, c in enumerate(conditions)}
    keys = sorted(grid, key=lambda k: (k[1] != "none", k[1], order.get(k[0], 99), k[0]))
    lines = [
        "| condition | mediator | n | " + " | ".join(metrics) + " |",
        "|---|---|---|" + "---|" * len(metrics),
    ]
    for cond, med in keys:
        cells = grid[(cond, med)]
        ref = grid.get((conditions[0], med)) if conditions else None
        row = [cond, med, str(len(cells))]
        for m in metrics:
            xs = [v.get(m, math.nan) * SCALE.get(m, 1.0) for v in cells.values()]
            est = bootstrap_ci(xs)
            if math.isnan(est.mean):
                row.append("-")
                continue
            d = DECIMALS.get(m, 1)
            text = f"{est.mean:.{d}f} ± {(est.high - est.low) / 2:.{d}f}"
            if ref is not None and cond != conditions[0]:
                common = sorted(set(cells) & set(ref))
                test = wilcoxon(
                    [cells[k].get(m, math.nan) for k in common],
                    [ref[k].get(m, math.nan) for k in common],
                )
                # A partial run's cells miss some pairs: no marker rather than a test on
                # whichever episodes happened to finish.
                text += _marker(test.p_value) if set(cells) == set(ref) else ""
            row.append(text)
        lines.append("| " + " | ".join(row) + " |")
    return lines


def axis_of(condition: str) -> str:
    """The probing axis a condition varies: its name, or names joined by '+'."""
    names = [part.split(":")[0].strip() for part in condition.split(",") if part.strip()]
    return "+".join(dict.fromkeys(names)) or "general"


def axis_gains(
    grid: dict[tuple[str, str], dict[tuple[str, int], dict[str, float]]],
    conditions: list[str],
    mediator: str,
) -> dict[str, list[tuple[str, float, float]]]:
    """axis -> [(condition, mean consensus gain, shift from the reference condition)]."""
    reference = conditions[0]

    def mean_gain(cond: str) -> float:
        vals = [v.get("consensus_gain", math.nan) for v in grid.get((cond, mediator), {}).values()]
        return bootstrap_ci(vals).mean

    ref = mean_gain(reference)
    out: dict[str, list[tuple[str, float, float]]] = {}
    for cond in conditions[1:]:
        if (cond, mediator) in grid:
            g = mean_gain(cond)
            out.setdefault(axis_of(cond), []).append((cond, g, g - ref))
    return out


def axis_markdown(grid: Grid, conditions: list[str]) -> str:
    """Consensus gain per socio-cognitive axis and condition, as shifts from the first
    condition (SoCRATES Figure 3), with a paired Wilcoxon test per condition."""
    mediators = sorted({m for (_, m) in grid if m != "none"})
    if len(conditions) < 2 or not mediators:
        return ""
    ref_name = conditions[0]
    lines = [
        f"## Consensus gain by axis (shift from `{ref_name}`, as in SoCRATES Figure 3)",
        "",
        "| axis | condition | mediator | consensus_gain | shift |",
        "|---|---|---|---|---|",
    ]
    for med in mediators:
        ref = grid.get((ref_name, med), {})
        base = bootstrap_ci([v.get("consensus_gain", math.nan) for v in ref.values()])
        lines.append(f"| (reference) | {ref_name} | {med} | {base.mean:.1f} | - |")
        for axis, rows in axis_gains(grid, conditions, med).items():
            for cond, gain, shift in rows:
                cells = grid[(cond, med)]
                est = bootstrap_ci([v.get("consensus_gain", math.nan) for v in cells.values()])
                common = sorted(set(cells) & set(ref))
                test = wilcoxon(
                    [cells[k].get("consensus_gain", math.nan) for k in common],
                    [ref[k].get("consensus_gain", math.nan) for k in common],
                )
                lines.append(
                    f"| {axis} | {cond} | {med} | {gain:.1f} ± {(est.high - est.low) / 2:.1f} "
                    f"| {shift:+.1f}{_marker(test.p_value) if set(cells) == set(ref) else ''} |"
                )
            if len(rows) > 1:
                mean_shift = sum(r[2] for r in rows) / len(rows)
                lines.append(f"| {axis} | (axis mean) | {med} | | {mean_shift:+.1f} |")
    lines += [
        "",
        "Shift: the condition's mean consensus gain minus the reference's, same mediator. "
        "† p < 0.05, †† p < 0.01: paired Wilcoxon signed-rank test on consensus gain, "
        "episodes matched by scenario and replicate.",
    ]
    return "\n".join(lines) + "\n"


def spec_conditions(config: dict[str, Any]) -> list[str]:
    return list(config.get("conditions") or ["general"])


def experiment_markdown_for(store: Store, run_id: str, config: dict[str, Any]) -> str:
    """The roundtable layout's entry point: `(store, run_id, config) -> markdown`."""
    return experiment_markdown(store, run_id, spec_conditions(config))
