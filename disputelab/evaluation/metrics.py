"""SoCRATES-style mediation metrics on a per-party-turn Consensus Score trajectory.

Conventions used throughout this module:

* ``trajectory[0]`` is the consensus before any party speaks and ``trajectory[t]`` the
  consensus after party turn ``t`` (``t = 1..T``), so a dialogue with ``T`` party turns has
  ``T + 1`` entries. Every entry must be a finite number in ``[0, 1]``.
* A mediator intervention is identified by its *position* ``k``: the number of party turns
  completed before it. It sits after party turn ``k`` and before party turn ``k + 1``, so valid
  positions are ``0..T`` (that is ``0..len(trajectory) - 1``).
* An undefined metric is reported as ``NaN`` together with the reason, never as a silent 0 or
  100, so that aggregations can exclude it (see :func:`mean_defined`).

All functions are pure: they never mutate their inputs and depend on nothing but their
arguments.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "TOLERANCE",
    "MetricResult",
    "consensus_gain",
    "consensus_score",
    "drop_events",
    "intervention_effectiveness",
    "intervention_timeliness",
    "mean_defined",
]

TOLERANCE = 1e-9
"""Absolute float tolerance for comparing drops to ``tau`` and scores to 1."""

_NAN = math.nan


@dataclass(frozen=True)
class MetricResult:
    """A metric value together with a human-readable account of how it was obtained.

    Attributes:
        value: The metric value, ``NaN`` when the metric is undefined for the input.
        explanation: One sentence saying how the value was reached, or why it is ``NaN``.
        detail: Per-event numbers backing the value; always JSON-serialisable.
    """

    value: float
    explanation: str
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def defined(self) -> bool:
        """Whether the metric has a value (i.e. ``value`` is not ``NaN``)."""
        return not math.isnan(self.value)


def _undefined(reason: str, detail: dict[str, Any] | None = None) -> MetricResult:
    return MetricResult(value=_NAN, explanation=f"undefined: {reason}.", detail=detail or {})


def _check_trajectory(trajectory: Sequence[float]) -> list[float]:
    # Copy into plain floats so numpy scalars never leak into the JSON-serialisable detail.
    values = [float(s) for s in trajectory]
    for t, s in enumerate(values):
        if not math.isfinite(s) or not 0.0 <= s <= 1.0:
            raise ValueError(f"trajectory[{t}] = {s!r} is not a finite score in [0, 1]")
    return values


def _check_positions(interventions: Sequence[int], n_points: int) -> list[int]:
    positions = [int(k) for k in interventions]
    for k in positions:
        if not 0 <= k <= n_points - 1:
            raise ValueError(
                f"intervention position {k} is outside [0, {n_points - 1}] "
                f"for a trajectory of {n_points} points"
            )
    return positions


def _check_score(name: str, s: float) -> None:
    if not 0.0 <= s <= 1.0:
        raise ValueError(f"{name} = {s!r} is not a score in [0, 1]")


def _mean(values: Sequence[float]) -> float:
    # fsum keeps the mean of scores in [0, 1] inside [0, 1] and order-independent.
    return math.fsum(values) / len(values)


def consensus_score(topic_values: Sequence[float]) -> float:
    """Consensus Score of one dialogue state: the unweighted mean of per-topic values.

    Every topic counts equally regardless of how much it was discussed. An empty sequence has
    no consensus to report and yields ``NaN``.
    """
    if len(topic_values) == 0:
        return _NAN
    return _mean([float(v) for v in topic_values])


def consensus_gain(s_med: float, s_unmed: float) -> MetricResult:
    """Consensus Gain (CG) of a mediated run over its unmediated twin, in percent.

    ``CG = (s_med - s_unmed) / (1 - s_unmed) * 100`` using the terminal consensus scores, i.e.
    the share of the consensus the unmediated run left on the table that mediation recovered.

    Edge cases:
        * If ``s_unmed`` equals 1 (within ``1e-9``) the normalisation divides by zero, so the
          raw change ``(s_med - s_unmed) * 100`` is reported instead (0 or negative in practice)
          and ``detail["rule"]`` is ``"raw_change"``.
        * If either score is ``NaN`` (e.g. a run produced no terminal score) the result is
          ``NaN`` with the reason.

    Raises:
        ValueError: If a non-NaN score lies outside ``[0, 1]``.
    """
    missing = [name for name, s in (("s_med", s_med), ("s_unmed", s_unmed)) if math.isnan(s)]
    if missing:
        return _undefined(
            f"{' and '.join(missing)} is NaN, so there is no terminal score to compare",
            {
                "s_med": None if math.isnan(s_med) else float(s_med),
                "s_unmed": None if math.isnan(s_unmed) else float(s_unmed),
            },
        )
    _check_score("s_med", s_med)
    _check_score("s_unmed", s_unmed)
    s_med, s_unmed = float(s_med), float(s_unmed)
    detail: dict[str, Any] = {"s_med": s_med, "s_unmed": s_unmed}
    if s_unmed >= 1.0 - TOLERANCE:
        value = (s_med - s_unmed) * 100.0
        detail["rule"] = "raw_change"
        return MetricResult(
            value=value,
            explanation=(
                f"S_unmed = {s_unmed:.6g} is already 1 so the normalised gain is undefined; "
                f"reporting the raw change (S_med - S_unmed) * 100 = {value:.6g}."
            ),
            detail=detail,
        )
    value = (s_med - s_unmed) / (1.0 - s_unmed) * 100.0
    detail["rule"] = "normalised"
    return MetricResult(
        value=value,
        explanation=(
            f"CG = ({s_med:.6g} - {s_unmed:.6g}) / (1 - {s_unmed:.6g}) * 100 = {value:.6g}."
        ),
        detail=detail,
    )


def drop_events(trajectory: Sequence[float], tau: float = 0.1) -> list[int]:
    """Party turns ``t >= 1`` at which consensus fell by at least ``tau``.

    A drop is ``trajectory[t] - trajectory[t - 1] <= -tau``; the comparison allows ``1e-9`` of
    float slack so that a fall of exactly ``tau`` (e.g. 0.5 -> 0.4) counts.

    Raises:
        ValueError: If ``tau`` is not positive or the trajectory is not in ``[0, 1]``.
    """
    if not tau > 0.0:
        raise ValueError(f"tau must be positive, got {tau!r}")
    values = _check_trajectory(trajectory)
    return [t for t in range(1, len(values)) if values[t] - values[t - 1] <= -tau + TOLERANCE]


def intervention_timeliness(
    trajectory: Sequence[float],
    interventions: Sequence[int],
    tau: float = 0.1,
    window: int = 10,
) -> MetricResult:
    """Intervention Timeliness (IT): how promptly the mediator responds to consensus drops.

    For every drop event ``t`` (see :func:`drop_events`) the response is the earliest
    intervention position ``k`` with ``t <= k <= t + window``, scored
    ``(1 - (k - t) / window) * 100``: an intervention straight after the drop turn (``k == t``)
    scores 100, one at the far edge of the window scores 0, and no response scores 0. Each drop
    is scored on its own, so a single intervention may answer several overlapping drops. The
    value is the mean over drop events.

    Edge cases:
        * Empty trajectory: ``NaN`` ("empty dialogue").
        * No drop events: ``NaN`` ("no drop events"); there was nothing to respond to, so the
          run is excluded from averages instead of being scored 0 or 100.
        * Drops but no interventions at all: every drop scores 0.

    Raises:
        ValueError: If ``tau`` or ``window`` is not positive, the trajectory is not in
            ``[0, 1]``, or a position lies outside ``[0, len(trajectory) - 1]``.
    """
    if window < 1:
        raise ValueError(f"window must be a positive number of turns, got {window!r}")
    if len(trajectory) == 0:
        return _undefined("empty dialogue, there is no trajectory to score")
    drops = drop_events(trajectory, tau)
    positions = sorted(_check_positions(interventions, len(trajectory)))
    if not drops:
        return _undefined(
            f"no drop events of at least tau = {tau:.6g}, so there was nothing to respond to",
            {"events": []},
        )

    events: list[dict[str, Any]] = []
    for t in drops:
        # positions is sorted, so the first match is the earliest response.
        response = next((k for k in positions if t <= k <= t + window), None)
        score = 0.0 if response is None else (1.0 - (response - t) / window) * 100.0
        events.append({"drop_turn": t, "response_position": response, "score": score})

    value = _mean([e["score"] for e in events])
    answered = sum(e["response_position"] is not None for e in events)
    return MetricResult(
        value=value,
        explanation=(
            f"IT = mean over {len(events)} drop event(s) of (1 - delay / {window}) * 100, "
            f"{answered} answered within the window and {len(events) - answered} scored 0, "
            f"giving {value:.6g}."
        ),
        detail={"tau": float(tau), "window": window, "events": events},
    )


def intervention_effectiveness(
    trajectory: Sequence[float],
    interventions: Sequence[int],
    horizon: int = 5,
) -> MetricResult:
    """Intervention Effectiveness (IE): the consensus recovered ``horizon`` turns after each one.

    For an intervention at position ``k`` the baseline is ``trajectory[k]`` and the outcome is
    ``trajectory[min(k + horizon, len(trajectory) - 1)]``; its score is
    ``(after - base) / (1 - base) * 100``, the share of the remaining gap closed (at most 100).
    The value is the mean over scored interventions.

    Edge cases:
        * Empty trajectory: ``NaN`` ("empty dialogue").
        * No interventions: ``NaN`` ("no interventions").
        * An intervention within the last ``horizon`` turns is measured against the terminal
          score, because the trajectory is frozen once the dialogue ends.
        * ``base == 1`` (within ``1e-9``): there is no room to improve, so that intervention is
          skipped and listed in ``detail`` with the reason; if every intervention is skipped
          the value is ``NaN`` with that reason.

    Raises:
        ValueError: If ``horizon`` is not positive, the trajectory is not in ``[0, 1]``, or a
            position lies outside ``[0, len(trajectory) - 1]``.
    """
    if horizon < 1:
        raise ValueError(f"horizon must be a positive number of turns, got {horizon!r}")
    if len(trajectory) == 0:
        return _undefined("empty dialogue, there is no trajectory to score")
    values = _check_trajectory(trajectory)
    positions = _check_positions(interventions, len(values))
    if not positions:
        return _undefined("no interventions to evaluate", {"events": []})
    events = [_ie_event(values, k, horizon) for k in positions]
    return _ie_result(events, horizon)


def _ie_event(values: list[float], k: int, horizon: int) -> dict[str, Any]:
    """One intervention at position ``k`` scored as IE scores it: the share of the gap to 1
    closed ``horizon`` turns on (by the end, if the dialogue ends sooner), or skipped with
    the reason when there is no gap left."""
    last = len(values) - 1
    after_turn = min(k + horizon, last)
    base, after = values[k], values[after_turn]
    event: dict[str, Any] = {
        "position": k,
        "base": base,
        "after_turn": after_turn,
        "after": after,
        "truncated": k + horizon > last,
    }
    if base >= 1.0 - TOLERANCE:
        event["score"] = None
        event["skipped"] = "base consensus is already 1, leaving no room to improve"
    else:
        event["score"] = (after - base) / (1.0 - base) * 100.0
        event["skipped"] = None
    return event


def _ie_result(events: list[dict[str, Any]], horizon: int) -> MetricResult:
    """IE from its scored events: the mean of the scores, or NaN when every one was
    skipped."""
    scores = [e["score"] for e in events if e["score"] is not None]
    detail: dict[str, Any] = {"horizon": horizon, "events": events}
    if not scores:
        return _undefined(
            f"all {len(events)} intervention(s) were skipped because the base consensus "
            "was already 1, leaving no room to improve",
            detail,
        )
    value = _mean(scores)
    skipped = len(events) - len(scores)
    return MetricResult(
        value=value,
        explanation=(
            f"IE = mean over {len(scores)} intervention(s) of (after - base) / (1 - base) * 100 "
            f"with a {horizon}-turn horizon ({skipped} skipped at base 1), giving {value:.6g}."
        ),
        detail=detail,
    )


def mean_defined(results: Iterable[MetricResult]) -> MetricResult:
    """Aggregate per-run results by averaging the defined values and excluding ``NaN`` ones.

    This is the per-run-then-mean-over-runs aggregation: runs where a metric is undefined (e.g.
    IT without drop events) do not pull the average towards 0 or 100. If no result is defined
    the aggregate is ``NaN`` with the reason.
    """
    items = list(results)
    defined = [r.value for r in items if r.defined]
    excluded = [r.explanation for r in items if not r.defined]
    detail: dict[str, Any] = {
        "n_runs": len(items),
        "n_defined": len(defined),
        "values": defined,
        "excluded": excluded,
    }
    if not items:
        return _undefined("no results to aggregate", detail)
    if not defined:
        return _undefined(f"none of the {len(items)} result(s) is defined", detail)
    value = _mean(defined)
    return MetricResult(
        value=value,
        explanation=(
            f"Mean of {len(defined)} defined value(s) = {value:.6g}, "
            f"excluding {len(excluded)} undefined result(s)."
        ),
        detail=detail,
    )
