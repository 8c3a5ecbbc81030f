"""Experiment tables for a protocol with no layout of its own: one row per condition and
mediator, one column per metric its evaluators stored, each a mean with a 95% bootstrap
CI over the cell's complete episodes."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from disputelab.evaluation.stats import bootstrap_ci
from disputelab.store.sqlite import Store


def experiment_markdown(store: Store, run_id: str, config: dict[str, Any]) -> str:
    cells: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    metrics: list[str] = []
    for eid in sorted(store.complete_episode_ids(run_id)):
        rec = store.load_episode(eid)
        values = {s.metric: s.value for s in store.scores(eid)}
        metrics += [m for m in values if m not in metrics]
        key = (rec.episode.condition, rec.episode.agents.get("mediator", "-"))
        cells[key].append(values)
    protocol = config.get("protocol", "")
    lines = [
        f"# Experiment `{run_id}` ({protocol} protocol)",
        "",
        "| condition | mediator | n | " + " | ".join(metrics) + " |",
        "|---|---|---|" + "---|" * len(metrics),
    ]
    for (cond, med), rows in sorted(cells.items()):
        row = [cond, med, str(len(rows))]
        for m in metrics:
            est = bootstrap_ci([r.get(m, math.nan) for r in rows])
            half = (est.high - est.low) / 2
            row.append("-" if math.isnan(est.mean) else f"{est.mean:.3g} ± {half:.2g}")
        lines.append("| " + " | ".join(row) + " |")
    if not cells:
        lines.append("(no complete episodes yet)")
    return "\n".join(lines) + "\n"
