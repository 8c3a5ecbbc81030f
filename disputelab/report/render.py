"""Render stored runs: a markdown transcript with metric tables, JSON, or CSV."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Sequence
from typing import Any

from disputelab.episode import Turn, TurnChoice
from disputelab.scenario.tki import point_text
from disputelab.store.sqlite import EpisodeRecord, Store, StoredScore

# Metric display order; others follow alphabetically.
_ORDER = [
    "consensus_gain",
    "intervention_timeliness",
    "intervention_effectiveness",
    "final_consensus",
    "resolved",
    "interventions",
    "party_turns",
]


# Characters that make markdown or HTML of text mid-line (the report never starts a line
# with text, so list markers need no escape); a backslash too, so escapes stay escapes.
_MD_ACTIVE = str.maketrans(
    {c: "\\" + c for c in "\\`*[]#|~"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;"}
)
# An underscore opens emphasis only at a word's edge; inside a word (`party_turns`, a
# model's name) it is plain text in CommonMark and GitHub's markdown, and stays as it is.
_EDGE_UNDERSCORE = re.compile(r"(?<!\w)_|_(?!\w)")


def md_text(text: object) -> str:
    """`text` (an utterance, a name, an error) as inert markdown on one line: no HTML tag,
    link, image, emphasis, heading or table cell can open in it, as the HTML report
    escapes the same text."""
    inert = " ".join(str(text).split("\n")).translate(_MD_ACTIVE)
    return _EDGE_UNDERSCORE.sub(r"\\_", inert)


# A line that could open a block in the middle of a paragraph (a list item, a setext
# heading's underline) once it follows a hard line break.
_BLOCK_START = re.compile(r"^(\s*)([-+=]|\d+(?=[.)]))")


def _inert_start(found: re.Match[str]) -> str:
    # A marker character is escaped; a number keeps its digits and escapes the dot or
    # parenthesis after it (CommonMark escapes punctuation only, never a digit).
    indent, marker = found[1], found[2]
    return f"{indent}{marker}\\" if marker[0].isdigit() else f"{indent}\\{marker}"


def md_paragraph(text: object) -> str:
    """A text of several lines (a settlement proposal and its clauses) as one inert
    markdown paragraph that keeps its lines: each line as `md_text` makes it, joined by
    hard line breaks, with a block marker at a line's start escaped."""
    lines = [md_text(line) for line in str(text).split("\n")]
    kept = [lines[0], *(_BLOCK_START.sub(_inert_start, line) for line in lines[1:])]
    return "  \n".join(kept)


def _fmt(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.3f}"


def _sorted_scores(scores: Sequence[StoredScore]) -> list[StoredScore]:
    def key(s: StoredScore) -> tuple[int, str, str]:
        rank = _ORDER.index(s.metric) if s.metric in _ORDER else len(_ORDER)
        return (rank, s.metric, s.evaluator)

    return sorted(scores, key=key)


def _names(record: EpisodeRecord) -> dict[str, str]:
    names = {p["id"]: md_text(p["name"]) for p in record.scenario.get("parties", [])}
    names["mediator"] = "Mediator"
    return names


def _floor_line(choice: TurnChoice, names: dict[str, str]) -> str:
    """How a motivated turn's speaker got the floor, and the private thoughts behind it."""

    def rating(x: float) -> str:  # ratings are on a 1-5 scale with one decimal
        return "NaN" if math.isnan(x) else f"{x:.1f}"

    predicted = names.get(choice.predicted, choice.predicted)
    voiced = next(
        (th for ts in choice.thoughts.values() for th in ts if th.id == choice.thought_id), None
    )
    # The thought that won the floor; an LLM party voices it, a rule party's move still
    # comes from its policy.
    said = f' on the thought "{md_text(voiced.text)}"' if voiced else ""
    others = "; ".join(
        f"{names.get(pid, pid)}: "
        + ", ".join(f'"{md_text(th.text)}" {rating(th.rating)}' for th in ts)
        for pid, ts in choice.thoughts.items()
    )
    return (
        f"> _floor: {choice.rule} (predicted: {predicted}), motivation "
        f"{rating(choice.motivation)}{said}. Private thoughts: {others or '-'}_"
    )


def episode_markdown(store: Store, record: EpisodeRecord) -> str:
    names = _names(record)
    lines = _episode_header(record)
    lines += ["", "### Transcript", ""]
    for t in record.episode.turns:
        lines += _turn_lines(t, names)
    lines += _strategy_table(record.episode.turns, names)
    lines += _usage_table(store.usage(record.episode_id))
    if record.complete:
        lines += _metrics_table(store.scores(record.episode_id))
    return "\n".join(lines)


