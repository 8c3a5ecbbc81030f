"""The roundtable's main experiment tables: SoCRATES's metrics per condition and mediator
from the run's consensus source, motivated turn-taking's shares, consensus gain by probing
axis (SoCRATES Figure 3), and the behaviour and domain tables."""

from __future__ import annotations

from typing import Any

from disputelab.evaluation.inference import paired_scenario_test
from disputelab.protocols.roundtable.tables.socrates import (
    BEHAVIOUR,
    behaviour_markdown,
    domain_markdown,
    scenario_domains,
)
from disputelab.store.sqlite import Store
from disputelab.tables.cells import Markers, Undefined
from disputelab.tables.grids import (
    Scores,
    axis_gains,
    cell_text,
    experiment_scores,
    metric_table,
    metric_values,
    source_line,
    spec_conditions,
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
        base = cell_text(scores, (ref_name, med), None, gain, marks, undefined)
        lines.append(f"| (reference) | {ref_name} | {med} | {base} | - |")
        for axis, rows in axis_gains(grid, conditions, med).items():
            for cond, _, shift in rows:
                cells = grid[(cond, med)]
                text = cell_text(scores, (cond, med), None, gain, marks, undefined)
                mark = ""
                if set(cells) == set(ref):
                    test = paired_scenario_test(
                        metric_values(cells, gain), metric_values(ref, gain)
                    )
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


def experiment_markdown_for(store: Store, run_id: str, config: dict[str, Any]) -> str:
    """The roundtable layout's entry point: `(store, run_id, config) -> markdown`. An
    experiment recorded before `tracker:` existed was tabled from the oracle."""
    from disputelab.protocols.roundtable.tables.promediate import promediate_markdown

    tracker = str(config.get("tracker") or "oracle")
    conditions = spec_conditions(config)
    text = experiment_markdown(store, run_id, conditions, tracker)
    extra = promediate_markdown(store, run_id, conditions, tracker)
    return text + ("\n" + extra if extra else "")
