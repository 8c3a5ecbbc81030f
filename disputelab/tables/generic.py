"""Experiment tables for a protocol with no layout of its own: one row per condition and
mediator, one column per metric its evaluators stored, each a mean with a 95% CI over the
cell's complete episodes. The CI is clustered by scenario (a cluster t interval), since
replicates of one scenario are not independent; this layout has no reference row, so it
draws no significance markers."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from disputelab.evaluation.averaging import averaged_value
from disputelab.evaluation.inference import Key
from disputelab.store.sqlite import Store
from disputelab.tables.cells import CI_NOTE, NOT_SCORED, Undefined, estimate, estimate_text

NOTE = "Cells: " + CI_NOTE + "; undefined (NaN) scores are left out of the mean."


def experiment_markdown(store: Store, run_id: str, config: dict[str, Any]) -> str:
    cells: dict[tuple[str, str], dict[Key, dict[str, float]]] = defaultdict(dict)
    why: dict[Key, dict[str, str]] = defaultdict(dict)
    metrics: list[str] = []
    for i, eid in enumerate(sorted(store.complete_episode_ids(run_id))):
        rec = store.load_episode(eid)
        key = (rec.episode.scenario_id, i)  # the scenario is the cluster; i keeps keys apart
        values = {}
        for s in store.scores(eid):
            values[s.metric], reason = averaged_value(s)
            if reason is not None:
                why[key][s.metric] = reason
        metrics += [m for m in values if m not in metrics]
        cells[(rec.episode.condition, rec.episode.agents.get("mediator", "-"))][key] = values
    protocol = config.get("protocol", "")
    undefined = Undefined()
    lines = [
        f"# Experiment `{run_id}` ({protocol} protocol)",
        "",
        "| condition | mediator | n | " + " | ".join(metrics) + " |",
        "|---|---|---|" + "---|" * len(metrics),
    ]
    for (cond, med), rows in sorted(cells.items()):
        row = [cond, med, str(len(rows))]
        for m in metrics:
            xs = {k: r.get(m, math.nan) for k, r in rows.items()}
            text = estimate_text(estimate(xs), ".3g", ".2g")
            missing = [why[k].get(m, NOT_SCORED) for k, x in xs.items() if math.isnan(x)]
            row.append(text + undefined.note(missing))
        lines.append("| " + " | ".join(row) + " |")
    if not cells:
        lines.append("(no complete episodes yet)")
    else:
        lines += ["", NOTE]
        if undefined.footnote():
            lines += ["", undefined.footnote()]
    return "\n".join(lines) + "\n"