def _people(agents: dict[str, Any]) -> str:
    """The seats a person filled, each with its participant id: `parties:tenant (p-1a2b)`."""
    suffix = "_participant"
    return ", ".join(
        f"{k.removesuffix(suffix)} ({v})" for k, v in agents.items() if k.endswith(suffix)
    )


def _episode_header(record: EpisodeRecord) -> list[str]:
    """The episode's heading and its facts: scenario, arm, agents, seed and how it ended."""
    ep = record.episode
    lines = [
        f"## Episode `{record.episode_id}`",
        "",
        f"- scenario: `{ep.scenario_id}` ({md_text(record.scenario.get('title', ''))})",
        f"- arm: {md_text(record.arm or '-')}; "
        f"mediator: {md_text(ep.agents.get('mediator', 'none'))}; "
        f"parties: {md_text(ep.agents.get('parties', '?'))}; seed: {ep.seed}; "
        f"condition: {md_text(ep.condition)}",
    ]
    drawn = record.scenario.get("drawn_strategy") or {}
    if drawn.get("party"):
        mode = drawn.get("strategy", "?")
        if drawn.get("assertiveness") is not None:
            mode = point_text((drawn["assertiveness"], drawn["cooperativeness"]))
        who = _names(record).get(drawn["party"], md_text(drawn["party"]))
        lines.append(f"- one-party strategy: {md_text(mode)}, drawn for {who} by the seed")
    people = _people(ep.agents)
    if people:
        lines.append(f"- people: {md_text(people)}")
    if not record.complete:
        lines.append(
            f"- status: **{record.status.value.upper()}** (not a finished episode; "
            "no metrics are reported for it)"
            + (f": {md_text(record.error)}" if record.error else "")
        )
    elif ep.outcome is not None:
        lines.append(f"- status: **{ep.outcome.status.value}**: {md_text(ep.outcome.stop_reason)}")
        agreed = ", ".join(
            f"{md_text(t)}={md_text(o or '-')}" for t, o in ep.outcome.agreement.items()
        )
        lines.append(f"- agreement: {agreed or '-'}")
    return lines


def _turn_lines(t: Turn, names: dict[str, str]) -> list[str]:
    """One turn of the transcript: who said what (with the consensus after it), how a
    motivated speaker got the floor, and what listeners heard instead, then a blank line."""
    s = ""
    if t.consensus:
        s = f" _(S={sum(t.consensus.values()) / len(t.consensus):.2f})_"
    label = "party turn" if t.role == "party" else "after party turn"
    speaker = names.get(t.speaker, t.speaker)
    if t.stage == "caucus":  # a party speaking to the mediator alone
        speaker += " (in private, to the mediator only)"
    lines = [f"**{label} {t.party_turn} · {speaker}:** {md_paragraph(t.text)}{s}"]
    if t.choice is not None:
        lines.append(_floor_line(t.choice, names))
    if t.action is not None and t.action.strategy is not None:
        lines.append(f"> _strategy: {point_text(t.action.strategy)}_")
    heard: dict[str, list[str]] = {}  # what listeners heard instead (a remediator's rewrite)
    for listener, text in (t.delivered or {}).items():
        if text != t.text:
            heard.setdefault(md_text(text), []).append(names.get(listener, md_text(listener)))
    for text, who in heard.items():
        lines.append(f"> heard by {', '.join(who)} as: {text}")
    lines.append("")
    return lines


