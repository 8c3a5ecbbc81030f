"""Stored scores as grids: (condition, mediator) -> (scenario, replicate) -> metric ->
value, with the reason for every undefined value, and the cells of the papers' tables made
from them: rows are condition x mediator, columns metrics, each cell a mean with a 95% CI
and a significance marker against the reference row (the spec's first condition, same
mediator).

Inference follows the design: replicates of one scenario are not independent, so CIs
resample scenarios (a cluster bootstrap) and tests run on scenario means, after pairing
each episode with the reference episode of the same scenario and replicate (same seed).
Markers come from p-values Holm-adjusted across all the tests of one table: against the
reference row (†) and, for a mediated row, against the same condition without a mediator
(‡), one family.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from disputelab.evaluation.averaging import averaged_value
from disputelab.evaluation.inference import Key, cluster_ci, paired_scenario_test
from disputelab.evaluation.stats import Estimate, bootstrap_ci
from disputelab.store.sqlite import Store
from disputelab.tables.cells import (
    AGAINST_REFERENCE,
    AGAINST_UNMEDIATED,
    NOT_SCORED,
    Markers,
    Undefined,
    estimate,
    estimate_text,
)

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
    # One query for the run, read alongside the episodes in the same order: asking
    # episode by episode took a tenth of an HTML report.
    scored = store.each_episodes_scores(run_id, evaluators)
    next_scored = next(scored, None)
    for eid in sorted(store.complete_episode_ids(run_id)):
        while next_scored is not None and next_scored[0] < eid:
            next_scored = next(scored, None)
        mine = next_scored[1] if next_scored is not None and next_scored[0] == eid else []
        _, sid, cond, med, rep = eid.split("/")
        key = (sid, int(rep.removeprefix("r")))
        values: dict[str, dict[str, float]] = {e: {} for e in evaluators}
        for s in mine:
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


UNDEFINED_GAP = 0.20
"""A cell whose share of undefined episodes differs from its reference's by more than
this is flagged: its mean averages different episodes from the reference's."""
GAP_FLAG = "⚑"


def undefined_share(values: dict[Key, float]) -> float:
    return sum(math.isnan(x) for x in values.values()) / len(values) if values else math.nan


def undefined_gap(xs: dict[Key, float], ref: dict[Key, float] | None) -> str:
    """The flag for a cell whose undefined share is more than 20 points off its reference's."""
    if ref is None or not xs or not ref:
        return ""
    return GAP_FLAG if abs(undefined_share(xs) - undefined_share(ref)) > UNDEFINED_GAP else ""


def gap_footnote(lines: list[str]) -> list[str]:
    if not any(GAP_FLAG in x for x in lines):
        return []
    return [
        f"{GAP_FLAG} the cell's share of undefined episodes differs from its reference row's "
        f"by more than {100 * UNDEFINED_GAP:.0f} points: its mean and test average "
        "different episodes from the reference's."
    ]


def _test_mark(
    xs: dict[Key, float],
    other: dict[Key, dict[str, float]] | None,
    metric: str,
    marks: Markers,
    symbol: str,
) -> str:
    # A partial run's cells miss some pairs: no marker rather than a test on whichever
    # episodes happened to finish.
    if other is None or set(xs) != set(other):
        return ""
    test = paired_scenario_test(xs, metric_values(other, metric), metric in BINARY)
    return marks.mark(test, symbol)


def cell_text(
    scores: Scores,
    cell: tuple[str, str],
    ref: tuple[str, str] | None,
    metric: str,
    marks: Markers,
    undefined: Undefined,
    unmediated: tuple[str, str] | None = None,
) -> str:
    """Mean ± CI, the markers of its tests against `ref` (†) and against the same
    condition without a mediator (`unmediated`, ‡), its undefined episodes, and a flag
    when their share is far from the reference's."""
    cells = scores.values[cell]
    if all(metric not in v for v in cells.values()):
        return "-"  # not a metric of this cell (say, consensus gain without a mediator)
    xs = metric_values(cells, metric)
    shown = metric_values(cells, metric, SCALE.get(metric, 1.0))
    text = estimate_text(estimate(shown), f".{DECIMALS.get(metric, 1)}f")
    if text == "-":
        return text + undefined.note([scores.reason(cell, k, metric) for k in xs])
    reference = scores.values.get(ref) if ref is not None else None
    text += _test_mark(xs, reference, metric, marks, AGAINST_REFERENCE)
    bare = scores.values.get(unmediated) if unmediated is not None else None
    if bare is not None and any(metric in v for v in bare.values()):
        text += _test_mark(xs, bare, metric, marks, AGAINST_UNMEDIATED)
    missing = [scores.reason(cell, k, metric) for k, x in xs.items() if math.isnan(x)]
    gap = undefined_gap(xs, metric_values(reference, metric) if reference else None)
    return text + undefined.note(missing) + gap


