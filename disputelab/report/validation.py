"""A judge validation's table, its notes (every NaN's reason, dropped points), as rows for
the CLI and as Markdown or JSON for `disputelab report`."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import Any

from disputelab.evaluation.validation import CLUSTERED_BY_EPISODE, Stat, TrackerFit
from disputelab.experiments.validation import ValidationReport

COLUMNS = (
    "tracker",
    "judge",
    "reads",
    "points",
    "episodes",
    "Pearson r [95% CI]",
    "Spearman rho [95% CI]",
    "outcome r",
    "kappa (5 levels)",
    "alpha",
    "MAE",
    "cal. MAE",
    "r over best baseline [95% CI]",
    "kappa over best baseline [95% CI]",
    "calls/ep",
    "tokens/ep",
)
NOT_A_JUDGE = "oracle's state: not a judge"

# Each column with a Stat, and the name its reasons are given under.
_STATS = {
    "Pearson r [95% CI]": ("pearson", "Pearson r"),
    "Spearman rho [95% CI]": ("spearman", "Spearman rho"),
    "outcome r": ("outcome_r", "outcome r"),
    "kappa (5 levels)": ("kappa", "kappa"),
    "alpha": ("alpha", "alpha"),
    "MAE": ("mae", "MAE"),
    "cal. MAE": ("calibration_mae", "cal. MAE"),
}


def _num(x: float) -> str:
    return "NaN" if math.isnan(x) else f"{x:.3f}"


def _with_ci(s: Stat) -> str:
    if math.isnan(s.value):
        return "NaN"
    if math.isnan(s.low):
        return f"{s.value:.3f} [n/a]"
    return f"{s.value:.3f} [{s.low:.2f}, {s.high:.2f}]"


def _skill(skills: dict[str, tuple[Stat, str]] | None, statistic: str) -> str:
    if skills is None:
        return "-"
    stat, best = skills[statistic]
    versus = f" (vs {best.removeprefix('baseline: ')})" if best else ""
    return _with_ci(stat) + versus


def _reads(fit: TrackerFit) -> str:
    if fit.reads_oracle:
        return NOT_A_JUDGE
    return BASELINE_READS.get(fit.tracker, "the dialogue")


BASELINE_READS = {
    "baseline: elapsed time": "the clock only",
    "baseline: constant": "nothing",
    "baseline: opening carried forward": "the opening state only",
    "baseline: option words": "option names in the dialogue",
}


def fit_row(fit: TrackerFit, skills: dict[str, tuple[Stat, str]] | None = None) -> dict[str, str]:
    """One tracker's row of the validation table; `skills` its gains over the best
    baseline (None for a baseline, or a tracker without them)."""
    return {
        "tracker": fit.tracker,
        "judge": fit.judge,
        "reads": _reads(fit),
        "r over best baseline [95% CI]": _skill(skills, "r"),
        "kappa over best baseline [95% CI]": _skill(skills, "kappa"),
        "points": str(fit.points),
        "episodes": str(fit.episodes),
        "Pearson r [95% CI]": _with_ci(fit.pearson),
        "Spearman rho [95% CI]": _with_ci(fit.spearman),
        "outcome r": _num(fit.outcome_r.value),
        "kappa (5 levels)": _num(fit.kappa.value),
        "alpha": _num(fit.alpha.value),
        "MAE": _num(fit.mae.value),
        "cal. MAE": _num(fit.calibration_mae.value),
        "calls/ep": f"{fit.calls_per_episode:.1f}",
        "tokens/ep": f"{fit.tokens_per_episode:.0f}",
    }


def validation_rows(report: ValidationReport) -> list[dict[str, str]]:
    return [fit_row(f, report.skills.get(f.tracker)) for f in report.fits]


def validation_heading(report: ValidationReport) -> str:
    p = report.plan
    voice = f"{p.voice} ({p.voice_model})" if p.voice == "hybrid" else p.voice
    return (
        f"Judge validation {report.run_id}: trackers against the oracle on "
        f"{len(report.scenario_ids)} scenarios ({', '.join(report.scenario_ids)}), "
        f"{p.episodes} episodes each, {p.budget} party turns, mediator {p.mediator}, "
        f"voice {voice}"
    )


def validation_notes(report: ValidationReport) -> list[str]:
    """What the table needs said: its unit, dropped points, and why every NaN is NaN."""
    kept = report.fits[0].points if report.fits else 0
    notes = [
        f"Aligned points (topic x party turn, where the oracle and every tracker are "
        f"defined): {kept} of {report.considered}; CIs: {CLUSTERED_BY_EPISODE}. "
        "kappa: quadratic-weighted Cohen's kappa and alpha: ordinal Krippendorff's alpha, "
        "on values rounded to the five levels 0, .25, .5, .75, 1; cal. MAE: MAE after "
        "the monotone fit of the oracle on the tracker with least absolute error "
        "(isotonic median regression), never above the raw MAE. Baselines read less than "
        "a judge must: elapsed time (t / T), a constant (the middle level), the opening "
        "state carried forward, and option words (each party backs the option whose label "
        "its latest utterance shares most words with). Over best baseline: the tracker's "
        "r (kappa) minus the best baseline's on the same points, with a paired percentile "
        "CI resampling "
        "episodes; a judge whose interval includes 0 has not shown that it reads more "
        "than the baseline.",
    ]
    notes += [f"dropped {n}: {why}" for why, n in report.dropped.items()]
    for fit in report.fits:
        if fit.reads_oracle:
            notes.append(
                f"{fit.tracker} reads the stances the rule policy states, which are the "
                "oracle's own inputs: it agrees by construction and is not a judge."
            )
        # Statistics NaN for one reason (say, no aligned points) share one line.
        by_reason: dict[str, list[str]] = {}
        for attr, label in _STATS.values():
            why = getattr(fit, attr).why
            if why:
                by_reason.setdefault(why, []).append(label)
        notes += [f"{fit.tracker}, {', '.join(ls)}: {why}" for why, ls in by_reason.items()]
        notes += [f"{fit.tracker} failed: {why}" for why in fit.failures[:3]]
    notes += [f"left out {why}" for why in report.incomplete]
    return notes


def validation_markdown(report: ValidationReport) -> str:
    rows = validation_rows(report)
    lines = [f"# {validation_heading(report)}", ""]
    lines.append("| " + " | ".join(COLUMNS) + " |")
    lines.append("|" + "---|" * len(COLUMNS))
    lines += ["| " + " | ".join(r[c] for c in COLUMNS) + " |" for r in rows]
    lines.append("")
    lines += [f"- {n}" for n in validation_notes(report)]
    return "\n".join(lines) + "\n"


def _jsonable(value: Any) -> Any:
    """NaN as null: JSON has no NaN."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def validation_json(report: ValidationReport) -> str:
    data = {
        "run_id": report.run_id,
        "plan": report.plan.config(),
        "scenarios": report.scenario_ids,
        "considered_points": report.considered,
        "dropped": report.dropped,
        "incomplete": report.incomplete,
        "trackers": [asdict(f) for f in report.fits],
    }
    return json.dumps(_jsonable(data), indent=2)
