"""The worlds table: each effect of an experiment played in several parameter worlds
(`worlds:` in its spec), the same effect measured in each, and what that says of it.

An effect is a condition's paired difference from the spec's first condition (same
scenario, mediator, replicate and world, hence the same seed), with its 95% cluster t
interval over scenarios, tested with scenarios as the units (McNemar on binary scores
with one replicate, else Wilcoxon on scenario means). Every test of the table, across
worlds, is one family, Holm-adjusted together. The label asks whether the effect is the
interaction's or the behaviour table's:

- *emergent*: significant in all three worlds, with the same sign;
- *assumed*: significant in `shipped`, and either significant with the opposite sign in
  `mirrored` (it follows the table's directions) or not significant in `neutral` (it
  needs them);
- *fragile*: significant in `shipped`, neither of the above;
- *no effect*: not significant in `shipped`, so there is nothing to label.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from disputelab.evaluation.inference import Key, paired_scenario_test
from disputelab.evaluation.stats import ADJUSTMENTS, Estimate, TestResult, adjust
from disputelab.protocols.base import DEFAULT_PROTOCOL, PROTOCOLS
from disputelab.report.ablation import ALPHA, grid_values
from disputelab.scenario.behaviour import WORLDS
from disputelab.store.sqlite import Store
from disputelab.tables.cells import difference_text
from disputelab.tables.grids import paired_effect

EMERGENT, ASSUMED, FRAGILE, NO_EFFECT = "emergent", "assumed", "fragile", "no effect"
INCOMPLETE = "n/a (needs all three worlds)"
FAMILY = "worlds"
# (condition, mediator, world, metric) -> (scenario, replicate) -> value
WorldValues = dict[tuple[str, str, str, str], dict[Key, float]]


def significant_sign(mean: float, p: float, alpha: float = ALPHA) -> int:
    """+1 or -1 for an effect of that sign with (adjusted) p below `alpha`, else 0."""
    if math.isnan(p) or p >= alpha or math.isnan(mean) or mean == 0:
        return 0
    return 1 if mean > 0 else -1


def world_label(signs: dict[str, int]) -> str:
    """The label of an effect from its significant sign in each world (see the module);
    a world missing from `signs` leaves the effect unlabelled unless `shipped` alone
    already says there is no effect."""
    shipped = signs.get("shipped")
    if shipped == 0:
        return NO_EFFECT
    if shipped is None or not all(w in signs for w in WORLDS):
        return INCOMPLETE
    neutral, mirrored = signs["neutral"], signs["mirrored"]
    if neutral == shipped and mirrored == shipped:
        return EMERGENT
    if mirrored == -shipped or neutral == 0:
        return ASSUMED
    return FRAGILE


def world_values(store: Store, run_id: str, wanted: tuple[str, ...]) -> WorldValues:
    """Per-episode scores keyed by cell, world and metric: the world is the suffix of
    the id's mediator part (`rule~mirrored`), which the spec's `worlds:` puts there."""
    out: WorldValues = defaultdict(dict)
    for (cond, med, metric), values in grid_values(store, run_id, wanted).items():
        seat, sep, world = med.rpartition("~")
        if sep:
            out[(cond, seat, world, metric)] = values
    return out


@dataclass(frozen=True)
class WorldEffect:
    """One effect (condition against the reference, one mediator and metric) in one world."""

    condition: str
    mediator: str
    metric: str
    world: str
    effect: Estimate
    test: TestResult


def world_effects(
    values: WorldValues, reference: str, binary: tuple[str, ...]
) -> list[WorldEffect]:
    out = []
    for (cond, med, world, metric), xs in sorted(values.items()):
        ys = values.get((reference, med, world, metric))
        if cond == reference or ys is None:
            continue
        test = paired_scenario_test(xs, ys, binary=metric in binary)
        out.append(WorldEffect(cond, med, metric, world, paired_effect(xs, ys), test))
    return out


def holm(found: list[WorldEffect]) -> list[float]:
    """Each effect's Holm-adjusted p, the table's tests as one family (NaN: no test;
    `adjust` leaves it out of the family)."""
    return adjust([e.test.p_value for e in found], "holm")


@dataclass(frozen=True)
class Row:
    condition: str
    mediator: str
    metric: str
    cells: dict[str, tuple[WorldEffect, float]]  # world -> (effect, adjusted p)
    label: str


def world_rows(store: Store, run_id: str, config: dict[str, Any]) -> list[Row]:
    """Every effect of the run with its value in each world and its label."""
    proto = PROTOCOLS.get(config.get("protocol", DEFAULT_PROTOCOL))
    wanted = proto.report.effect_metrics if proto else ()
    binary = proto.report.binary_metrics if proto else ()
    reference = (config.get("conditions") or ["general"])[0]
    found = world_effects(world_values(store, run_id, wanted), reference, binary)
    by_effect: dict[tuple[str, str, str], dict[str, tuple[WorldEffect, float]]] = {}
    for e, p in zip(found, holm(found), strict=True):
        by_effect.setdefault((e.condition, e.mediator, e.metric), {})[e.world] = (e, p)
    order = {c: i for i, c in enumerate(config.get("conditions") or [])}
    rows = []
    for (cond, med, metric), cells in sorted(
        by_effect.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0])
    ):
        signs = {w: significant_sign(e.effect.mean, p) for w, (e, p) in cells.items()}
        rows.append(Row(cond, med, metric, cells, world_label(signs)))
    return rows


def _cell(cell: tuple[WorldEffect, float] | None) -> str:
    if cell is None:
        return "-"
    e, p = cell
    text = difference_text(e.effect, "+.3g")
    return text if math.isnan(p) else f"{text} p={p:.2g}"


def worlds_markdown(store: Store, run_id: str, config: dict[str, Any]) -> str:
    """The worlds section of a run played on a `worlds:` axis; empty otherwise."""
    worlds = [w for w in WORLDS if w in (config.get("worlds") or ())]
    if not worlds:
        return ""
    rows = world_rows(store, run_id, config)
    lines = ["## Worlds: which effects hold when the behaviour table is changed", ""]
    if not rows:
        return "\n".join([*lines, "(no effect could be measured in any world)", ""])
    lines += [
        "| condition | mediator | metric | " + " | ".join(worlds) + " | label |",
        "|---|---|---|" + "---|" * len(worlds) + "---|",
    ]
    for r in rows:
        cells = [_cell(r.cells.get(w)) for w in worlds]
        lines.append(
            f"| {r.condition} | {r.mediator} | {r.metric.split(':', 1)[-1]} | "
            + " | ".join(cells)
            + f" | {r.label} |"
        )
    n = sum(1 for r in rows for c in r.cells.values() if not math.isnan(c[1]))
    reference = (config.get("conditions") or ["general"])[0]
    lines += ["", NOTE.format(reference=reference, n=n, method=ADJUSTMENTS["holm"])]
    return "\n".join(lines) + "\n"


NOTE = (
    "Each cell is a paired effect against `{reference}` in that world (same scenario, "
    "mediator, replicate and world, hence the same seed): mean difference [95% cluster t "
    "interval over scenarios; n/a below 5 scenarios] and p, McNemar on binary scores with "
    "one replicate, else Wilcoxon signed-rank on scenario means, after {method}'s "
    "adjustment across the {n} tests of this table, one family (`worlds`: every effect in "
    "every world). Worlds: *shipped*, the behaviour table as it is; *neutral*, every "
    "parameter at its neutral value (levels kept); *mirrored*, every direction reversed "
    "(factors inverted, signed effects negated). Labels, significance meaning p < 0.05 "
    "after adjustment: *emergent*, significant in all three worlds with the same sign; "
    "*assumed*, significant in shipped, and significant with the opposite sign in "
    "mirrored or not significant in neutral; *fragile*, significant in shipped and "
    "neither; *no effect*, not significant in shipped."
)
