"""The worlds table: each effect of an experiment played in several parameter worlds
(`worlds:` in its spec), the same effect measured in each, and what that says of it.

An effect is a condition's paired difference from the spec's first condition (same
scenario, mediator, replicate and world, hence the same seed), with its 95% cluster t
interval over scenarios, tested with scenarios as the units (McNemar on binary scores
with one replicate, else Wilcoxon on scenario means). Every test of the table, across
worlds, is one family, Holm-adjusted together. The label asks whether the effect is the
interaction's or the behaviour table's:

- *emergent*: significant in all three worlds, with the same sign, by an
  intersection-union test: its p is the largest of its three raw p values (the claim
  needs every world to reject), Holm-adjusted over the table's effects that can be
  tested in every world (`emergent_p`);
- *assumed*: significant in `shipped`, and either significant with the opposite sign in
  `mirrored` (it follows the table's directions) or not significant in `neutral` (it
  needs them);
- *fragile*: significant in `shipped`, neither of the above;
- *no effect*: not significant in `shipped`, so there is nothing to label.

A protocol whose comparison is between methods rather than conditions names a reference
mediator (`ReportLayout.reference_mediators`: the settlement's direct counsel); each
other mediator's paired effect against it, in every condition, is a row too (`mcts −
direct`), labelled the same way.

A test whose paired differences are all exactly zero (a condition that acts only
through parameters, in the neutral world) cannot reject at any level; it is left out of
the families (Tarone's rule for tests that cannot reach significance), rather than
diluting the adjustment of the tests that can, and its cell shows no p.
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
    testable: bool = True  # some paired difference is not zero: the test can reject


def world_effects(
    values: WorldValues, reference: str, binary: tuple[str, ...], method: str | None = None
) -> list[WorldEffect]:
    """Each condition's effect against `reference`; with a reference `method` (a
    mediator kind of the run), also each other mediator's against it in every
    condition, shown as `mcts − direct` in the mediator column."""
    out = []
    for (cond, med, world, metric), xs in sorted(values.items()):
        against = [((reference, med, world, metric), med)] if cond != reference else []
        if method is not None and med != method:
            against.append(((cond, method, world, metric), f"{med} − {method}"))
        for key, shown in against:
            ys = values.get(key)
            if ys is None:
                continue
            test = paired_scenario_test(xs, ys, binary=metric in binary)
            differs = any(xs[k] != ys[k] for k in xs if k in ys)
            effect = paired_effect(xs, ys)
            out.append(WorldEffect(cond, shown, metric, world, effect, test, differs))
    return out


def reference_method(config: dict[str, Any]) -> str | None:
    """The mediator kind the run's other mediators are measured against in the worlds
    table: the first of its protocol's `ReportLayout.reference_mediators` the run played
    (the settlement's direct counsel); None for a protocol that compares conditions."""
    proto = PROTOCOLS.get(config.get("protocol", DEFAULT_PROTOCOL))
    played = list(config.get("mediators") or ())
    refs = proto.report.reference_mediators if proto else ()
    return next((m for m in refs if m in played), None)


def holm(found: list[WorldEffect]) -> list[float]:
    """Each effect's Holm-adjusted p, the table's tests that can reject as one family
    (NaN: no test, or one that cannot reject; `adjust` leaves NaN out of the family)."""
    return adjust([e.test.p_value if e.testable else math.nan for e in found], "holm")


EffectKey = tuple[str, str, str]  # condition, mediator, metric


def emergent_p(cells: dict[EffectKey, dict[str, WorldEffect]]) -> dict[EffectKey, float]:
    """Each effect's intersection-union p for *emergent*: the largest of its raw p values
    in the three worlds where all three can reject and agree in sign, Holm-adjusted over
    those effects; NaN for any other (it cannot be emergent)."""
    keys, raw = [], []
    for key, by_world in cells.items():
        found = [by_world.get(w) for w in WORLDS]
        if any(e is None or not e.testable for e in found):
            continue
        signs = {math.copysign(1.0, e.effect.mean) for e in found if e is not None}
        if len(signs) == 1 and all(e is not None and e.effect.mean != 0 for e in found):
            keys.append(key)
            raw.append(max(e.test.p_value for e in found if e is not None))
    return dict(zip(keys, adjust(raw, "holm"), strict=True))


def effect_label(signs: dict[str, int], iut_p: float, alpha: float = ALPHA) -> str:
    """`world_label`, with *emergent* decided by the intersection-union test alone: an
    effect whose cells all agree but whose `iut_p` is not below `alpha` is *fragile*."""
    if not math.isnan(iut_p) and iut_p < alpha:
        return EMERGENT
    label = world_label(signs)
    return FRAGILE if label == EMERGENT else label


@dataclass(frozen=True)
class Row:
    condition: str
    mediator: str
    metric: str
    cells: dict[str, tuple[WorldEffect, float]]  # world -> (effect, adjusted p)
    label: str
    emergent_p: float = math.nan  # the intersection-union test's adjusted p


def world_rows(store: Store, run_id: str, config: dict[str, Any]) -> list[Row]:
    """Every effect of the run with its value in each world and its label."""
    proto = PROTOCOLS.get(config.get("protocol", DEFAULT_PROTOCOL))
    wanted = proto.report.effect_metrics if proto else ()
    binary = proto.report.binary_metrics if proto else ()
    reference = (config.get("conditions") or ["general"])[0]
    values = world_values(store, run_id, wanted)
    found = world_effects(values, reference, binary, reference_method(config))
    by_effect: dict[EffectKey, dict[str, tuple[WorldEffect, float]]] = {}
    for e, p in zip(found, holm(found), strict=True):
        by_effect.setdefault((e.condition, e.mediator, e.metric), {})[e.world] = (e, p)
    iut = emergent_p({k: {w: c[0] for w, c in v.items()} for k, v in by_effect.items()})
    order = {c: i for i, c in enumerate(config.get("conditions") or [])}
    rows = []
    for (cond, med, metric), cells in sorted(
        by_effect.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0])
    ):
        signs = {w: significant_sign(e.effect.mean, p) for w, (e, p) in cells.items()}
        iut_p = iut.get((cond, med, metric), math.nan)
        rows.append(Row(cond, med, metric, cells, effect_label(signs, iut_p), iut_p))
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
        "| condition | mediator | metric | " + " | ".join(worlds) + " | emergent p | label |",
        "|---|---|---|" + "---|" * len(worlds) + "---|---|",
    ]
    for r in rows:
        cells = [_cell(r.cells.get(w)) for w in worlds]
        iut = "-" if math.isnan(r.emergent_p) else f"{r.emergent_p:.2g}"
        lines.append(
            f"| {r.condition} | {r.mediator} | {r.metric.split(':', 1)[-1]} | "
            + " | ".join(cells)
            + f" | {iut} | {r.label} |"
        )
    n = sum(1 for r in rows for c in r.cells.values() if not math.isnan(c[1]))
    untested = sum(1 for r in rows for c in r.cells.values() if not c[0].testable)
    k = sum(1 for r in rows if not math.isnan(r.emergent_p))
    reference = (config.get("conditions") or ["general"])[0]
    note = NOTE.format(reference=reference, n=n, k=k, untested=untested, method=ADJUSTMENTS["holm"])
    method = reference_method(config)
    if method is not None:
        note += METHOD_NOTE.format(method=method)
    return "\n".join([*lines, "", note]) + "\n"


