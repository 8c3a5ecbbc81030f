"""The ablation table: each condition's effect beside the same effect in a grid whose
behaviour parameters were set to neutral, and whether it survives.

An effect is a condition's paired difference from the spec's first condition (same
scenario, mediator and replicate), tested with scenarios as the units (McNemar on binary
scores, else Wilcoxon on scenario means) and Holm-adjusted across the table's tests. An
effect that keeps its sign and significance once its own condition's parameters are
neutral emerges from the interaction; one that does not was put in by those parameters.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from disputelab.evaluation.averaging import averaged_value
from disputelab.evaluation.inference import Key, paired_scenario_test, scenario_pairs
from disputelab.evaluation.stats import TestResult, adjust
from disputelab.protocols.base import DEFAULT_PROTOCOL, PROTOCOLS, behaviour_rows
from disputelab.scenario.conditions import condition_parameters
from disputelab.store.sqlite import Store

ALPHA = 0.05
Values = dict[tuple[str, str, str], dict[Key, float]]  # (condition, mediator, metric)


def grid_values(store: Store, run_id: str, wanted: tuple[str, ...]) -> Values:
    """Per-episode scores of an experiment, keyed by cell and metric, then by (scenario,
    replicate) so that cells pair up."""
    out: Values = defaultdict(dict)
    for eid in sorted(store.complete_episode_ids(run_id)):
        _, sid, cond, med, rep = eid.rsplit("/", 4)
        key = (sid, int(rep.removeprefix("r")))
        for s in store.scores(eid):
            name = f"{s.evaluator}:{s.metric}"
            if not wanted or name in wanted:
                out[(cond, med, name)][key] = averaged_value(s)[0]
    return out


@dataclass(frozen=True)
class Effect:
    condition: str
    mediator: str
    metric: str
    delta: float  # mean over scenarios of the scenario-mean paired difference
    test: TestResult


def effects(values: Values, reference: str, binary: tuple[str, ...]) -> list[Effect]:
    out = []
    for (cond, med, metric), xs in sorted(values.items()):
        ys = values.get((reference, med, metric))
        if cond == reference or ys is None:
            continue
        pairs = scenario_pairs(xs, ys)
        diffs = [math.fsum(x - y for x, y in p) / len(p) for p in pairs.values()]
        delta = math.fsum(diffs) / len(diffs) if diffs else math.nan
        test = paired_scenario_test(xs, ys, binary=metric in binary)
        out.append(Effect(cond, med, metric, delta, test))
    return out


def _holm(found: list[Effect]) -> list[float]:
    """Each effect's Holm-adjusted p over the table's tests (`adjust` keeps an untested
    effect's NaN out of the family)."""
    return adjust([e.test.p_value for e in found], "holm")


def _significant(delta: float, p: float) -> int:
    """+1 or -1 for a significant effect of that sign, 0 otherwise."""
    if math.isnan(p) or p >= ALPHA or math.isnan(delta) or delta == 0:
        return 0
    return 1 if delta > 0 else -1


def _own(condition: str, protocol: str | None) -> tuple[str, ...]:
    """The condition's own parameters: those it moves that `protocol`'s agents read."""
    names = condition_parameters(condition)
    return names if protocol is None else behaviour_rows(protocol, names)


def reading(
    condition: str, ablated: tuple[str, ...], full: int, after: int, protocol: str | None = None
) -> str:
    """What the pair of effects says about the condition's effect (its own parameters
    are those `protocol`'s agents read)."""
    own = set(_own(condition, protocol))
    if full == 0:
        return "no significant effect"
    if not own:
        return "structural (acts through no parameter)"
    if not own <= set(ablated):
        return "survives" if after == full else "lost (other parameters ablated)"
    if after == full:
        return "emergent"
    if after == -full:
        return "assumption (reverses)"
    return "assumption"


def _fmt(delta: float, p: float) -> tuple[str, str]:
    if math.isnan(delta):
        return "-", "-"
    return f"{delta:+.3g}", "n/a" if math.isnan(p) else f"{p:.3g}"


@dataclass(frozen=True)
class Row:
    """One effect beside the same effect in one ablated grid."""

    full: Effect
    full_p: float
    ablated: Effect | None
    ablated_p: float
    target: str
    reading: str
    neutral: tuple[tuple[str, float], ...]  # what the grid set, as stored with it


def set_to_neutral(grid: dict[str, Any], parent: dict[str, Any]) -> dict[str, float]:
    """The behaviour values an ablated grid set, read from the two stored configs (not
    from today's condition table, which may have changed since the grid ran)."""
    mine = (grid.get("params") or {}).get("behaviour") or {}
    theirs = (parent.get("params") or {}).get("behaviour") or {}
    return {k: float(v) for k, v in sorted(mine.items()) if theirs.get(k) != v}


def ablation_rows(store: Store, run_id: str, config: dict[str, Any]) -> list[Row]:
    """Every effect of `run_id` beside the same effect in each of its ablated grids."""
    grids = [
        (r["run_id"], cfg)
        for r in store.runs()
        if (cfg := store.run_info(r["run_id"])[1]).get("ablation_of") == run_id
    ]
    if not grids:
        return []
    protocol = str(config.get("protocol", DEFAULT_PROTOCOL))
    proto = PROTOCOLS.get(protocol)
    wanted = proto.report.effect_metrics if proto else ()
    binary = proto.report.binary_metrics if proto else ()
    reference = (config.get("conditions") or ["general"])[0]
    full = effects(grid_values(store, run_id, wanted), reference, binary)
    full_p = _holm(full)
    rows = []
    for grid_id, cfg in sorted(grids):
        target = str(cfg.get("ablated", "?"))
        neutral = tuple(set_to_neutral(cfg, config).items())
        names = tuple(n for n, _ in neutral)
        after = effects(grid_values(store, grid_id, wanted), reference, binary)
        found = {
            (e.condition, e.mediator, e.metric): (e, p)
            for e, p in zip(after, _holm(after), strict=True)
        }
        for e, p in zip(full, full_p, strict=True):
            a, ap = found.get((e.condition, e.mediator, e.metric), (None, math.nan))
            after_sign = _significant(a.delta, ap) if a is not None else 0
            text = reading(e.condition, names, _significant(e.delta, p), after_sign, protocol)
            rows.append(Row(e, p, a, ap, target, text, neutral))
    return rows


def ablation_markdown(store: Store, run_id: str, config: dict[str, Any]) -> str:
    """Each condition's effects beside the same effects with the condition's own
    parameters at neutral, then what other ablations changed; empty without ablations."""
    rows = ablation_rows(store, run_id, config)
    if not rows:
        return ""
    protocol = str(config.get("protocol", DEFAULT_PROTOCOL))
    own = [r for r in rows if _is_own(r, protocol)]
    others = [r for r in rows if not _is_own(r, protocol) and r.reading.startswith("lost")]
    header = [
        "| condition | mediator | metric | effect | p (Holm) | ablated: effect | p (Holm) "
        "| reading |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines = ["## Ablation: which effects emerge and which are assumptions", ""]
    if own:
        lines += [*header, *(_line(r) for r in own)]
    else:
        lines.append("(no condition of this grid was ablated with its own parameters)")
    if others:
        lines += ["", "Effects of other conditions lost under an ablation:", ""]
        lines += [h.replace("ablated:", "ablated (target):") for h in header]
        lines += [_line(r, with_target=True) for r in others]
    targets = sorted({(r.target, r.neutral) for r in rows})
    lines += ["", NOTE.format(reference=(config.get("conditions") or ["general"])[0])]
    lines += ["", "Ablated: " + "; ".join(f"`{t}` ({_neutral_text(n)})" for t, n in targets) + "."]
    return "\n".join(lines) + "\n"


def _is_own(row: Row, protocol: str | None = None) -> bool:
    """Whether the row's grid ablated exactly its condition's own parameters."""
    own = set(_own(row.full.condition, protocol))
    return bool(own) and own == {n for n, _ in row.neutral}


def _neutral_text(neutral: tuple[tuple[str, float], ...]) -> str:
    return ", ".join(f"{n}={v:g}" for n, v in neutral) or "nothing"


def _line(r: Row, with_target: bool = False) -> str:
    e = r.full
    delta_a = r.ablated.delta if r.ablated is not None else math.nan
    ablated = " ".join(_fmt(delta_a, r.ablated_p)[:1]) + (f" ({r.target})" if with_target else "")
    cells = [
        e.condition,
        e.mediator,
        e.metric.split(":", 1)[-1],
        *_fmt(e.delta, r.full_p),
        ablated,
        _fmt(delta_a, r.ablated_p)[1],
        r.reading,
    ]
    return "| " + " | ".join(cells) + " |"


NOTE = (
    "Effects are paired differences from `{reference}` (same scenario, mediator and "
    "replicate), averaged within each scenario and then over scenarios. p: McNemar on "
    "binary scores with one replicate, else Wilcoxon signed-rank on scenario means, "
    "Holm-adjusted across the tests of the full grid and, separately, of the ablated "
    "grid. Reading: *emergent*, the effect keeps its sign and significance (p < 0.05) with "
    "its own condition's parameters at neutral; *assumption*, it does not, so it was put "
    "in by those parameters; *survives* / *lost*, the ablated parameters are not the "
    "condition's own."
)