def _strategy_table(turns: Sequence[Turn], names: dict[str, str]) -> list[str]:
    """Each party's strategy point turn by turn, where the episode recorded them (an
    adaptive or drawn strategy): one row per party, one column per stage's turn."""
    points: dict[str, dict[str, tuple[float, float]]] = {}
    columns: list[str] = []
    spoken: dict[tuple[str, str], int] = {}
    for t in turns:
        if t.role != "party" or t.action is None or t.action.strategy is None:
            continue
        k = spoken[(t.speaker, t.stage)] = spoken.get((t.speaker, t.stage), 0) + 1
        column = t.stage if t.stage != "bargaining" else f"round {k}"
        if column not in columns:
            columns.append(column)
        points.setdefault(t.speaker, {})[column] = t.action.strategy
    if not points:
        return []
    lines = ["### Strategy points", "", "| party | " + " | ".join(columns) + " |"]
    lines.append("|---" * (len(columns) + 1) + "|")
    for pid, row in points.items():
        cells = [point_text(row[c]) if c in row else "-" for c in columns]
        lines.append(f"| {names.get(pid, md_text(pid))} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _usage_table(usage: list[dict[str, Any]]) -> list[str]:
    """The episode's model use by role and model, or nothing when it used none."""
    if not usage:
        return []
    lines = [
        "### Model use",
        "",
        "| role | model | calls | tokens in | tokens out | cost (USD) |",
        "|---|---|---|---|---|---|",
    ]
    for u in usage:
        cost = "unknown" if u["cost_usd"] is None else f"{u['cost_usd']:.4f}"
        lines.append(
            f"| {md_text(u['role'])} | {md_text(u['model'])} | {u['calls']} | {u['input_tokens']} "
            f"| {u['output_tokens']} | {cost} |"
        )
    lines.append("")
    return lines


def _metrics_table(scores: Sequence[StoredScore]) -> list[str]:
    """The episode's stored scores in display order, or nothing when it has none."""
    if not scores:
        return []
    lines = [
        "### Metrics",
        "",
        "| metric | value | evaluator | explanation |",
        "|---|---|---|---|",
    ]
    for sc in _sorted_scores(scores):
        lines.append(
            f"| {md_text(sc.metric)} | {_fmt(sc.value)} | {md_text(sc.evaluator)} v{sc.version} "
            f"| {md_text(sc.explanation)} |"
        )
    lines.append("")
    return lines


def run_markdown(store: Store, run_id: str) -> str:
    records = [store.load_episode(e) for e in store.episode_ids(run_id)]
    out = [f"# Run `{run_id}`", ""]
    out += [episode_markdown(store, r) for r in records]
    return "\n".join(out)


def episode_json(store: Store, record: EpisodeRecord) -> dict[str, Any]:
    ep = record.episode
    return {
        "episode_id": record.episode_id,
        "run_id": record.run_id,
        "arm": record.arm,
        "status": record.status.value,
        "complete": record.complete,
        "error": record.error or None,
        "matched_episode_id": record.matched_episode_id,
        "scenario_id": ep.scenario_id,
        "condition": ep.condition,
        "protocol": ep.protocol,
        "agents": ep.agents,
        "seed": ep.seed,
        "outcome": ep.outcome.to_dict() if ep.outcome else None,
        "initial_consensus": ep.initial_consensus,
        "wall_time_s": ep.wall_time_s,
        "turns": [t.to_dict() for t in ep.turns],
        "usage": store.usage(record.episode_id),
        "scores": [
            {
                "evaluator": s.evaluator,
                "version": s.version,
                "judge_model": s.judge_model,
                "metric": s.metric,
                "value": None if math.isnan(s.value) else s.value,
                "explanation": s.explanation,
                "detail": s.detail,
            }
            for s in store.scores(record.episode_id)
        ]
        if record.complete
        else [],
        "scenario": record.scenario,
    }


def run_json(store: Store, run_id: str) -> str:
    episodes = [episode_json(store, store.load_episode(e)) for e in store.episode_ids(run_id)]
    return json.dumps({"run_id": run_id, "episodes": episodes}, ensure_ascii=False, indent=2)


def run_rows(store: Store, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """One row per episode with its metrics as columns; incomplete episodes get no metrics.
    Two queries a run: a row needs the episode's record and scores, never its turns."""
    rows = []
    for run_id in run_ids:
        scores = store.run_scores(run_id)
        for rec in store.episode_headers(run_id):
            rows.append(episode_row(store, rec, scores.get(rec.episode_id, [])))
    return rows


def episode_row(
    store: Store, rec: EpisodeRecord, scores: Sequence[StoredScore] | None = None
) -> dict[str, Any]:
    """An episode's row: where it sits, how it ended, and a column per metric (named
    `evaluator.metric` where two evaluators store the same metric). `scores` saves a
    read when the caller has them already."""
    ep = rec.episode
    row: dict[str, Any] = {
        "episode_id": rec.episode_id,
        "run_id": rec.run_id,
        "arm": rec.arm,
        "scenario_id": ep.scenario_id,
        "condition": ep.condition,
        "protocol": ep.protocol,
        "mediator": ep.agents.get("mediator", ""),
        "parties": ep.agents.get("parties", ""),
        "seed": ep.seed,
        "status": rec.status.value,
        "stop_reason": ep.outcome.stop_reason if ep.outcome else rec.error,
        "matched_episode_id": rec.matched_episode_id or "",
    }
    if rec.complete:
        if scores is None:
            scores = store.scores(rec.episode_id)
        evaluators: dict[str, set[str]] = {}
        for s in scores:
            evaluators.setdefault(s.metric, set()).add(s.evaluator)
        for s in scores:
            col = s.metric if len(evaluators[s.metric]) == 1 else f"{s.evaluator}.{s.metric}"
            row[col] = s.value  # NaN stays NaN; CSV writes it as an empty cell
    return row


def rows_csv(rows: list[dict[str, Any]]) -> str:
    columns: list[str] = []
    for r in rows:
        columns += [c for c in r if c not in columns]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: _csv_cell(v) for k, v in r.items()} for r in rows)
    return buf.getvalue()


# What a spreadsheet reads as the start of a formula (OWASP's list): such a cell of text
# is written after a quote, which spreadsheets show as text and do not run.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _csv_cell(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value