METHOD_NOTE = (
    " A row whose mediator reads `M − {method}` is method M's paired effect against "
    "`{method}` in the same condition (same scenario, replicate and world, hence the same "
    "seed), in the same family."
)
NOTE = (
    "Each cell is a paired effect against `{reference}` in that world (same scenario, "
    "mediator, replicate and world, hence the same seed): mean difference [95% cluster t "
    "interval over scenarios; n/a below 5 scenarios] and p, McNemar on binary scores with "
    "one replicate, else Wilcoxon signed-rank on scenario means, after {method}'s "
    "adjustment across the {n} cell tests of this table that can reject, one family "
    "(`worlds`); {untested} cells whose paired differences are all exactly zero cannot "
    "reject and show no p (Tarone's rule). *Emergent p* is the intersection-union test "
    "of an effect that agrees in sign in all three worlds: the largest of its three raw "
    "p values, {method}-adjusted across the {k} such effects, a family of its own "
    "(`emergent`). Worlds: *shipped*, the behaviour table as it is; *neutral*, every "
    "parameter at its neutral value (levels kept); *mirrored*, every direction reversed "
    "(factors inverted, signed effects negated). Labels, significance meaning p < 0.05 "
    "after adjustment: *emergent*, an emergent p below 0.05; *assumed*, significant in "
    "shipped, and significant with the opposite sign in mirrored or not significant in "
    "neutral; *fragile*, significant in shipped and neither; *no effect*, not "
    "significant in shipped."
)
