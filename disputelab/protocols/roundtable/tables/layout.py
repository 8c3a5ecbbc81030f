"""The roundtable's main experiment tables: SoCRATES's metrics per condition and mediator
from the run's consensus source, motivated turn-taking's shares, consensus gain by probing
axis (SoCRATES Figure 3), and the behaviour and domain tables."""

from __future__ import annotations

from typing import Any

from disputelab.evaluation.inference import cluster_ci
from disputelab.protocols.roundtable.tables.socrates import (
    BEHAVIOUR,
    behaviour_markdown,
    domain_markdown,
    scenario_domains,
)
from disputelab.store.sqlite import Store
from disputelab.tables.cells import CI_NOTE, Markers, Undefined, difference_text
from disputelab.tables.grids import (
    Scores,
    axis_of,
    cell_text,
    experiment_scores,
    gap_footnote,
    metric_table,
    metric_values,
    paired_differences,
    source_line,
    spec_conditions,
    undefined_gap,
    unmediated,
)

METRICS = (
    "consensus_gain",
    "intervention_timeliness",
    "intervention_effectiveness",
    "final_consensus",
    "resolved",
)
TURN_TAKING_METRICS = (
    "speaking_gini",
    "quietest_share",
    "interruptions",
    "spoken_motivation",
)


ORACLE = "socrates-oracle"
# Read from the protocol's own evaluator whatever the consensus source.
OUTCOME_METRICS = ("resolved", "party_turns", "interventions", *BEHAVIOUR)


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
        "Cells: " + CI_NOTE + ", since replicates of one scenario are not independent. "
        f"Tests against `{ref}` with the same "
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


def axis_markdown(scores: Scores, conditions: list[str], tracker: str = "oracle") -> str:
    """Consensus gain per socio-cognitive axis and condition, with the paired effect
    against the first condition (SoCRATES Figure 3): the mean over episode pairs of one
    scenario and replicate, and its CI. Its test is the consensus_gain marker of the
    first table (the same pairs): a contrast is tested in one family only."""
    grid = scores.values
    mediators = sorted({m for (_, m) in grid if not unmediated(m)})
    if len(conditions) < 2 or not mediators:
        return ""
    marks, undefined = Markers(), Undefined()  # nothing is marked here: see the docstring
    lines = [
        f"## Consensus gain by axis (paired effect against `{conditions[0]}`, SoCRATES Figure 3)",
        "",
        source_line(tracker),
        "",
        "| axis | condition | mediator | consensus_gain | paired effect (95% CI) | pairs |",
        "|---|---|---|---|---|---|",
    ]
    for med in mediators:
        lines += _axis_rows(scores, conditions, med, marks, undefined)
    lines = marks.resolve(lines)
    lines += [
        "",
        "Paired effect: the mean, over episodes of one scenario and replicate (the same "
        "seed) where both gains are defined, of the condition's gain minus the "
        "reference's; pairs: how many. Its CI: " + CI_NOTE + ". Its test is the "
        "consensus_gain marker of the first table (the same pairs, in that table's one "
        "family), not repeated here. An axis mean pools the pairs of its conditions. "
        "consensus_gain cells as in the first table.",
        *(x for n in (undefined.footnote(), *gap_footnote(lines)) if n for x in ("", n)),
    ]
    return "\n".join(lines) + "\n"


def _axis_rows(
    scores: Scores, conditions: list[str], med: str, marks: Markers, undefined: Undefined
) -> list[str]:
    gain, grid, ref_name = "consensus_gain", scores.values, conditions[0]
    ref = metric_values(grid.get((ref_name, med), {}), gain)
    base = cell_text(scores, (ref_name, med), None, gain, marks, undefined)
    lines = [f"| (reference) | {ref_name} | {med} | {base} | - | - |"]
    by_axis: dict[str, list[str]] = {}
    for cond in conditions[1:]:
        if (cond, med) in grid:
            by_axis.setdefault(axis_of(cond), []).append(cond)
    for axis, conds in by_axis.items():
        pooled: tuple[list[float], list[str]] = ([], [])
        for cond in conds:
            xs = metric_values(grid[(cond, med)], gain)
            text = cell_text(scores, (cond, med), None, gain, marks, undefined)
            text += undefined_gap(xs, ref)
            diffs, clusters = paired_differences(xs, ref)
            pooled[0].extend(diffs)
            pooled[1].extend(clusters)
            effect = difference_text(cluster_ci(diffs, clusters), "+.1f")
            lines.append(f"| {axis} | {cond} | {med} | {text} | {effect} | {len(diffs)} |")
        if len(conds) > 1:
            effect = difference_text(cluster_ci(*pooled), "+.1f")
            lines.append(f"| {axis} | (axis mean) | {med} | | {effect} | {len(pooled[0])} |")
    return lines


def experiment_markdown_for(store: Store, run_id: str, config: dict[str, Any]) -> str:
    """The roundtable layout's entry point: `(store, run_id, config) -> markdown`. An
    experiment recorded before `tracker:` existed was tabled from the oracle."""
    from disputelab.protocols.roundtable.tables.promediate import promediate_markdown

    tracker = str(config.get("tracker") or "oracle")
    conditions = spec_conditions(config)
    text = experiment_markdown(store, run_id, conditions, tracker)
    extra = promediate_markdown(store, run_id, conditions, tracker)
    return text + ("\n" + extra if extra else "")
