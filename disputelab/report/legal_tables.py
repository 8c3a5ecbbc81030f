"""Staged-experiment tables in AgentMediation's layouts.

- strategies (Table 5): rows Default and + each TKI mode, column groups NUM=1 and NUM=ALL,
  each with SR, Sat, Con and LR; reference row + Compromising;
- causes (Table 6): rows Default and + each cause; reference row + Information Conflict;
- expertise (Table 7): one row per mediator, ROUGE-L of the points of contention and
  legal-basis recall without retrieval and with the top 3, 5 and 10 bases; reference w/o EK.

Sat, Con and LR are tested as the paper does, by a chi-squared test on the distribution of
five-level labels against the reference row; ROUGE-L and recall by a paired Wilcoxon test
on cases matched by scenario and replicate. Each cell is a mean ± the half-width of a 95%
bootstrap CI (Sat pools every party's label, as the paper's formula does).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from disputelab.evaluation.agentmediation import EVALUATOR
from disputelab.evaluation.stats import bootstrap_ci, chi_squared_levels, wilcoxon
from disputelab.scenario.causes import dispute_causes
from disputelab.store.sqlite import Store

MODES = ("compromising", "competing", "accommodating", "avoiding", "collaborating")
OUTCOME = ("success", "satisfaction", "consensus", "litigation_risk")
HEADERS = {
    "success": "SR↑",
    "satisfaction": "Sat↑",
    "consensus": "Con↑",
    "litigation_risk": "LR↓",
    "points_rouge_l": "ROUGE-L↑",
    "legal_basis_recall": "Recall↑",
}
LEVELLED = {"satisfaction", "consensus", "litigation_risk"}
EXPERTISE = ("expertise:none", "expertise:ek-top3", "expertise:ek-top5", "expertise:ek-top10")
# Table 7's retrievers: BM25 over the corpus, or the case's stored retrieval list.
RETRIEVERS = (("ek", "BM25"), ("stored", "stored list"))
NOTE = (
    "Cells: mean ± half-width of the 95% bootstrap CI. † p < 0.05, †† p < 0.01 against a "
    "reference row: in the paper-layout tables the paper's own (+ Compromising with the same "
    "NUM, + Information Conflict, w/o EK); in 'All cells' the spec's first condition with the "
    "same mediator. Tests: chi-squared on five-level label counts for Sat, Con and LR; paired "
    "Wilcoxon signed-rank for ROUGE-L and recall. SR carries no marker, as in the paper."
)


@dataclass
class Cell:
    """Every case of one (condition, mediator) cell, keyed by (scenario, replicate)."""

    values: dict[tuple[str, int], dict[str, float]] = field(default_factory=dict)
    levels: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0] * 5))


def staged_cells(store: Store, run_id: str) -> dict[tuple[str, str], Cell]:
    """(condition, mediator) -> the cell's per-case scores and pooled label counts."""
    cells: dict[tuple[str, str], Cell] = defaultdict(Cell)
    for eid in sorted(store.complete_episode_ids(run_id)):
        _, sid, cond, med, rep = eid.split("/")
        cell = cells[(cond, med)]
        values: dict[str, float] = {}
        for s in store.scores(eid):
            if s.evaluator != EVALUATOR:
                continue
            values[s.metric] = s.value
            if s.metric == "satisfaction":
                for i, c in enumerate(s.detail.get("levels", [])):
                    cell.levels[s.metric][i] += int(c)
            elif s.metric in LEVELLED and "level" in s.detail:
                cell.levels[s.metric][min(4, max(0, int(s.detail["level"])))] += 1
        cell.values[(sid, int(rep.removeprefix("r")))] = values
    return cells


def _marker(p: float) -> str:
    return "" if math.isnan(p) else "††" if p < 0.01 else "†" if p < 0.05 else ""


def cell_text(cell: Cell | None, metric: str, ref: Cell | None) -> str:
    """One table cell: mean ± CI and a marker against `ref` (none when ref is None)."""
    if cell is None or not cell.values:
        return "-"
    counts = cell.levels[metric]
    if metric == "satisfaction" and sum(counts) > 0:
        pooled = sum(i * c for i, c in enumerate(counts)) / sum(counts) / 4 * 100
        xs = [v.get(metric, math.nan) for v in cell.values.values()]
        est = bootstrap_ci(xs)
        text = f"{pooled:.1f} ± {(est.high - est.low) / 2:.1f}"
    else:
        est = bootstrap_ci([v.get(metric, math.nan) for v in cell.values.values()])
        if math.isnan(est.mean):
            return "-"
        text = f"{est.mean:.1f} ± {(est.high - est.low) / 2:.1f}"
        if metric in ("points_rouge_l", "legal_basis_recall"):
            text = f"{est.mean:.4f} ± {(est.high - est.low) / 2:.4f}"
    if ref is None or ref is cell or metric == "success":
        return text
    if set(cell.values) != set(ref.values):
        return text  # pairs missing (a partial run): no test on whatever finished first
    if metric in LEVELLED:
        p = chi_squared_levels(cell.levels[metric], ref.levels[metric]).p_value
    else:
        common = sorted(set(cell.values) & set(ref.values))
        p = wilcoxon(
            [cell.values[k].get(metric, math.nan) for k in common],
            [ref.values[k].get(metric, math.nan) for k in common],
        ).p_value
    return text + _marker(p)


def _row(label: str, cells: list[str]) -> str:
    return "| " + " | ".join([label, *cells]) + " |"


