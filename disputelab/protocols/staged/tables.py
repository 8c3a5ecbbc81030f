"""Staged-experiment tables in AgentMediation's layouts.

- strategies (Table 5): rows Default and + each TKI mode, column groups NUM=1 and NUM=ALL,
  each with SR, Sat, Con and LR; reference row + Compromising;
- causes (Table 6): rows Default and + each cause; reference row + Information Conflict;
- expertise (Table 7): one row per mediator, ROUGE-L of the points of contention and
  legal-basis recall without retrieval and with the top 3, 5 and 10 bases; reference w/o EK.
  Beside ROUGE-L, its floor: the best of a few fixed sentences that ignore the case,
  scored against the same cases' gold points (see `rouge_floor`).

Every test is paired, case against the same case under the reference row: McNemar on
success (SR), Wilcoxon signed-rank on per-case scores for Sat, Con, LR, ROUGE-L and
recall. (The paper's chi-squared test on pooled five-level labels treats every party of
every case as independent, and bins continuous scores into levels; neither holds.) Cases
are the independent units: replicates of a case are averaged before a test, and CIs are
cluster t intervals over cases (n/a with too few cases, see `tables.coverage`). Markers
use p-values Holm-adjusted across the tests of each table. Sat is the mean of every
party's label, as the paper's formula pools them, and its CI resamples cases with all
their parties, so it is on the same statistic.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from disputelab.evaluation.averaging import reason_of
from disputelab.evaluation.inference import Key, cluster_ci, paired_scenario_test
from disputelab.protocols.staged.evaluation import bertscore, legal_judges
from disputelab.protocols.staged.evaluation.agentmediation import (
    CONSTANT_METRIC,
    EVALUATOR,
    constant_points,
)
from disputelab.protocols.staged.strategies import strategy_points_table
from disputelab.scenario.causes import dispute_causes
from disputelab.store.sqlite import Store
from disputelab.tables.cells import CI_NOTE, NOT_SCORED, Markers, Undefined, estimate, estimate_text

MODES = ("compromising", "competing", "accommodating", "avoiding", "collaborating")
OUTCOME = ("success", "satisfaction", "consensus", "litigation_risk")
HEADERS = {
    "success": "SR↑",
    "satisfaction": "Sat↑",
    "consensus": "Con↑",
    "litigation_risk": "LR↓",
    "points_rouge_l": "ROUGE-L↑",
    "legal_basis_recall": "Recall↑",
    bertscore.METRIC: "BERTScore F1↑",
}
# Shown to 4 decimals.
SOLUTION = ("points_rouge_l", "legal_basis_recall", bertscore.METRIC)
EXPERTISE = ("expertise:none", "expertise:ek-top3", "expertise:ek-top5", "expertise:ek-top10")
# Table 7's retrievers: BM25 over the corpus, or the case's stored retrieval list.
RETRIEVERS = (("ek", "BM25"), ("stored", "stored list"))
NOTE = (
    "n: the episodes (cases x replicates) behind a row; '-' cells have none. "
    "Cells: " + CI_NOTE.replace("scenarios", "cases") + ". Sat is the mean of every party's "
    "label, as in the paper; its CI resamples cases with all their parties. † p < 0.05, "
    "†† p < 0.01 against a reference row, after Holm's adjustment across the tests of the "
    "table (its footnote gives their number): in the paper-layout tables the paper's own "
    "reference (+ Compromising with the same NUM, + Information Conflict, w/o EK); in 'All "
    "cells' the spec's first condition with the same mediator. Tests pair each case with "
    "the same case and replicate in the reference row: McNemar on SR, Wilcoxon signed-rank "
    "on per-case scores (a case's mean over its replicates) for Sat, Con, LR, ROUGE-L and "
    "recall. Table 7's ROUGE-L counts each case once, at its mean over the retriever's "
    "expertise levels, which do not change it for the rule mediator."
)

Lines = tuple[list[str], list[str]]  # a table's lines, and its footnotes


@dataclass
class Cell:
    """Every case of one (condition, mediator) cell, keyed by (scenario, replicate): its
    scores, why any of them is undefined, and each party's satisfaction on 0-100."""

    values: dict[Key, dict[str, float]] = field(default_factory=dict)
    why: dict[Key, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    parties: dict[Key, list[float]] = field(default_factory=dict)
    judged: bool = False  # Con and LR come from the third-party judge, not the stand-ins
    bert_models: set[str] = field(default_factory=set)  # BERTScore's models, if it ran
    # ROUGE-L of each fixed sentence against the case's gold points, and the case's language
    constants: dict[Key, tuple[str, list[float]]] = field(default_factory=dict)
    # Sat's structural range for rule parties: (parties, lowest, highest, unrejected
    # lowest, unrejected highest), summed levels (see `satisfaction_range`)
    reach: dict[Key, tuple[float, ...]] = field(default_factory=dict)


# The judge's metrics that replace the stand-ins' in the Con and LR columns.
JUDGED = {
    legal_judges.CONSENSUS: "consensus",
    legal_judges.LITIGATION_RISK: "litigation_risk",
}
SOURCES_JUDGED = (
    "Sources: Con and LR are the third-party judge's labels (AgentMediation Tables 20-21 "
    "anchors) on the case background, the bargaining dialogue and the final proposal, "
    "without the verdicts; SR and Sat are the parties' own verdicts."
)
SOURCES_STAND_IN = (
    "Sources: Con is the oracle's consensus after closure (x100; undefined where a party "
    "has no hidden state, as with LLM parties: run with a judge model for the judged Con); "
    "LR is a stand-in, the share of parties whose verdict is reject (uncertain counts "
    "half); SR and Sat are the parties' own verdicts."
)


def staged_cells(store: Store, run_id: str) -> dict[tuple[str, str], Cell]:
    """(condition, mediator) -> the cell's per-case scores and party satisfaction labels.
    Where the third-party judge scored an episode, its Con and LR replace the stand-ins."""
    cells: dict[tuple[str, str], Cell] = defaultdict(Cell)
    for eid in sorted(store.complete_episode_ids(run_id)):
        _, sid, cond, med, rep = eid.split("/")
        cell, key = cells[(cond, med)], (sid, int(rep.removeprefix("r")))
        values: dict[str, float] = {}
        judged: dict[str, float] = {}
        why: dict[str, str] = {}
        judged_why: dict[str, str] = {}
        for s in store.scores(eid):
            if s.evaluator == legal_judges.EVALUATOR and s.metric in JUDGED:
                judged[JUDGED[s.metric]] = s.value
                if math.isnan(s.value):
                    judged_why[JUDGED[s.metric]] = reason_of(s.explanation)
            if s.evaluator.startswith(f"{bertscore.EVALUATOR}:") and s.metric == bertscore.METRIC:
                cell.bert_models.add(s.evaluator.split(":", 1)[1])
                values[s.metric] = s.value
                if math.isnan(s.value):
                    why[s.metric] = reason_of(s.explanation)
            if s.evaluator != EVALUATOR:
                continue
            if s.metric == CONSTANT_METRIC:
                if "per_constant" in s.detail:
                    scores = [float(x) for x in s.detail["per_constant"]]
                    cell.constants[key] = (str(s.detail.get("language", "en")), scores)
                continue
            values[s.metric] = s.value
            if math.isnan(s.value):
                why[s.metric] = reason_of(s.explanation)
            if s.metric == "satisfaction" and "levels" in s.detail:
                counts = [int(c) for c in s.detail["levels"]]
                cell.parties[key] = [i / 4 * 100 for i, c in enumerate(counts) for _ in range(c)]
            if s.metric == "satisfaction" and "reachable" in s.detail:
                cell.reach[key] = tuple(float(x) for x in s.detail["reachable"])
        if judged:
            cell.judged = True
            why = {m: r for m, r in why.items() if m not in judged} | judged_why
        cell.values[key] = {**values, **judged}
        if why:
            cell.why[key].update(why)
    return cells


def _values(cell: Cell, metric: str) -> dict[Key, float]:
    return {k: v.get(metric, math.nan) for k, v in cell.values.items()}


def cell_text(
    cell: Cell | None,
    metric: str,
    ref: Cell | None,
    marks: Markers | None = None,
    undefined: Undefined | None = None,
) -> str:
    """One table cell: mean ± CI, a marker against `ref` (none when ref is None) and its
    undefined cases. The marker is adjusted with the other tests of `marks`; without it,
    the cell's test is a family of one."""
    if cell is None or not cell.values:
        return "-"
    own = marks is None
    marks = Markers() if marks is None else marks
    xs = _values(cell, metric)
    if metric == "satisfaction" and cell.parties:
        labels = [(k[0], x) for k, party in cell.parties.items() for x in party]
        est = cluster_ci([x for _, x in labels], [c for c, _ in labels])
    else:
        est = estimate(xs)
    text = estimate_text(est, ".4f" if metric in SOLUTION else ".1f")
    if ref is not None and ref is not cell and text != "-" and set(cell.values) == set(ref.values):
        # (A partial run misses pairs: no test on whatever finished first.)
        test = paired_scenario_test(xs, _values(ref, metric), binary=metric == "success")
        text += marks.mark(test)
    if own:
        text = marks.resolve([text])[0]
    missing = [cell.why.get(k, {}).get(metric, NOT_SCORED) for k, x in xs.items() if math.isnan(x)]
    return text + (undefined or Undefined()).note(missing)


@dataclass(frozen=True)
class Floor:
    """ROUGE-L's constant-text floor over some cases: the best fixed sentence's mean."""

    value: float
    index: int  # which sentence of `constant_points`, 0-based
    languages: tuple[str, ...]
    cases: int


def rouge_floor(cells: list[Cell | None]) -> Floor | None:
    """The best fixed sentence's mean ROUGE-L over the cases of `cells` (each case once,
    as the mediators' ROUGE-L column counts it), or None when none was scored."""
    per_case: dict[str, tuple[str, list[float]]] = {}
    for cell in cells:
        for key, scored in getattr(cell, "constants", {}).items():
            per_case.setdefault(key[0], scored)
    rows = [(lang, [x for x in xs if not math.isnan(x)]) for lang, xs in per_case.values()]
    rows = [(lang, xs) for lang, xs in rows if xs]
    if not rows:
        return None
    width = min(len(xs) for _, xs in rows)
    means = [math.fsum(xs[i] for _, xs in rows) / len(rows) for i in range(width)]
    best = max(range(width), key=lambda i: means[i])
    return Floor(means[best], best, tuple(sorted({lang for lang, _ in rows})), len(rows))


def floor_text(floor: Floor | None) -> str:
    return "-" if floor is None else f"{floor.value:.4f} (#{floor.index + 1})"


def floor_note(floor: Floor | None) -> str:
    """What the constant was and why it is shown, for the table's note."""
    if floor is None:
        return ""
    texts = "; ".join(f"'{constant_points(lang)[floor.index]}'" for lang in floor.languages)
    return (
        f"ROUGE-L floor: the mean ROUGE-L F1 over the same {floor.cases} cases of a fixed text "
        f"that ignores the case, the best of the stated sentences (#{floor.index + 1}: "
        f"{texts}; `CONSTANT_POINTS` lists them all). The gold points share a stock wording, "
        "so such a text scores well above 0: a mediator's ROUGE-L means something only "
        "above this floor."
    )


def sat_range(cells: list[Cell | None]) -> tuple[float, float, float, float] | None:
    """Sat's structural range for rule parties over the cases of `cells`, on Sat's own
    scale (the mean of every party's level, x25): (lowest, highest) over every package,
    then over the packages no party rejects (NaN when some case has none). None when no
    case has a range (not rule-playable, or scored before it was recorded)."""
    per_case: dict[str, tuple[float, ...]] = {}
    for cell in cells:
        for key, reach in getattr(cell, "reach", {}).items():
            per_case.setdefault(key[0], reach)
    if not per_case:
        return None
    parties = math.fsum(r[0] for r in per_case.values())
    sums = [math.fsum(r[i] for r in per_case.values()) / parties * 25 for i in (1, 2, 3, 4)]
    return sums[0], sums[1], sums[2], sums[3]


def sat_range_text(reach: tuple[float, float, float, float] | None) -> str:
    if reach is None:
        return "-"
    low, high, ulow, uhigh = reach
    unrejected = "none" if math.isnan(ulow) else f"{ulow:.1f}-{uhigh:.1f}"
    return f"{low:.1f}-{high:.1f}; unrejected {unrejected}"


SAT_RANGE_NOTE = (
    "Sat range: where Sat can lie at all with rule parties, on the same cases and scale. A "
    "rule party's satisfaction depends on the proposal alone (its place between the "
    "party's fallback and its best package, in five bands; an infeasible one is 'very "
    "low'), so the first range is the least and greatest Sat over every package the "
    "mediator could propose in each case; 'unrejected' is the same over the packages that "
    "no party rejects (none below its fallback, none with an option it cannot accept), the "
    "only ones a mediation can succeed with. For LLM parties it is only the rule parties' "
    "range."
)


def _n(*cells: Cell | None) -> str:
    """Episodes (cases x replicates) behind a row's cells, '/'-joined where they differ."""
    counts = [str(len(c.values)) if c is not None else "0" for c in cells]
    return "/".join(dict.fromkeys(counts)) if counts else "0"


def _row(label: str, cells: list[str]) -> str:
    return "| " + " | ".join([label, *cells]) + " |"


def _finish(lines: list[str], marks: Markers, undefined: Undefined) -> Lines:
    notes = [marks.footnote(), undefined.footnote()]
    return marks.resolve(lines), [n for n in notes if n]


def strategy_table(cells: dict[tuple[str, str], Cell], med: str) -> Lines:
    """Table 5: strategies x NUM=1 / NUM=ALL, reference + Compromising."""
    marks, undefined = Markers(), Undefined()
    head = [f"NUM=1 {HEADERS[m]}" for m in OUTCOME] + [f"NUM=ALL {HEADERS[m]}" for m in OUTCOME]
    head.append("n (NUM=1/ALL)")
    lines = [_row("Setting", head), "|---" * (len(head) + 1) + "|"]
    default = cells.get(("general", med))
    first = [cell_text(default, m, None, marks, undefined) for m in OUTCOME]
    lines.append(_row("Default Setting", [*first, *first, _n(default)]))
    for mode in MODES:
        row = []
        both = []
        for scope in ("one", "all"):
            ref = cells.get((f"strategy:compromising@{scope}", med))
            cell = cells.get((f"strategy:{mode}@{scope}", med))
            row += [cell_text(cell, m, ref, marks, undefined) for m in OUTCOME]
            both.append(cell)
        lines.append(_row(f"+ {mode.capitalize()}", [*row, _n(*both)]))
    return _finish(lines, marks, undefined)


def cause_table(cells: dict[tuple[str, str], Cell], med: str, conditions: list[str]) -> Lines:
    """Table 6: + each dispute cause, reference + Information Conflict."""
    marks, undefined = Markers(), Undefined()
    names = {c.key: c.en for c in dispute_causes()}
    lines = [_row("Setting", [*(HEADERS[m] for m in OUTCOME), "n"]), "|---" * 6 + "|"]
    default = cells.get(("general", med))
    first = [cell_text(default, m, None, marks, undefined) for m in OUTCOME]
    lines.append(_row("Default Setting", [*first, _n(default)]))
    ref = cells.get(("cause:information", med))
    for cond in conditions:
        if cond.startswith("cause:"):
            key = cond.removeprefix("cause:").split("@")[0]
            cell = cells.get((cond, med))
            row = [cell_text(cell, m, ref, marks, undefined) for m in OUTCOME]
            lines.append(_row(f"+ {names.get(key, key)}", [*row, _n(cell)]))
    return _finish(lines, marks, undefined)


def per_case_mean(cells: list[Cell | None], metric: str) -> Cell:
    """One value per case and replicate: its mean over `cells`, where it is defined.

    Table 7's ROUGE-L column spans every expertise level of a retriever. The rule
    mediator's points of contention do not depend on retrieval, so pooling the levels
    would count each case four times over (identical copies), halving the CI; an LLM's
    may vary, so the case's value is its mean over the levels.
    """
    merged = Cell()
    seen: dict[Key, list[float]] = defaultdict(list)
    for cell in cells:
        for key, values in getattr(cell, "values", {}).items():
            x = values.get(metric, math.nan)
            seen[key] += [] if math.isnan(x) else [x]
            if math.isnan(x) and cell is not None:
                merged.why[key].setdefault(metric, cell.why.get(key, {}).get(metric, NOT_SCORED))
    for key, xs in seen.items():
        merged.values[key] = {metric: math.fsum(xs) / len(xs) if xs else math.nan}
    return merged


def expertise_table(cells: dict[tuple[str, str], Cell], mediators: list[str]) -> Lines:
    """Table 7: per mediator and retriever, ROUGE-L and recall w/o EK and with the top 3,
    5, 10 bases (BM25's, or the case's stored retrieval list's)."""
    marks, undefined = Markers(), Undefined()
    bert = [bertscore.METRIC] if any(c.bert_models for c in cells.values()) else []
    head = [*(HEADERS[m] for m in bert), "ROUGE-L F1↑", "ROUGE-L floor", "w/o EK"]
    head.append("w/ EK top-3")
    head += ["w/ EK top-5", "w/ EK top-10", "n"]
    lines = [_row("Mediator", head), "|---" * (len(head) + 1) + "|"]
    for med in mediators:
        ref = cells.get((EXPERTISE[0], med))
        ran = [
            (r, name)
            for r, name in RETRIEVERS
            if any((f"expertise:{r}-top{k}", med) in cells for k in (3, 5, 10))
        ]
        for r, name in ran or RETRIEVERS[:1]:
            levels = [EXPERTISE[0], *(f"expertise:{r}-top{k}" for k in (3, 5, 10))]
            row = []
            for metric in [*bert, "points_rouge_l"]:
                mean = per_case_mean([cells.get((c, med)) for c in levels], metric)
                row.append(cell_text(mean, metric, None, marks, undefined))
            row.append(floor_text(rouge_floor([cells.get((c, med)) for c in levels])))
            row += [
                cell_text(cells.get((c, med)), "legal_basis_recall", ref, marks, undefined)
                for c in levels
            ]
            label = med if len(ran) < 2 else f"{med}, {name}"
            lines.append(_row(label, [*row, _n(*(cells.get((c, med)) for c in levels))]))
    return _finish(lines, marks, undefined)


ADAPTIVE = "strategy_update:adaptive"


def dynamic_table(cells: dict[tuple[str, str], Cell], med: str) -> Lines:
    """Tables 16-17: each mode for every party, static against dynamic (the adaptive
    strategy update), the dynamic cell tested against its static one."""
    marks, undefined = Markers(), Undefined()
    head = [f"{kind} {HEADERS[m]}" for m in OUTCOME for kind in ("static", "dynamic")]
    head.append("n (static/dynamic)")
    lines = [_row("Setting", head), "|---" * (len(head) + 1) + "|"]
    for mode in MODES:
        static = cells.get((f"strategy:{mode}@all", med))
        dynamic = cells.get((f"strategy:{mode}@all,{ADAPTIVE}", med))
        if static is None and dynamic is None:
            continue
        row = []
        for m in OUTCOME:
            row.append(cell_text(static, m, None, marks, undefined))
            row.append(cell_text(dynamic, m, static, marks, undefined))
        lines.append(_row(mode.capitalize(), [*row, _n(static, dynamic)]))
    return _finish(lines, marks, undefined)


def generic_table(cells: dict[tuple[str, str], Cell], conditions: list[str]) -> Lines:
    marks, undefined = Markers(), Undefined()
    bert = any(c.bert_models for c in cells.values())
    metrics = [*OUTCOME, *(m for m in SOLUTION if bert or m != bertscore.METRIC)]
    at = metrics.index("points_rouge_l") + 1
    heads = [HEADERS[m] for m in metrics]
    heads = [heads[0], heads[1], "Sat range", *heads[2:at], "ROUGE-L floor", *heads[at:]]
    lines = [_row("condition | mediator", [*heads, "n"])]
    lines.append("|---" * (len(heads) + 3) + "|")
    order = {c: i for i, c in enumerate(conditions)}
    for cond, med in sorted(cells, key=lambda k: (k[1], order.get(k[0], 99))):
        ref = cells.get((conditions[0], med))
        row = [cell_text(cells[(cond, med)], m, ref, marks, undefined) for m in metrics]
        row.insert(at, floor_text(rouge_floor([cells[(cond, med)]])))
        row.insert(2, sat_range_text(sat_range([cells[(cond, med)]])))
        lines.append(_row(f"{cond} | {med}", [*row, _n(cells[(cond, med)])]))
    return _finish(lines, marks, undefined)


def cell_mediators(config: dict[str, Any]) -> list[str]:
    """The mediator columns of the run's cells: each of the spec's mediators, once per
    parameter world (`rule~shipped`, ...) when the spec has a `worlds:` axis."""
    mediators = list(config.get("mediators") or ["rule"])
    worlds = list(config.get("worlds") or ())
    return [f"{m}~{w}" for m in mediators for w in worlds] if worlds else mediators


def staged_markdown(store: Store, run_id: str, config: dict[str, Any]) -> str:
    """The experiment's tables, in whichever of the paper's layouts its design fits."""
    cells = staged_cells(store, run_id)
    conditions = list(config.get("conditions") or ["general"])
    mediators = cell_mediators(config)
    model = (config.get("models") or {}).get("mediator")
    lines = [f"# Experiment `{run_id}` (staged)", ""]
    sections: list[tuple[str, Lines]] = []
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
    if any(c.endswith(f",{ADAPTIVE}") for c in conditions):
        for med in mediators:
            sections.append(
                (
                    f"Dynamic strategies, mediator {med} (AgentMediation Tables 16-17)",
                    dynamic_table(cells, med),
                )
            )
    points = strategy_points_table(store, run_id, conditions)
    if points is not None:
        sections.append(("Strategy points by round", points))
    sections.append(("All cells", generic_table(cells, conditions)))
    judged = any(c.judged for c in cells.values())
    lines += [SOURCES_JUDGED if judged else SOURCES_STAND_IN, ""]
    models = sorted({m for c in cells.values() for m in c.bert_models})
    if models:
        lines += [f"BERTScore F1 of the points of contention with {', '.join(models)}.", ""]
    for title, (table, notes) in sections:
        lines += [f"## {title}", "", *table, ""]
        lines += [x for note in notes for x in (note, "")]
    note = floor_note(rouge_floor(list(cells.values())))
    lines += [note, ""] if note else []
    reach = sat_range(list(cells.values()))
    if reach is not None:
        lines += [f"{SAT_RANGE_NOTE} Over every case of this run: {sat_range_text(reach)}.", ""]
    lines.append(NOTE)
    return "\n".join(lines) + "\n"
