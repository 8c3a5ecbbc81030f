"""A comparison's result: the ranking, each arm's metrics side by side, the paired
differences, and cost per episode; rendered as markdown, JSON or CSV."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from disputelab.compare.stats import ArmEstimate, PairedDifference, Strength
from disputelab.evaluation.inference import MIN_CLUSTERS

FORMATS = ("md", "json", "csv")
USAGE = ("calls", "tokens", "cost_usd")  # per episode, where recorded


@dataclass(frozen=True)
class Leaderboard:
    """Arms ranked by Bradley-Terry strength on `metric` from their paired episodes."""

    metric: str
    by: str
    runs: tuple[str, ...]
    higher_is_better: bool
    strengths: tuple[Strength, ...]  # strongest first
    estimates: Mapping[str, Mapping[str, ArmEstimate]]  # metric -> arm -> its mean
    differences: tuple[PairedDifference, ...]  # on `metric`, Holm-adjusted
    usage: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # arm -> per ep.
    resamples: int = 1000

    @property
    def ranking(self) -> list[str]:
        """The ranked arms, strongest first (an arm without any contest is not ranked)."""
        return [s.arm for s in self.strengths if not math.isnan(s.strength)]

    @property
    def arms(self) -> list[str]:
        """Every arm: the ranked ones, then any without a contest."""
        return [s.arm for s in self.strengths]

    def render(self, format: str = "md") -> str:
        if format == "md":
            return self.to_markdown()
        if format == "json":
            return self.to_json()
        if format == "csv":
            return self.to_csv()
        raise ValueError(f"format: unknown {format!r}; use {', '.join(FORMATS)}")

    def to_json(self) -> str:
        data = {
            "metric": self.metric,
            "by": self.by,
            "runs": list(self.runs),
            "higher_is_better": self.higher_is_better,
            "leaderboard": [self._row(s) for s in self.strengths],
            "metrics": {
                m: [asdict(e) for e in arms.values()] for m, arms in self.estimates.items()
            },
            "differences": [asdict(d) for d in self.differences],
        }
        return json.dumps(_no_nan(data), indent=2, ensure_ascii=False)

    def to_csv(self) -> str:
        rows = [self._row(s) for s in self.strengths]
        columns = list(rows[0]) if rows else ["rank", "arm"]
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=columns, restval="", lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: "" if _missing(v) else v for k, v in r.items()} for r in rows)
        return buf.getvalue()

    def _row(self, s: Strength) -> dict[str, Any]:
        """One arm's line of the leaderboard."""
        est = self.estimates.get(self.metric, {}).get(s.arm)
        row: dict[str, Any] = {
            "rank": self.ranking.index(s.arm) + 1 if s.arm in self.ranking else math.nan,
            "arm": s.arm,
            "strength": s.strength,
            "strength_low": s.low,
            "strength_high": s.high,
            "wins": s.wins,
            "comparisons": s.comparisons,
            "mean": est.mean if est else math.nan,
            "mean_low": est.low if est else math.nan,
            "mean_high": est.high if est else math.nan,
            "episodes": est.episodes if est else 0,
            "scenarios": est.scenarios if est else 0,
        }
        for key in USAGE:
            row[f"{key}_per_episode"] = self.usage.get(s.arm, {}).get(key, math.nan)
        return row

    def to_markdown(self) -> str:
        return "\n".join(
            [
                *self._leaderboard_md(),
                "",
                *self._differences_md(),
                "",
                *self._metrics_md(),
            ]
        )

    def _leaderboard_md(self) -> list[str]:
        better = "higher" if self.higher_is_better else "lower"
        lines = [
            f"## Leaderboard: {self.metric} by {self.by} ({better} is better)",
            "",
            f"Runs: {', '.join(self.runs)}. Strength: Bradley-Terry log-strength from paired "
            f"episodes (same scenario, condition and seed), a tie half a win; 95% CI from "
            f"{self.resamples} scenario resamples. Mean: the tables' 95% cluster t interval "
            f"over scenarios. No interval (n/a) below {MIN_CLUSTERS} scenarios, where none "
            "keeps its stated coverage.",
            "",
            "| rank | " + self.by + " | strength [95% CI] | wins / contests | mean [95% CI] "
            "| episodes | scenarios | calls/ep | tokens/ep | cost/ep (USD) |",
            "|---:|---|---|---|---|---:|---:|---:|---:|---:|",
        ]
        for s in self.strengths:
            r = self._row(s)
            cells = [
                _num(r["rank"], "d") if s.arm in self.ranking else "-",
                s.arm,
                _ci(s.strength, s.low, s.high, "+.2f"),
                f"{s.wins:g} / {s.comparisons}",
                _ci(r["mean"], r["mean_low"], r["mean_high"]),
                str(r["episodes"]),
                str(r["scenarios"]),
                _num(r["calls_per_episode"], ".1f"),
                _num(r["tokens_per_episode"], ".0f"),
                _num(r["cost_usd_per_episode"], ".4f"),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        return lines

    def _differences_md(self) -> list[str]:
        lines = [
            f"### Paired differences in {self.metric}",
            "",
            "Row minus column arm over episodes sharing scenario, condition and seed; 95% "
            "cluster t interval over scenarios; p from a Wilcoxon signed-rank test on "
            "scenario means "
            "(McNemar for one binary pair a scenario), Holm-adjusted over the pairs.",
            "",
            "| a | b | a - b [95% CI] | pairs | scenarios | p | p (Holm) |",
            "|---|---|---|---:|---:|---:|---:|",
        ]
        for d in self.differences:
            lines.append(
                f"| {d.a} | {d.b} | {_ci(d.mean, d.low, d.high, '+.3f')} | {d.pairs} "
                f"| {d.scenarios} | {_num(d.p_value, '.3g')} | {_num(d.p_holm, '.3g')} |"
            )
        return lines

    def _metrics_md(self) -> list[str]:
        arms = self.arms
        lines = [
            "### Every metric, arms side by side",
            "",
            "Mean [95% cluster t interval over scenarios] over each arm's scored episodes.",
            "",
            "| metric | " + " | ".join(arms) + " |",
            "|---|" + "---|" * len(arms),
        ]
        for metric, by_arm in self.estimates.items():
            cells = [_ci(e.mean, e.low, e.high) if (e := by_arm.get(a)) else "-" for a in arms]
            lines.append(f"| {metric} | " + " | ".join(cells) + " |")
        return lines


def _missing(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _num(v: float, fmt: str) -> str:
    return "n/a" if _missing(v) else format(v, fmt)


def _ci(mean: float, low: float, high: float, fmt: str = ".3f") -> str:
    if _missing(mean):
        return "n/a"
    if _missing(low) or _missing(high):
        return f"{mean:{fmt}} [n/a]"
    return f"{mean:{fmt}} [{low:{fmt}}, {high:{fmt}}]"


def _no_nan(data: Any) -> Any:
    """`data` with NaN as null: JSON has no NaN."""
    if isinstance(data, dict):
        return {k: _no_nan(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_no_nan(v) for v in data]
    return None if _missing(data) else data


def mean_usage(usage: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The mean of each usage figure over the episodes that recorded it."""
    out = {}
    for key in USAGE:
        values = [u[key] for u in usage if key in u]
        if values:
            out[key] = math.fsum(values) / len(values)
    return out