def strategy_table(cells: dict[tuple[str, str], Cell], med: str) -> list[str]:
    """Table 5: strategies x NUM=1 / NUM=ALL, reference + Compromising."""
    head = [f"NUM=1 {HEADERS[m]}" for m in OUTCOME] + [f"NUM=ALL {HEADERS[m]}" for m in OUTCOME]
    lines = [_row("Setting", head), "|---" * (len(head) + 1) + "|"]
    default = cells.get(("general", med))
    lines.append(_row("Default Setting", [cell_text(default, m, None) for m in OUTCOME] * 2))
    for mode in MODES:
        row = []
        for scope in ("one", "all"):
            ref = cells.get((f"strategy:compromising@{scope}", med))
            cell = cells.get((f"strategy:{mode}@{scope}", med))
            row += [cell_text(cell, m, ref) for m in OUTCOME]
        lines.append(_row(f"+ {mode.capitalize()}", row))
    return lines


def cause_table(cells: dict[tuple[str, str], Cell], med: str, conditions: list[str]) -> list[str]:
    """Table 6: + each dispute cause, reference + Information Conflict."""
    names = {c.key: c.en for c in dispute_causes()}
    lines = [_row("Setting", [HEADERS[m] for m in OUTCOME]), "|---" * 5 + "|"]
    lines.append(
        _row("Default Setting", [cell_text(cells.get(("general", med)), m, None) for m in OUTCOME])
    )
    ref = cells.get(("cause:information", med))
    for cond in conditions:
        if cond.startswith("cause:"):
            key = cond.removeprefix("cause:").split("@")[0]
            cell = cells.get((cond, med))
            lines.append(
                _row(f"+ {names.get(key, key)}", [cell_text(cell, m, ref) for m in OUTCOME])
            )
    return lines


def expertise_table(cells: dict[tuple[str, str], Cell], mediators: list[str]) -> list[str]:
    """Table 7: per mediator and retriever, ROUGE-L and recall w/o EK and with the top 3,
    5, 10 bases (BM25's, or the case's stored retrieval list's)."""
    head = ["ROUGE-L F1↑", "w/o EK", "w/ EK top-3", "w/ EK top-5", "w/ EK top-10"]
    lines = [_row("Mediator", head), "|---" * 6 + "|"]
    for med in mediators:
        ref = cells.get((EXPERTISE[0], med))
        ran = [
            (r, name)
            for r, name in RETRIEVERS
            if any((f"expertise:{r}-top{k}", med) in cells for k in (3, 5, 10))
        ]
        for r, name in ran or RETRIEVERS[:1]:
            levels = [EXPERTISE[0], *(f"expertise:{r}-top{k}" for k in (3, 5, 10))]
            # Points of contention do not depend on retrieval for the rule mediator; for an
            # LLM they may, so ROUGE-L pools every expertise level of this retriever.
            pooled = Cell()
            for c in levels:
                for key, values in getattr(cells.get((c, med)), "values", {}).items():
                    pooled.values[(f"{c}:{key[0]}", key[1])] = values
            row = [cell_text(pooled, "points_rouge_l", None)]
            row += [cell_text(cells.get((c, med)), "legal_basis_recall", ref) for c in levels]
            label = med if len(ran) < 2 else f"{med}, {name}"
            lines.append(_row(label, row))
    return lines


def generic_table(cells: dict[tuple[str, str], Cell], conditions: list[str]) -> list[str]:
    metrics = [*OUTCOME, "points_rouge_l", "legal_basis_recall"]
    lines = [_row("condition | mediator", [HEADERS[m] for m in metrics])]
    lines.append("|---" * (len(metrics) + 2) + "|")
    order = {c: i for i, c in enumerate(conditions)}
    for cond, med in sorted(cells, key=lambda k: (k[1], order.get(k[0], 99))):
        ref = cells.get((conditions[0], med))
        row = [cell_text(cells[(cond, med)], m, ref) for m in metrics]
        lines.append(_row(f"{cond} | {med}", row))
    return lines


def staged_markdown(store: Store, run_id: str, config: dict[str, Any]) -> str:
    """The experiment's tables, in whichever of the paper's layouts its design fits."""
    cells = staged_cells(store, run_id)
    conditions = list(config.get("conditions") or ["general"])
    mediators = list(config.get("mediators") or ["rule"])
    model = (config.get("models") or {}).get("mediator")
    lines = [f"# Experiment `{run_id}` (staged)", ""]
    sections: list[tuple[str, list[str]]] = []
    if any(c.startswith("strategy:") for c in conditions):
        for med in mediators:
            sections.append(
                (
                    f"Behavioural strategies, mediator {med} (AgentMediation Table 5)",
                    strategy_table(cells, med),
                )
            )
    if any(c.startswith("cause:") for c in conditions):
        for med in mediators:
            sections.append(
                (
                    f"Dispute causes, mediator {med} (AgentMediation Table 6)",
                    cause_table(cells, med, conditions),
                )
            )
    if any(c.startswith("expertise:") for c in conditions):
        labels = [f"{m} ({model})" if model and m != "rule" else m for m in mediators]
        renamed = {
            (c, lab): cells[(c, m)] for (c, m) in cells for lab in labels if lab.split(" ")[0] == m
        }
        sections.append(
            ("Mediator expertise (AgentMediation Table 7)", expertise_table(renamed, labels))
        )
    sections.append(("All cells", generic_table(cells, conditions)))
    for title, table in sections:
        lines += [f"## {title}", "", *table, ""]
    lines.append(NOTE)
    return "\n".join(lines) + "\n"
