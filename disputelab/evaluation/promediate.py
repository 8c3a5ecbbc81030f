"""ProMediate's metrics (ProMediate paper) as pure functions of consensus trajectories.

Trajectories are indexed by dialogue line (mediator lines included), index 0 the state
before anyone spoke, as in ProMediate. Where the released code returned sentinels (-1,
None) or crashed, these return NaN with a reason; each such choice is in the docstring.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from disputelab.evaluation.metrics import MetricResult

WINDOW = 10
TAU = 0.1
SLOPE_SPAN = 5


def _nan(reason: str, **detail: object) -> MetricResult:
    return MetricResult(math.nan, f"undefined: {reason}", dict(detail))


def consensus_change(overall: Sequence[float], window: int = WINDOW) -> MetricResult:
    """CC = mean of the last `window` states - mean of the first `window`, x 100.

    Fewer than `window` states: NaN (the code returned None)."""
    if len(overall) < window:
        return _nan(f"{len(overall)} states, fewer than {window}")
    head = sum(overall[:window]) / window
    tail = sum(overall[-window:]) / window
    return MetricResult(
        100 * (tail - head),
        f"last {window} minus first {window} states",
        {"first": head, "last": tail},
    )


def topic_level_efficiency(
    by_topic: Mapping[str, Sequence[float]], mentions: Mapping[str, Sequence[int]]
) -> MetricResult:
    """TLE: per topic, (mean of the last k - mean of the first k states at the lines that
    mention it) / mentions, with k = mentions // 5; mean over topics, x 100.

    `mentions[t]` are line indices (1-based: the state after line i is `by_topic[t][i]`).
    A topic with fewer than 5 mentions is left out as undefined (the code scored it 0).
    """
    per_topic: dict[str, float] = {}
    skipped: dict[str, str] = {}
    for topic, lines in mentions.items():
        series = by_topic[topic]
        values = [series[i] for i in lines if 0 <= i < len(series)]
        n = len(values)
        k = n // 5
        if k == 0:
            skipped[topic] = f"{n} mentions, fewer than 5"
            continue
        first = sum(values[:k]) / k
        last = sum(values[-k:]) / k
        per_topic[topic] = (last - first) / n
    if not per_topic:
        return _nan("no topic mentioned at least 5 times", skipped=skipped)
    value = 100 * sum(per_topic.values()) / len(per_topic)
    return MetricResult(
        value, f"mean over {len(per_topic)} topics", {"per_topic": per_topic, "skipped": skipped}
    )


def response_latency(
    overall: Sequence[float],
    mediator_lines: Sequence[int],
    tau: float = TAU,
    window: int = WINDOW,
) -> MetricResult:
    """RL in turns: for every i >= window with C[i-window] - C[i] > tau (a drop), the lines
    until the mediator next speaks after i; mean over drops.

    A drop the mediator never answers counts as +inf, as the paper defines (the code
    dropped it); no drop at all is NaN (the code returned -1).
    """
    drops = [i for i in range(window, len(overall)) if overall[i - window] - overall[i] > tau]
    if not drops:
        return _nan("no drop events")
    lats: list[float] = []
    for i in drops:
        later = [m for m in mediator_lines if m > i]
        lats.append(min(later) - i if later else math.inf)
    return MetricResult(
        sum(lats) / len(lats),
        f"mean over {len(drops)} drop events",
        {"drops": drops, "latencies": lats},
    )


def mediator_effectiveness(
    by_topic: Mapping[str, Sequence[float]],
    interventions: Sequence[tuple[int, Sequence[str]]],
    span: int = SLOPE_SPAN,
) -> MetricResult:
    """ME: per intervention at line t on its targeted topics, the two-point slope after
    ((C[t+span] - C[t]) / span) minus the slope before ((C[t] - C[t-span]) / span), mean
    over topics, then over interventions, x 100.

    Interventions too near either end, or whose targets name no known topic, are left
    out with the reason (the code crashed on the latter).
    """
    scores: list[float] = []
    skipped: list[str] = []
    for t, targets in interventions:
        topics = [x for x in targets if x in by_topic]
        if not topics:
            skipped.append(f"line {t}: no known targeted topic")
            continue
        length = len(next(iter(by_topic.values())))
        if t <= span or t >= length - span:
            skipped.append(f"line {t}: within {span} lines of an end")
            continue
        diffs = []
        for topic in topics:
            c = by_topic[topic]
            diffs.append((c[t + span] - c[t]) / span - (c[t] - c[t - span]) / span)
        scores.append(sum(diffs) / len(diffs))
    if not scores:
        return _nan("no intervention could be scored", skipped=skipped)
    return MetricResult(
        100 * sum(scores) / len(scores),
        f"mean over {len(scores)} interventions",
        {"per_intervention": scores, "skipped": skipped},
    )


MI_DIMENSIONS = (
    "perception_alignment",
    "emotional_dynamics",
    "cognitive_challenges",
    "communication_breakdowns",
)


def mediator_intelligence(ratings: Sequence[Mapping[str, float]]) -> MetricResult:
    """MI: per intervention, the mean of the judge's 1-5 ratings over dimensions that
    apply (-1 = the problem was absent); mean over interventions.

    An intervention where no dimension applies is left out (the code scored it 0)."""
    per: list[float] = []
    absent = 0
    for r in ratings:
        vals = [r[d] for d in MI_DIMENSIONS if d in r and r[d] != -1]
        if not vals:
            absent += 1
            continue
        per.append(sum(vals) / len(vals))
    if not per:
        return _nan("no intervention had an applicable dimension", absent=absent)
    return MetricResult(
        sum(per) / len(per),
        f"mean over {len(per)} interventions",
        {"per_intervention": per, "no_dimension_applied": absent},
    )
