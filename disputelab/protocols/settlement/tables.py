"""Settlement-experiment tables in the layout of SettleAgent's Tables 1-3.

- Methods x metrics (Table 1; Table 2 when the opponents are the red team): one row per
  counsel method, SR (fraction), Acc@10/20/30 (% of settled episodes) and, beside the
  paper's columns, SR x Acc@tau (% of all episodes), surplus over BATNA, rounds to
  settlement and compliance violations found.
- Ablations (Table 3): rows w/o Compliance, w/o Aid, w/o Tree, w/o RoT and the full
  system, on SR and Acc@10/20/30 (w/o Tree is the direct counsel: without a tree there is
  nothing for RoT to reflect on either).
- Acc@tau's floor and ceiling: per method, the cases where every amount between the two
  counsel's walk-aways is within tau of the judgment (any deal scores, so the column
  cannot separate methods there) and those where none is (no deal can score).
- Planning against direct: the paired difference (MCTS minus direct, same case and
  replicate) in SR, surplus and SR x Acc@20 with its cluster t CI (tested once, in the
  methods table; w/o Tree against the full system likewise).
- On a `worlds:` axis every table above is shown once per parameter world (the cells of
  `mcts~neutral` as `mcts` in the neutral world's tables); the worlds table after them
  (`disputelab.report.worlds`) labels the planning gain across the worlds.

Cells are mean ± the half-width of a 95% cluster t CI over cases; markers
compare a row with the reference row (direct counsel in the methods table, the full
system in the ablations) with tests paired by case and replicate (McNemar on SR when each
case has one replicate, else Wilcoxon on case means), Holm-adjusted across the table.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from disputelab.evaluation.averaging import reason_of
from disputelab.evaluation.inference import Key, cluster_ci, paired_scenario_test
from disputelab.protocols.settlement.evaluation import EVALUATOR
from disputelab.store.sqlite import Store
from disputelab.tables.cells import (
    CI_NOTE,
    NOT_SCORED,
    Markers,
    Undefined,
    difference_text,
    estimate,
    estimate_text,
)

Cells = dict[str, dict[Key, dict[str, float]]]  # method -> (case, replicate) -> metric -> value
Why = dict[str, dict[Key, dict[str, str]]]
PAPER = ("success", "acc10", "acc20", "acc30")
EXTRA = ("sr_acc10", "sr_acc20", "sr_acc30", "surplus", "rounds", "violations")
HEADERS = {
    "success": "SR↑",
    "acc10": "Acc@10%↑",
    "acc20": "Acc@20%↑",
    "acc30": "Acc@30%↑",
    "sr_acc10": "SR×Acc@10↑",
    "sr_acc20": "SR×Acc@20↑",
    "sr_acc30": "SR×Acc@30↑",
    "surplus": "surplus/ZOPA↑",
    "rounds": "rounds↓",
    "violations": "violations",
}
PERCENT = {"acc10", "acc20", "acc30", "sr_acc10", "sr_acc20", "sr_acc30"}
ABLATION_ROWS = (
    ("w/o Compliance", "mcts-no-auditor"),
    ("w/o Aid", "mcts-no-aid"),
    ("w/o Tree", "direct"),
    ("w/o RoT", "mcts-no-memory"),
    ("Ours (full)", "mcts"),
)


def settlement_cells(store: Store, run_id: str) -> tuple[Cells, Why]:
    cells: Cells = defaultdict(dict)
    why: Why = defaultdict(lambda: defaultdict(dict))
    for eid in sorted(store.complete_episode_ids(run_id)):
        parts = eid.split("/")
        if len(parts) != 5:
            continue
        _, sid, _cond, method, rep = parts
        key = (sid, int(rep.removeprefix("r")))
        values: dict[str, float] = {}
        for s in store.scores(eid):
            if s.evaluator != EVALUATOR:
                continue
            values[s.metric] = s.value * (100 if s.metric in PERCENT else 1)
            if math.isnan(s.value):
                why[method][key][s.metric] = reason_of(s.explanation)
        cells[method][key] = values
    return cells, why


def _values(cell: dict[Key, dict[str, float]], metric: str) -> dict[Key, float]:
    return {k: v.get(metric, math.nan) for k, v in cell.items()}


def _cell(
    cells: Cells,
    why: Why,
    method: str,
    metric: str,
    ref: str | None,
    marks: Markers,
    undefined: Undefined,
) -> str:
    cell = cells.get(method)
    if not cell:
        return "-"
    xs = _values(cell, metric)
    fmt = ".2f" if metric in ("success", "surplus") else ".1f" if metric != "violations" else ".2f"
    text = estimate_text(estimate(xs), fmt)
    other = cells.get(ref or "")
    if other and ref != method and text != "-" and set(other) == set(cell):
        text += marks.mark(
            paired_scenario_test(xs, _values(other, metric), binary=metric == "success")
        )
    missing = [
        why[method].get(k, {}).get(metric, NOT_SCORED) for k, x in xs.items() if math.isnan(x)
    ]
    return text + undefined.note(missing)


def _table(
    cells: Cells,
    why: Why,
    rows: list[tuple[str, str]],
    metrics: tuple[str, ...],
    ref: str | None,
    tested_before: frozenset[str] = frozenset(),
) -> list[str]:
    """One table, its tests one Holm family; rows in `tested_before` show no test here
    (their contrast with `ref` is in an earlier table's family, and is not counted twice)."""
    marks, undefined = Markers(), Undefined()
    lines = [
        "| Method | " + " | ".join(HEADERS[m] for m in metrics) + " |",
        "|---" * (len(metrics) + 1) + "|",
    ]
    for label, method in rows:
        against = None if method in tested_before else ref
        row = [_cell(cells, why, method, m, against, marks, undefined) for m in metrics]
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    lines = marks.resolve(lines)
    return [*lines, "", *(n for n in (marks.footnote(), undefined.footnote()) if n)]


ZONE_TAUS = (10, 20, 30)
ZONE_NOTE = (
    "Acc@τ's floor and ceiling: the zone is the amounts between the two counsel's "
    "walk-aways, where they actually stop (the BATNA reservations under `walk_away: batna`, "
    "the scenario's own under `walk_away: scenario`); every signed deal lies in it. 'any "
    "deal hits': cases in which every amount of the zone is within τ of the judgment, so "
    "every method that settles scores there; 'no deal can': cases where no amount of the "
    "zone is, so none does. Only the cases in neither count can separate methods on Acc@τ. "
    "'mean share': the zone's share within τ, averaged over cases."
)


def case_zone_shares(cell: dict[Key, dict[str, float]], tau: int) -> dict[str, list[float]]:
    """Case -> the zone's Acc@tau share of each of its episodes, where defined."""
    out: dict[str, list[float]] = defaultdict(list)
    for (sid, _), values in cell.items():
        x = values.get(f"zone_acc{tau}", math.nan)
        if not math.isnan(x):
            out[sid].append(x)
    return out


def zone_counts(shares: dict[str, list[float]]) -> tuple[int, int, int, float]:
    """(cases where any deal hits in every episode, cases where none can in every
    episode, cases with a zone, mean share over cases)."""
    cases = [xs for xs in shares.values() if xs]
    forced = sum(1 for xs in cases if min(xs) >= 1 - 1e-9)
    impossible = sum(1 for xs in cases if max(xs) <= 1e-9)
    mean = math.fsum(math.fsum(xs) / len(xs) for xs in cases) / len(cases) if cases else math.nan
    return forced, impossible, len(cases), mean


def zone_table(cells: Cells, methods: list[str]) -> list[str]:
    """Acc@tau's floor and ceiling per method (see ZONE_NOTE); [] for runs scored before
    the zone was recorded."""
    head = [f"Acc@{t}%: any deal hits / no deal can / mean share" for t in ZONE_TAUS]
    lines = ["| Method | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
    shown = False
    for method in methods:
        row = []
        for tau in ZONE_TAUS:
            forced, impossible, n, mean = zone_counts(case_zone_shares(cells[method], tau))
            shown = shown or n > 0
            row.append(f"{forced} / {impossible} of {n} cases / {mean:.0%}" if n else "-")
        lines.append(f"| {method} | " + " | ".join(row) + " |")
    return [*lines, "", ZONE_NOTE] if shown else []


def planning_difference(cells: Cells, planner: str, direct: str) -> list[str]:
    """MCTS minus direct, paired by case and replicate, with cluster t CIs. The same
    contrasts are tested in the methods table (its markers, one family): they are not
    tested again here, so that no contrast counts in two families."""
    a, b = cells.get(planner), cells.get(direct)
    if not a or not b:
        return []
    lines = [f"| metric | {planner} − {direct} (95% CI) | pairs |", "|---|---|---|"]
    for metric in ("success", "surplus", "sr_acc20"):
        keys = sorted(set(a) & set(b))
        diffs = [(k, a[k].get(metric, math.nan) - b[k].get(metric, math.nan)) for k in keys]
        defined = [(k, d) for k, d in diffs if not math.isnan(d)]
        est = cluster_ci([d for _, d in defined], [k[0] for k, _ in defined])
        lines.append(f"| {HEADERS[metric]} | {difference_text(est)} | {len(defined)} |")
    return [
        *lines,
        "",
        f"Tests: the markers of {planner}'s row in the methods table (same pairs, that "
        "table's Holm family).",
    ]


def world_cells(cells: Cells, why: Why, world: str) -> tuple[Cells, Why]:
    """The cells of one parameter world, keyed by bare method: on a `worlds:` axis a
    method's cells are stored as `mcts~WORLD`."""
    suffix = f"~{world}"
    mine: Cells = defaultdict(dict)
    reasons: Why = defaultdict(lambda: defaultdict(dict))
    for method, cell in cells.items():
        if method.endswith(suffix):
            mine[method.removesuffix(suffix)] = cell
            reasons[method.removesuffix(suffix)] = why[method]
    return mine, reasons


def settlement_markdown(store: Store, run_id: str, config: dict[str, Any]) -> str:
    """Tables 1-3 in the paper's layout, as far as the experiment's design reaches; on a
    `worlds:` axis, once per parameter world."""
    cells, why = settlement_cells(store, run_id)
    out = [f"# Experiment `{run_id}` (settlement)", ""]
    worlds = list(config.get("worlds") or ())
    if not worlds:
        out += _sections(cells, why, config, "")
    for i, world in enumerate(worlds):
        shown = _sections(*world_cells(cells, why, world), config, f" ({world} world)")
        out += [""] * (i > 0) + shown
    out += [
        "",
        "SR is a fraction; Acc@τ is the percentage of *settled* episodes within τ of the "
        "known judgment (a settled episode without a readable amount is a miss); SR×Acc@τ is "
        "the percentage of all episodes. Cells: "
        + CI_NOTE.replace("scenarios", "cases")
        + "; † p < 0.05, †† p < 0.01 against the reference row "
        "(direct counsel; the full system in Table 3), Holm-adjusted within each table.",
    ]
    return "\n".join(out) + "\n"


def _sections(cells: Cells, why: Why, config: dict[str, Any], world: str) -> list[str]:
    """The tables of one set of cells (one parameter world's, or the run's)."""
    methods = [m for m in (config.get("mediators") or list(cells)) if m in cells]
    red = str(config.get("parties", "")) == "redteam"
    prefix = "llm-" if any(m.startswith("llm-") for m in methods) else ""
    direct = f"{prefix}direct" if f"{prefix}direct" in cells else None
    main = [(m, m) for m in methods if "-no-" not in m]
    title = (
        "Table 2 layout: under red-team stress testing"
        if red
        else "Table 1 layout: negotiation performance"
    )
    out = [f"## {title}{world}", ""]
    out += _table(cells, why, main, PAPER + EXTRA, direct)
    ablations = [(label, prefix + m) for label, m in ABLATION_ROWS if prefix + m in cells]
    if len(ablations) > 2:
        out += ["", f"## Table 3 layout: ablation study{world}", ""]
        # w/o Tree is the direct counsel: its contrast with the full system is the methods
        # table's mcts-against-direct test, which is not repeated in a second family.
        again = frozenset({direct} if direct and prefix + "mcts" in cells else ())
        out += _table(cells, why, ablations, PAPER, prefix + "mcts", again)
    zones = zone_table(cells, [m for m, _ in main])
    if zones:
        out += ["", f"## Acc@τ's floor and ceiling: deals between the walk-aways{world}", ""]
        out += zones
    if direct and prefix + "mcts" in cells:
        out += [
            "",
            f"## Planning against direct counsel (paired by case and replicate){world}",
            "",
        ]
        out += planning_difference(cells, prefix + "mcts", direct)
    return out