UNMEDIATED = "none"


def unmediated(mediator: str) -> bool:
    """Whether a grid's mediator column is the unmediated twin's: `none`, or `none~WORLD`
    in a run played on a `worlds:` axis."""
    return mediator.partition("~")[0] == UNMEDIATED


def twin_of(mediator: str) -> str:
    """The unmediated twin's column of a mediator's, in the same world."""
    _, sep, world = mediator.partition("~")
    return UNMEDIATED + sep + world


def metric_table(
    scores: Scores, conditions: list[str], metrics: tuple[str, ...]
) -> tuple[list[str], list[str]]:
    """The table's lines, and its footnotes: the markers' adjustment (one family for the
    whole table), undefined episodes and the cells flagged for them."""
    grid = scores.values
    order = {c: i for i, c in enumerate(conditions)}
    keys = sorted(grid, key=lambda k: (not unmediated(k[1]), k[1], order.get(k[0], 99), k[0]))
    marks, undefined = Markers(), Undefined()
    lines = [
        "| condition | mediator | n | " + " | ".join(metrics) + " |",
        "|---|---|---|" + "---|" * len(metrics),
    ]
    for cond, med in keys:
        tested = bool(conditions) and cond != conditions[0]
        ref = (conditions[0], med) if tested else None
        twin = (cond, twin_of(med))
        bare = twin if not unmediated(med) and twin in grid else None
        row = [cond, med, str(len(grid[(cond, med)]))]
        row += [cell_text(scores, (cond, med), ref, m, marks, undefined, bare) for m in metrics]
        lines.append("| " + " | ".join(row) + " |")
    notes = [marks.footnote(), undefined.footnote(), *gap_footnote(lines)]
    return marks.resolve(lines), [n for n in notes if n]


def axis_of(condition: str) -> str:
    """The probing axis a condition varies: its name, or names joined by '+'."""
    names = [part.split(":")[0].strip() for part in condition.split(",") if part.strip()]
    return "+".join(dict.fromkeys(names)) or "general"


def paired_differences(xs: dict[Key, float], ys: dict[Key, float]) -> tuple[list[float], list[str]]:
    """x - y for each episode key where both are defined (same scenario and replicate,
    hence the same seed), and each difference's scenario: the paired effect's data."""
    keys = [k for k in sorted(xs.keys() & ys.keys()) if not math.isnan(xs[k] - ys[k])]
    return [xs[k] - ys[k] for k in keys], [k[0] for k in keys]


def paired_effect(xs: dict[Key, float], ys: dict[Key, float]) -> Estimate:
    """Mean of the paired differences x - y, with its cluster t CI over scenarios."""
    diffs, clusters = paired_differences(xs, ys)
    return cluster_ci(diffs, clusters)


def axis_gains(
    grid: dict[tuple[str, str], dict[tuple[str, int], dict[str, float]]],
    conditions: list[str],
    mediator: str,
) -> dict[str, list[tuple[str, float, float]]]:
    """axis -> [(condition, mean consensus gain, paired effect against the reference)]:
    the effect is the mean over episode pairs of the same scenario and replicate where
    both gains are defined, not a difference of means over different episodes."""
    gain = "consensus_gain"
    ref = metric_values(grid.get((conditions[0], mediator), {}), gain)
    out: dict[str, list[tuple[str, float, float]]] = {}
    for cond in conditions[1:]:
        if (cond, mediator) in grid:
            xs = metric_values(grid[(cond, mediator)], gain)
            mean = bootstrap_ci(list(xs.values())).mean
            out.setdefault(axis_of(cond), []).append((cond, mean, paired_effect(xs, ref).mean))
    return out


def spec_conditions(config: dict[str, Any]) -> list[str]:
    return list(config.get("conditions") or ["general"])
