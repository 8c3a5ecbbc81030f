"""Experiment tables in the papers' style: rows are condition x mediator, columns metrics,
each cell a mean with a 95% CI and a significance marker against the reference row (the
spec's first condition, same mediator).

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
from disputelab.report.cells import NOT_SCORED, Markers, Undefined, estimate, estimate_text
from disputelab.report.socrates_tables import (
    BEHAVIOUR,
    behaviour_markdown,
    domain_markdown,
    scenario_domains,
)
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
BINARY = {"resolved"}  # tested with McNemar where each scenario has one replicate
TURN_TAKING_METRICS = (
    "speaking_gini",
    "quietest_share",
    "interruptions",
    "spoken_motivation",
)

Grid = dict[tuple[str, str], dict[Key, dict[str, float]]]

ORACLE = "socrates-oracle"
# Where a table's consensus values come from, as its heading says.
SOURCES = {
    "oracle": "oracle (the rule parties' true, hidden stances)",
    "self-report": "self-report tracker (the stances parties state each turn; no judge)",
    "topic-localized": "topic-localized judge tracker (SoCRATES)",
    "per-turn": "per-turn judge tracker (ProMediate)",
}
# Read from the protocol's own evaluator whatever the consensus source.
OUTCOME_METRICS = ("resolved", "party_turns", "interventions", *BEHAVIOUR)


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


def consensus_scores(store: Store, run_id: str, tracker: str = "oracle") -> Scores:
    """The scores a roundtable table shows: consensus metrics from `tracker` (the
    oracle's are the protocol's own), outcomes such as `resolved` from the protocol's
    evaluator whatever the source."""
    if tracker == "oracle":
        return experiment_scores(store, run_id, (ORACLE,))[ORACLE]
    stored = f"tracker:{tracker}"
    both = experiment_scores(store, run_id, (ORACLE, stored))
    merged, outcome = both[stored], both[ORACLE]
    for cell, cases in outcome.values.items():
        for key, values in cases.items():
            into = merged.values[cell].setdefault(key, {})
            for metric in OUTCOME_METRICS:
                if metric in values:
                    into[metric] = values[metric]
                    why = outcome.why.get(cell, {}).get(key, {}).get(metric)
                    if why is not None:
                        merged.why[cell][key][metric] = why
    return merged


def source_line(tracker: str) -> str:
    """The sentence that says where a table's consensus values come from."""
    return f"Consensus source: **{SOURCES.get(tracker, tracker)}**."


def experiment_markdown(
    store: Store, run_id: str, conditions: list[str], tracker: str = "oracle"
) -> str:
    main = consensus_scores(store, run_id, tracker)
    turn_taking = experiment_scores(store, run_id, ("turn-taking",))["turn-taking"]
    ref = conditions[0] if conditions else "-"
    table, notes = metric_table(main, conditions, METRICS)
    lines = [f"# Experiment `{run_id}`", "", source_line(tracker), "", *table]
    lines += [
        "",
        "Cells: mean ± half-width of the 95% CI from a cluster bootstrap that resamples "
        "scenarios, since replicates of one scenario are not independent (n/a with fewer "
        f"than two values or a single scenario). Tests against `{ref}` with the same "
        "mediator pair each episode with the one of the same scenario and replicate (same "
        "seed), average the pairs per scenario, and run a paired Wilcoxon signed-rank test "
        "on the scenario means (McNemar on resolved where each scenario has one replicate). "
        "final_consensus and resolved in %; NaN metrics (undefined, e.g. timeliness without "
        "drops) are left out of the means, and consensus_gain averages normalised gains "
        "only.",
        *(x for n in notes for x in ("", n)),
    ]
    turns = turn_taking_markdown(turn_taking, conditions)
    axes = axis_markdown(main, conditions, tracker)
    behaviour = behaviour_markdown(main.values)
    domains = domain_markdown(main.values, scenario_domains(store, run_id), source_line(tracker))
    extra = (turns, axes, behaviour, domains)
    return "\n".join(lines) + "\n" + "".join("\n" + t for t in extra if t)


