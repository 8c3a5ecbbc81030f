"""ProMediate's metrics (ProMediate paper) as pure functions of consensus trajectories.

Trajectories are indexed by dialogue line, as in ProMediate: every line counts, mediator
lines included. Index 0 is the state before anyone spoke and index n the state after line
n (lines counted from 1); a mediator line leaves the parties' state as it was. Where the
released code returned sentinels (-1, None) or crashed, these return NaN with a reason;
each such choice is in the docstring.

Undefined states (NaN, as the self-report tracker gives until every party has spoken) are
dropped, never filled: each metric runs on the trajectory with those states removed, so
windows, slopes and margins count the states that remain (a latency still counts lines),
and the detail says how many were dropped. Filling them with 0 would invent a
disagreement that was never observed.

`promediate_scores` reads an episode into these inputs; `index_by="party-turn"` keeps the
older clock (party turns only, mediator lines removed) as an explicit option.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from disputelab.episode import Episode, Stance, Turn
from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.trackers import Trajectory

WINDOW = 10
TAU = 0.1
SLOPE_SPAN = 5

IndexBy = Literal["dialogue-line", "party-turn"]
INDEX_BY: tuple[IndexBy, ...] = ("dialogue-line", "party-turn")


def _nan(reason: str, **detail: object) -> MetricResult:
    return MetricResult(math.nan, f"undefined: {reason}", dict(detail))


@dataclass(frozen=True)
class _Defined:
    """A trajectory with its undefined states removed; `at[k]` is where `values[k]` was."""

    values: list[float]
    at: list[int]

    def index(self, state: int) -> int | None:
        k = bisect_left(self.at, state)
        return k if k < len(self.at) and self.at[k] == state else None


def _defined(series: Sequence[float]) -> _Defined:
    kept = [(i, v) for i, v in enumerate(series) if not math.isnan(v)]
    return _Defined([v for _, v in kept], [i for i, _ in kept])


def _undefined_count(series: Sequence[float]) -> int:
    return sum(1 for v in series if math.isnan(v))


def consensus_change(overall: Sequence[float], window: int = WINDOW) -> MetricResult:
    """CC = mean of the last `window` states - mean of the first `window`, x 100.

    Undefined states are dropped first. Fewer than `window` defined states: NaN (the code
    returned None)."""
    d = _defined(overall)
    dropped = _undefined_count(overall)
    if len(d.values) < window:
        return _nan(
            f"{len(d.values)} defined states, fewer than {window}", undefined_dropped=dropped
        )
    head = sum(d.values[:window]) / window
    tail = sum(d.values[-window:]) / window
    return MetricResult(
        100 * (tail - head),
        f"last {window} minus first {window} defined states",
        {"first": head, "last": tail, "undefined_dropped": dropped},
    )


def topic_level_efficiency(
    by_topic: Mapping[str, Sequence[float]], mentions: Mapping[str, Sequence[int]]
) -> MetricResult:
    """TLE: per topic, (mean of the last k - mean of the first k states at the lines that
    mention it) / mentions, with k = mentions // 5; mean over topics, x 100.

    `mentions[t]` are line numbers (the state after line i is `by_topic[t][i]`). A mention
    whose state is undefined is dropped and not counted. A topic with fewer than 5
    mentions is left out as undefined (the code scored it 0).
    """
    per_topic: dict[str, float] = {}
    skipped: dict[str, str] = {}
    dropped: dict[str, int] = {}
    for topic, lines in mentions.items():
        series = by_topic[topic]
        outside = [i for i in lines if not 0 <= i < len(series)]
        if outside:
            raise ValueError(
                f"topic {topic!r}: mention at line {outside[0]}, outside the "
                f"{len(series)}-state trajectory"
            )
        values = [series[i] for i in lines if not math.isnan(series[i])]
        if len(values) < len(lines):
            dropped[topic] = len(lines) - len(values)
        n = len(values)
        k = n // 5
        if k == 0:
            skipped[topic] = f"{n} mentions, fewer than 5"
            continue
        first = sum(values[:k]) / k
        last = sum(values[-k:]) / k
        per_topic[topic] = (last - first) / n
    detail = {"skipped": skipped, "undefined_dropped": dropped}
    if not per_topic:
        return _nan("no topic mentioned at least 5 times", **detail)
    value = 100 * sum(per_topic.values()) / len(per_topic)
    return MetricResult(
        value, f"mean over {len(per_topic)} topics", {"per_topic": per_topic, **detail}
    )


def response_latency(
    overall: Sequence[float],
    mediator_lines: Sequence[int],
    tau: float = TAU,
    window: int = WINDOW,
) -> MetricResult:
    """RL in turns: for every state i that lies more than `tau` below the state `window`
    defined states earlier (a drop), the lines from i until the mediator's next line; mean
    over drops.

    `mediator_lines` are line numbers: the mediator's line n follows state n - 1, so
    answering a drop at once is a latency of 1 (the code compared a 0-based line position
    with a state index, so it never counted an immediate answer). A drop the mediator never answers
    counts as +inf, as the paper defines (the code dropped it); no drop at all is NaN (the
    code returned -1).
    """
    d = _defined(overall)
    v = d.values
    drops = [k for k in range(window, len(v)) if v[k - window] - v[k] > tau]
    if not drops:
        return _nan("no drop events", undefined_dropped=_undefined_count(overall))
    lines = sorted(mediator_lines)
    lats: list[float] = []
    for k in drops:
        i = d.at[k]
        later = bisect_right(lines, i)
        lats.append(lines[later] - i if later < len(lines) else math.inf)
    return MetricResult(
        sum(lats) / len(lats),
        f"mean over {len(drops)} drop events",
        {
            "drops": [d.at[k] for k in drops],
            "latencies": lats,
            "undefined_dropped": _undefined_count(overall),
        },
    )


def fitted_slope(values: Sequence[float]) -> float:
    """The least-squares slope of `values` against their positions 0, 1, ...

    Fewer than two values: NaN (a line through one point has no slope)."""
    n = len(values)
    if n < 2:
        return math.nan
    mx = (n - 1) / 2
    my = sum(values) / n
    sxx = sum((i - mx) ** 2 for i in range(n))
    return sum((i - mx) * (v - my) for i, v in enumerate(values)) / sxx


def _two_point(c: Sequence[float], k: int, span: int) -> float:
    return (c[k + span] - c[k]) / span - (c[k] - c[k - span]) / span


def _fitted(c: Sequence[float], k: int, span: int) -> float:
    return fitted_slope(c[k : k + span + 1]) - fitted_slope(c[k - span : k + 1])


def mediator_effectiveness(
    by_topic: Mapping[str, Sequence[float]],
    interventions: Sequence[tuple[int, Sequence[str]]],
    span: int = SLOPE_SPAN,
) -> MetricResult:
    """ME: per intervention on its targeted topics, the two-point slope after
    ((C[t+span] - C[t]) / span) minus the slope before ((C[t] - C[t-span]) / span), mean
    over topics, then over interventions, x 100.

    `t` is the number of lines before the intervention (its 0-based position, the released
    code's index), so C[t] is the state it meets. With L lines (L + 1 states) the released
    code scores only span < t < L - span: it skips t = L - span although C[t + span]
    exists there, and that margin is kept. Undefined states are dropped first; the slopes
    and the margin then count the states that remain. Interventions too near either end,
    meeting an undefined state, or whose targets name no known topic are left out with
    the reason (the code crashed on the last).
    """
    return _effectiveness(by_topic, interventions, span, _two_point)


def mediator_effectiveness_fitted(
    by_topic: Mapping[str, Sequence[float]],
    interventions: Sequence[tuple[int, Sequence[str]]],
    span: int = SLOPE_SPAN,
) -> MetricResult:
    """ME as the paper words it: per intervention on its targeted topics, the
    least-squares slope of the `span` + 1 states from C[t] to C[t+span] minus that of the
    states from C[t-span] to C[t]; mean over topics, then interventions, x 100.

    Everything else (the margin, undefined states, unknown topics) is as in the two-point
    `mediator_effectiveness`, so the two differ only where the trajectory bends inside a
    window; on a straight stretch they agree."""
    return _effectiveness(by_topic, interventions, span, _fitted)


def _effectiveness(
    by_topic: Mapping[str, Sequence[float]],
    interventions: Sequence[tuple[int, Sequence[str]]],
    span: int,
    change: Callable[[Sequence[float], int, int], float],
) -> MetricResult:
    defined = {topic: _defined(series) for topic, series in by_topic.items()}
    scores: list[float] = []
    skipped: list[str] = []
    for t, targets in interventions:
        topics = [x for x in targets if x in by_topic]
        if not topics:
            skipped.append(f"line {t}: no known targeted topic")
            continue
        diffs = []
        why = ""
        for topic in topics:
            d = defined[topic]
            k = d.index(t)
            lines = len(d.values) - 1
            if k is None:
                why = f"line {t}: the state there is undefined"
            elif k <= span or k >= lines - span:
                why = (
                    f"line {t}: too near an end (defined state {k} of 0..{lines}; scored "
                    f"only strictly between {span} and {lines - span})"
                )
            else:
                diffs.append(change(d.values, k, span))
        if not diffs:
            skipped.append(why)
            continue
        scores.append(sum(diffs) / len(diffs))
    if not scores:
        return _nan("no intervention could be scored", skipped=skipped)
    return MetricResult(
        100 * sum(scores) / len(scores),
        f"mean over {len(scores)} interventions",
        {"per_intervention": scores, "skipped": skipped},
    )


# ---- from an episode ----------------------------------------------------------------------
@dataclass(frozen=True)
class Events:
    """Where the metrics look, on one clock: `mediator_lines` for RL (the state after the
    mediator's line n is C[n]); `interventions` for ME (lines before it, targeted topics);
    `mentions` for TLE (the lines that touch each topic)."""

    mediator_lines: list[int]
    interventions: list[tuple[int, list[str]]]
    mentions: dict[str, list[int]]


# The stage of a private caucus turn (the roundtable protocol's `caucus.STAGE`).
CAUCUS = "caucus"


def table_lines(episode: Episode) -> list[Turn]:
    """The episode's lines as said at the table, numbered from 1 by their position here:
    a caucus (a party speaking to the mediator alone) is not a line of the dialogue."""
    return [t for t in episode.turns if t.stage != CAUCUS]


def on_dialogue_lines(series: Sequence[float], episode: Episode) -> list[float]:
    """A tracker's party-turn trajectory re-indexed by dialogue line: each line carries
    the state after the party turns completed by then, so a mediator or system line
    repeats the state before it, as ProMediate's tracker does."""
    if len(series) != episode.party_turns + 1:
        raise ValueError(
            f"trajectory has {len(series)} states; the episode has "
            f"{episode.party_turns} party turns, so {episode.party_turns + 1} were expected"
        )
    return [series[0], *(series[t.party_turn] for t in table_lines(episode))]


def episode_events(episode: Episode, topics: Sequence[str], index_by: IndexBy) -> Events:
    """Mediator lines, interventions and topic mentions on the clock `index_by`.

    An intervention targets the topics of its proposal, or every topic if it proposed
    none (ProMediate asks an LLM instead). A party line mentions a topic when it states a
    stance there for the first time or a different one than before (ProMediate asks an LLM
    per line); a mediator line mentions the topics it proposes on. Under "party-turn" a
    mediator line after party turn k sits at line k + 1 and meets state k, and its
    proposal counts as a mention at k.
    """
    if index_by not in INDEX_BY:
        raise ValueError(f"index_by must be one of {', '.join(INDEX_BY)}, not {index_by!r}")
    by_line = index_by == "dialogue-line"
    mediator_lines: list[int] = []
    interventions: list[tuple[int, list[str]]] = []
    mentions: dict[str, set[int]] = {}
    last: dict[tuple[str, str], Stance] = {}
    for line, turn in enumerate(table_lines(episode), start=1):
        if turn.role == "mediator":
            met = line - 1 if by_line else turn.party_turn
            proposal = list(turn.intervention.proposal) if turn.intervention else []
            mediator_lines.append(met + 1)
            interventions.append((met, proposal or list(topics)))
            for topic in proposal:
                mentions.setdefault(topic, set()).add(line if by_line else met)
            continue
        if turn.action is None or turn.role != "party":
            continue  # a caucus (a party's system turn to the mediator alone) is not said
        at = line if by_line else turn.party_turn
        for topic, stance in turn.action.stances.items():
            key = (turn.speaker, topic)
            if last.get(key) != stance:
                mentions.setdefault(topic, set()).add(at)
            last[key] = stance
    return Events(mediator_lines, interventions, {t: sorted(v) for t, v in mentions.items()})


PROMEDIATE_METRICS = (
    "consensus_change",
    "topic_level_efficiency",
    "response_latency",
    "mediator_effectiveness",
    "mediator_effectiveness_fitted",
)


@dataclass(frozen=True)
class Judged:
    """Topic mentions (TLE) and targeted topics (ME) from an LLM judge, in the shapes of
    `Events`, on the dialogue-line clock; either is a string saying why the judge failed."""

    mentions: dict[str, list[int]] | str
    targets: list[tuple[int, list[str]]] | str


def promediate_scores(
    traj: Trajectory,
    episode: Episode,
    index_by: IndexBy = "dialogue-line",
    judged: Judged | None = None,
) -> dict[str, MetricResult]:
    """CC, TLE, RL and ME (two-point and fitted) of an episode on a tracker's trajectory,
    indexed by dialogue line unless `index_by="party-turn"` asks for the party-turn clock.
    With `judged`, TLE reads the judge's topic mentions and ME its targeted topics."""
    if traj.failure:
        nan = _nan(traj.failure)
        return dict.fromkeys(PROMEDIATE_METRICS, nan)
    if judged is not None and index_by != "dialogue-line":
        raise ValueError("judged mentions and targets are on the dialogue-line clock")
    if index_by == "dialogue-line":
        by_topic = {t: on_dialogue_lines(s, episode) for t, s in traj.by_topic.items()}
        overall = on_dialogue_lines(traj.overall(), episode)
    else:
        by_topic = {t: list(s) for t, s in traj.by_topic.items()}
        overall = traj.overall()
    events = episode_events(episode, list(by_topic), index_by)
    mentions, targets = events.mentions, events.interventions
    if judged is not None:
        mentions = judged.mentions if not isinstance(judged.mentions, str) else {}
        targets = judged.targets if not isinstance(judged.targets, str) else []
    out = {
        "consensus_change": consensus_change(overall),
        "topic_level_efficiency": topic_level_efficiency(by_topic, mentions),
        "response_latency": response_latency(overall, events.mediator_lines),
        "mediator_effectiveness": mediator_effectiveness(by_topic, targets),
        "mediator_effectiveness_fitted": mediator_effectiveness_fitted(by_topic, targets),
    }
    return out | _judged_notes(out, judged)


def _judged_notes(
    scores: Mapping[str, MetricResult], judged: Judged | None
) -> dict[str, MetricResult]:
    """TLE and ME with where their mentions and targets came from, or the judge's failure."""
    if judged is None:
        return {}
    out = {}
    for metric, source, what in (
        ("topic_level_efficiency", judged.mentions, "topic mentions"),
        ("mediator_effectiveness", judged.targets, "targeted topics"),
        ("mediator_effectiveness_fitted", judged.targets, "targeted topics"),
    ):
        r = scores[metric]
        if isinstance(source, str):
            out[metric] = _nan(source)
        else:
            note = f"{r.explanation}; {what} from the LLM judge"
            out[metric] = MetricResult(r.value, note, {**r.detail, "judged": what})
    return out


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
