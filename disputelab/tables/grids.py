"""Stored scores as grids: (condition, mediator) -> (scenario, replicate) -> metric ->
value, with the reason for every undefined value, and the cells of the papers' tables made
from them: rows are condition x mediator, columns metrics, each cell a mean with a 95% CI
and a significance marker against the reference row (the spec's first condition, same
mediator).

Inference follows the design: replicates of one scenario are not independent, so CIs
resample scenarios (a cluster bootstrap) and tests run on scenario means, after pairing
each episode with the reference episode of the same scenario and replicate (same seed).
Markers come from p-values Holm-adjusted across all the tests of one table.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from disputelab.evaluation.averaging import averaged_value
from disputelab.evaluation.inference import Key, paired_scenario_test
from disputelab.evaluation.stats import bootstrap_ci
from disputelab.store.sqlite import Store
from disputelab.tables.cells import NOT_SCORED, Markers, Undefined, estimate, estimate_text

SCALE = {"final_consensus": 100.0, "resolved": 100.0}  # shown as percentages


DECIMALS = {"speaking_gini": 2, "quietest_share": 2, "spoken_motivation": 2}  # else 1


BINARY = {"resolved"}  # tested with McNemar where each scenario has one replicate


Grid = dict[tuple[str, str], dict[Key, dict[str, float]]]


# Where a table's consensus values come from, as its heading says.
SOURCES = {
    "oracle": "oracle (the rule parties' true, hidden stances)",
    "self-report": "self-report tracker (the stances parties state each turn; no judge)",
    "topic-localized": "topic-localized judge tracker (SoCRATES)",
    "per-turn": "per-turn judge tracker (ProMediate)",
}


@dataclass
class Scores:
    """One evaluator's scores: (condition, mediator) -> (scenario, replicate) -> metric ->
    value, and for each NaN value, why it is undefined."""

    values: Grid = field(default_factory=lambda: defaultdict(dict))
    why: dict[tuple[str, str], dict[Key, dict[str, str]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(dict))
    )

    def reason(self, cell: tuple[str, str], key: Key, metric: str) -> str:
        return self.why.get(cell, {}).get(key, {}).get(metric, NOT_SCORED)


def experiment_rows(store: Store, run_id: str, evaluator: str = "socrates-oracle") -> Grid:
    """(condition, mediator) -> (scenario, replicate) -> metric -> value."""
    return experiment_grids(store, run_id, (evaluator,))[evaluator]


def experiment_grids(store: Store, run_id: str, evaluators: tuple[str, ...]) -> dict[str, Grid]:
    """`experiment_rows` for several evaluators, reading each episode's scores once."""
    return {e: s.values for e, s in experiment_scores(store, run_id, evaluators).items()}


def experiment_scores(store: Store, run_id: str, evaluators: tuple[str, ...]) -> dict[str, Scores]:
    """Every complete episode's scores by evaluator, with the reason for each NaN."""
    out = {e: Scores() for e in evaluators}
    for eid in sorted(store.complete_episode_ids(run_id)):
        _, sid, cond, med, rep = eid.split("/")
        key = (sid, int(rep.removeprefix("r")))
        values: dict[str, dict[str, float]] = {e: {} for e in evaluators}
        for s in store.scores(eid):
            if s.evaluator not in values:
                continue
            value, why = averaged_value(s)
            if why is not None:
                out[s.evaluator].why[(cond, med)][key][s.metric] = why
            values[s.evaluator][s.metric] = value
        for e in evaluators:
            out[e].values[(cond, med)][key] = values[e]
    return out


def source_line(tracker: str) -> str:
    """The sentence that says where a table's consensus values come from."""
    return f"Consensus source: **{SOURCES.get(tracker, tracker)}**."


def metric_values(
    cells: dict[Key, dict[str, float]], metric: str, scale: float = 1.0
) -> dict[Key, float]:
    return {k: v.get(metric, math.nan) * scale for k, v in cells.items()}


def cell_text(
    scores: Scores,
    cell: tuple[str, str],
    ref: tuple[str, str] | None,
    metric: str,
    marks: Markers,
    undefined: Undefined,
) -> str:
    """Mean ± CI, the marker of its test against `ref`, and its undefined episodes."""
    cells = scores.values[cell]
    if all(metric not in v for v in cells.values()):
        return "-"  # not a metric of this cell (say, consensus gain without a mediator)
    xs = metric_values(cells, metric)
    shown = metric_values(cells, metric, SCALE.get(metric, 1.0))
    text = estimate_text(estimate(shown), f".{DECIMALS.get(metric, 1)}f")
    reference = scores.values.get(ref) if ref is not None else None
    # A partial run's cells miss some pairs: no marker rather than a test on whichever
    # episodes happened to finish.
    if reference is not None and text != "-" and set(cells) == set(reference):
        test = paired_scenario_test(xs, metric_values(reference, metric), metric in BINARY)
        text += marks.mark(test)
    missing = [scores.reason(cell, k, metric) for k, x in xs.items() if math.isnan(x)]
    return text + undefined.note(missing)


def metric_table(
    scores: Scores, conditions: list[str], metrics: tuple[str, ...]
) -> tuple[list[str], list[str]]:
    """The table's lines, and its footnotes: the markers' adjustment, undefined episodes."""
    grid = scores.values
    order = {c: i for i, c in enumerate(conditions)}
    keys = sorted(grid, key=lambda k: (k[1] != "none", k[1], order.get(k[0], 99), k[0]))
    marks, undefined = Markers(), Undefined()
    lines = [
        "| condition | mediator | n | " + " | ".join(metrics) + " |",
        "|---|---|---|" + "---|" * len(metrics),
    ]
    for cond, med in keys:
        tested = bool(conditions) and cond != conditions[0]
        ref = (conditions[0], med) if tested else None
        row = [cond, med, str(len(grid[(cond, med)]))]
        row += [cell_text(scores, (cond, med), ref, m, marks, undefined) for m in metrics]
        lines.append("| " + " | ".join(row) + " |")
    notes = [marks.footnote(), undefined.footnote()]
    return marks.resolve(lines), [n for n in notes if n]


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


def spec_conditions(config: dict[str, Any]) -> list[str]:
    return list(config.get("conditions") or ["general"])