def turn_taking_markdown(scores: Scores, conditions: list[str]) -> str:
    """Who held the floor, per condition and mediator: only for motivated turn-taking,
    where the shares are not equal by construction."""
    grid = scores.values
    if not any("interruptions" in v for cells in grid.values() for v in cells.values()):
        return ""
    table, notes = metric_table(scores, conditions, TURN_TAKING_METRICS)
    lines = ["## Turn-taking (motivated)", "", *table]
    lines += [
        "",
        "speaking_gini: Gini coefficient of the parties' shares of party turns (0 = equal); "
        "quietest_share: the share of the party that spoke least; interruptions: turns "
        "taken from the predicted speaker; spoken_motivation: mean motivation (1-5) of "
        "the voiced thoughts. Cells and tests as above.",
        *(x for n in notes for x in ("", n)),
    ]
    return "\n".join(lines) + "\n"


def _metric(
    cells: dict[Key, dict[str, float]], metric: str, scale: float = 1.0
) -> dict[Key, float]:
    return {k: v.get(metric, math.nan) * scale for k, v in cells.items()}


def _cell_text(
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
    xs = _metric(cells, metric)
    shown = _metric(cells, metric, SCALE.get(metric, 1.0))
    text = estimate_text(estimate(shown), f".{DECIMALS.get(metric, 1)}f")
    reference = scores.values.get(ref) if ref is not None else None
    # A partial run's cells miss some pairs: no marker rather than a test on whichever
    # episodes happened to finish.
    if reference is not None and text != "-" and set(cells) == set(reference):
        test = paired_scenario_test(xs, _metric(reference, metric), metric in BINARY)
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
        row += [_cell_text(scores, (cond, med), ref, m, marks, undefined) for m in metrics]
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


def axis_markdown(scores: Scores, conditions: list[str], tracker: str = "oracle") -> str:
    """Consensus gain per socio-cognitive axis and condition, as shifts from the first
    condition (SoCRATES Figure 3), each shift tested on scenario means."""
    grid = scores.values
    mediators = sorted({m for (_, m) in grid if m != "none"})
    if len(conditions) < 2 or not mediators:
        return ""
    ref_name = conditions[0]
    marks, undefined = Markers(), Undefined()
    lines = [
        f"## Consensus gain by axis (shift from `{ref_name}`, as in SoCRATES Figure 3)",
        "",
        source_line(tracker),
        "",
        "| axis | condition | mediator | consensus_gain | shift |",
        "|---|---|---|---|---|",
    ]
    gain = "consensus_gain"
    for med in mediators:
        ref = grid.get((ref_name, med), {})
        base = _cell_text(scores, (ref_name, med), None, gain, marks, undefined)
        lines.append(f"| (reference) | {ref_name} | {med} | {base} | - |")
        for axis, rows in axis_gains(grid, conditions, med).items():
            for cond, _, shift in rows:
                cells = grid[(cond, med)]
                text = _cell_text(scores, (cond, med), None, gain, marks, undefined)
                mark = ""
                if set(cells) == set(ref):
                    test = paired_scenario_test(_metric(cells, gain), _metric(ref, gain))
                    mark = marks.mark(test)
                lines.append(f"| {axis} | {cond} | {med} | {text} | {shift:+.1f}{mark} |")
            if len(rows) > 1:
                mean_shift = sum(r[2] for r in rows) / len(rows)
                lines.append(f"| {axis} | (axis mean) | {med} | | {mean_shift:+.1f} |")
    lines = marks.resolve(lines)
    lines += [
        "",
        "Shift: the condition's mean consensus gain minus the reference's, same mediator; "
        "consensus_gain cells as in the first table. Tests: episodes paired by scenario "
        "and replicate, averaged per scenario, Wilcoxon signed-rank on the scenario means. "
        + marks.footnote(),
    ]
    if undefined.footnote():
        lines += ["", undefined.footnote()]
    return "\n".join(lines) + "\n"


def spec_conditions(config: dict[str, Any]) -> list[str]:
    return list(config.get("conditions") or ["general"])


def experiment_markdown_for(store: Store, run_id: str, config: dict[str, Any]) -> str:
    """The roundtable layout's entry point: `(store, run_id, config) -> markdown`. An
    experiment recorded before `tracker:` existed was tabled from the oracle."""
    from disputelab.report.promediate_tables import promediate_markdown

    tracker = str(config.get("tracker") or "oracle")
    conditions = spec_conditions(config)
    text = experiment_markdown(store, run_id, conditions, tracker)
    extra = promediate_markdown(store, run_id, conditions, tracker)
    return text + ("\n" + extra if extra else "")
