"""SoCRATES's other tables for a roundtable experiment: how the mediators intervened (its
Table 7, with where in the conversation the interventions fell, Figure 4's progress
axis) and IT, IE and CG per scenario domain (its Table 3).

Per-domain cells pool every condition of a mediator, as the paper's Table 3 pools its
fifteen conditions; their CIs resample scenarios, so the replicates and conditions of one
scenario stay together.
"""

from __future__ import annotations

import math

from disputelab.evaluation.inference import cluster_ci
from disputelab.store.sqlite import Store
from disputelab.tables.cells import estimate_text
from disputelab.tables.grids import unmediated

BEHAVIOUR = (
    "intervention_frequency",
    "first_intervention",
    "interventions_q1",
    "interventions_q2",
    "interventions_q3",
    "interventions_q4",
    "interventions_q5",
)
DOMAIN_METRICS = (
    ("intervention_timeliness", "Intervention timeliness (IT)"),
    ("intervention_effectiveness", "Intervention effectiveness (IE)"),
    ("consensus_gain", "Consensus gain (CG)"),
)

Grid = dict[tuple[str, str], dict[tuple[str, int], dict[str, float]]]


def scenario_domains(store: Store, run_id: str) -> dict[str, str]:
    """Scenario id -> its domain, reading one stored episode per scenario."""
    first: dict[str, str] = {}
    for eid in sorted(store.complete_episode_ids(run_id)):
        first.setdefault(eid.split("/")[1], eid)
    out = {}
    for sid, eid in first.items():
        domain = store.load_episode(eid).scenario.get("domain") or "-"
        out[sid] = str(domain)
    return out


def _pooled(grid: Grid, mediator: str, metric: str, keep: set[str] | None = None) -> str:
    """Mean ± CI of `metric` over every cell of `mediator`, clustered by scenario."""
    values, clusters = [], []
    for (_, med), cases in grid.items():
        if med != mediator:
            continue
        for (sid, _), metrics in cases.items():
            if keep is None or sid in keep:
                values.append(metrics.get(metric, math.nan))
                clusters.append(sid)
    return estimate_text(cluster_ci(values, clusters))


def behaviour_markdown(grid: Grid) -> str:
    """IF, FI and the share of interventions per fifth of the conversation, per mediator
    (SoCRATES Table 7, pooled over conditions)."""
    mediators = sorted({m for (_, m) in grid if not unmediated(m)})
    if not mediators or not any(
        "intervention_frequency" in v for cases in grid.values() for v in cases.values()
    ):
        return ""
    head = ["IF (%)", "FI (%)", "0-20%", "20-40%", "40-60%", "60-80%", "80-100%"]
    lines = [
        "## Intervention behaviour (SoCRATES Table 7)",
        "",
        "| mediator | " + " | ".join(head) + " |",
        "|---|" + "---|" * len(head),
    ]
    for med in mediators:
        lines.append(f"| {med} | " + " | ".join(_pooled(grid, med, m) for m in BEHAVIOUR) + " |")
    lines += [
        "",
        "IF: the share of party turns after which the mediator spoke; FI: the position of "
        "its first utterance, as a share of the party turns; the last five columns: the "
        "share of its interventions in each fifth of the conversation. Pooled over "
        "conditions; CIs are cluster t intervals over scenarios.",
    ]
    return "\n".join(lines) + "\n"


def domain_markdown(grid: Grid, domains: dict[str, str], source: str) -> str:
    """IT, IE and CG per mediator and scenario domain (SoCRATES Table 3)."""
    mediators = sorted({m for (_, m) in grid if not unmediated(m)})
    names = sorted(set(domains.values()))
    if not mediators or not names:
        return ""
    lines = ["## Per domain (SoCRATES Table 3)", "", source, ""]
    for metric, title in DOMAIN_METRICS:
        lines += [
            f"{title}:",
            "",
            "| mediator | " + " | ".join([*names, "all"]) + " |",
            "|---|" + "---|" * (len(names) + 1),
        ]
        for med in mediators:
            cells = [
                _pooled(grid, med, metric, {s for s, d in domains.items() if d == name})
                for name in names
            ]
            lines.append(f"| {med} | " + " | ".join([*cells, _pooled(grid, med, metric)]) + " |")
        lines.append("")
    lines.append(
        "Cells pool every condition of a mediator in the domain (mean ± 95% cluster t CI "
        "over scenarios; '-' where undefined everywhere)."
    )
    return "\n".join(lines) + "\n"
