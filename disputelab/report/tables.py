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


def _marker(p: float) -> str:
    if math.isnan(p):
        return ""
    return "††" if p < 0.01 else "†" if p < 0.05 else ""


def experiment_rows(
    store: Store, run_id: str
) -> dict[tuple[str, str], dict[tuple[str, int], dict[str, float]]]:
    """(condition, mediator) -> (scenario, replicate) -> metric -> value."""
    grid: dict[tuple[str, str], dict[tuple[str, int], dict[str, float]]] = defaultdict(dict)
    for eid in sorted(store.complete_episode_ids(run_id)):
        _, sid, cond, med, rep = eid.split("/")
        values = {s.metric: s.value for s in store.scores(eid) if s.evaluator == "socrates-oracle"}
        grid[(cond, med)][(sid, int(rep.removeprefix("r")))] = values
    return grid


def experiment_markdown(store: Store, run_id: str, conditions: list[str]) -> str:
    grid = experiment_rows(store, run_id)
    order = {c: i for i, c in enumerate(conditions)}
    keys = sorted(grid, key=lambda k: (k[1] != "none", k[1], order.get(k[0], 99), k[0]))
    lines = [
        f"# Experiment `{run_id}`",
        "",
        "| condition | mediator | n | " + " | ".join(METRICS) + " |",
        "|---|---|---|" + "---|" * len(METRICS),
    ]
    for cond, med in keys:
        cells = grid[(cond, med)]
        ref = grid.get((conditions[0], med)) if conditions else None
        row = [cond, med, str(len(cells))]
        for m in METRICS:
            xs = [v.get(m, math.nan) * SCALE.get(m, 1.0) for v in cells.values()]
            est = bootstrap_ci(xs)
            if math.isnan(est.mean):
                row.append("-")
                continue
            text = f"{est.mean:.1f} ± {(est.high - est.low) / 2:.1f}"
            if ref is not None and cond != conditions[0]:
                common = sorted(set(cells) & set(ref))
                test = wilcoxon(
                    [cells[k].get(m, math.nan) for k in common],
                    [ref[k].get(m, math.nan) for k in common],
                )
                text += _marker(test.p_value)
            row.append(text)
        lines.append("| " + " | ".join(row) + " |")
    lines += [
        "",
        f"Cells: mean ± half-width of the 95% bootstrap CI over episodes. "
        f"† p < 0.05, †† p < 0.01 against `{conditions[0] if conditions else '-'}` with "
        "the same mediator: paired Wilcoxon signed-rank test, episodes matched by "
        "scenario and replicate. final_consensus and resolved in %; NaN metrics "
        "(undefined, e.g. timeliness without drops) are left out of the means.",
    ]
    return "\n".join(lines) + "\n"


def spec_conditions(config: dict[str, Any]) -> list[str]:
    return list(config.get("conditions") or ["general"])
