"""What a judge must beat: trackers that read nothing of what the parties mean.

A consensus trajectory rises over a mediated episode, so a "judge" that outputs the
share of the episode elapsed already correlates with the oracle; one that says the same
value everywhere agrees by chance only; one that carries the opening state forward knows
where the topics started and nothing since; one that matches the parties' words against
the option labels reads the dialogue, but only for the names of options, not for what
anyone would accept. A judge's skill is what it scores beyond the best of these on the
same points (`skill_over`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Mapping, Sequence

import numpy as np

from disputelab.consensus import consensus_by_topic
from disputelab.episode import Episode, Stance
from disputelab.evaluation.trackers import Trajectory
from disputelab.evaluation.validation import Stat, _members, weighted_kappa
from disputelab.scenario.schema import Scenario

CONSTANT = 0.5  # the middle level: the value that is never far from any


def elapsed(episode: Episode, scenario: Scenario) -> Trajectory:
    """t / T after party turn t of T, on every topic: the clock, read as consensus."""
    turns = max(1, episode.party_turns)
    values = [t / turns for t in range(episode.party_turns + 1)]
    return Trajectory({t.id: list(values) for t in scenario.topics})


def constant(episode: Episode, scenario: Scenario) -> Trajectory:
    """The middle level on every topic and turn."""
    length = episode.party_turns + 1
    return Trajectory({t.id: [CONSTANT] * length for t in scenario.topics})


def opening_carried_forward(episode: Episode, scenario: Scenario) -> Trajectory:
    """Each topic's consensus before anyone spoke, carried forward unchanged: the last
    stance known before the dialogue, never updated by it."""
    length = episode.party_turns + 1
    start = episode.initial_consensus or {}
    return Trajectory({t.id: [start.get(t.id, CONSTANT)] * length for t in scenario.topics})


# Words of four letters or more: short ones ("the", "and", "for") name no option.
_WORD = re.compile(r"[^\W\d_]{4,}")


def _words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(text))


def _named_option(words: frozenset[str], labels: Mapping[str, frozenset[str]]) -> str | None:
    """The one option whose label shares the most words with `words`; None on a tie or
    when no label shares any."""
    overlap = {option: len(words & label) for option, label in labels.items()}
    best = max(overlap.values(), default=0)
    named = [option for option, n in overlap.items() if n == best]
    return named[0] if best > 0 and len(named) == 1 else None


def lexical_overlap(episode: Episode, scenario: Scenario) -> Trajectory:
    """Each party backs, on each topic, the option whose label its latest utterance
    naming one shares most words with (nothing until it names one); consensus is then
    computed from those stances as the oracle's is. It reads the dialogue for option
    names only: what a party would accept is never inferred."""
    labels = {t.id: {o.id: _words(o.label) for o in t.options} for t in scenario.topics}
    topic_ids = list(labels)
    latest: dict[str, dict[str, Stance]] = {p.id: {} for p in scenario.parties}
    values = consensus_by_topic(topic_ids, list(latest.values()))
    by_topic = {t: [values[t]] for t in topic_ids}
    for turn in episode.turns:
        if turn.role != "party":
            continue
        words = _words(turn.text)
        for t in topic_ids:
            option = _named_option(words, labels[t])
            if option is not None and turn.speaker in latest:
                latest[turn.speaker][t] = Stance(option, (option,))
        values = consensus_by_topic(topic_ids, list(latest.values()))
        for t in topic_ids:
            by_topic[t].append(values[t])
    return Trajectory(by_topic)


BASELINES: dict[str, Callable[[Episode, Scenario], Trajectory]] = {
    "baseline: elapsed time": elapsed,
    "baseline: constant": constant,
    "baseline: opening carried forward": opening_carried_forward,
    "baseline: option words": lexical_overlap,
}


def _r(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    return float(np.corrcoef(x, y)[0, 1])


def _kappa(x: np.ndarray, y: np.ndarray) -> float:
    return weighted_kappa(list(x), list(y)).value


STATISTICS: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {
    "r": _r,
    "kappa": _kappa,
}


def skill_over(
    judge: Sequence[float],
    baselines: Mapping[str, Sequence[float]],
    oracle: Sequence[float],
    clusters: Sequence[Hashable],
    statistic: str = "r",
    resamples: int = 1000,
    seed: int = 0,
) -> tuple[Stat, str]:
    """The judge's statistic minus the best baseline's (chosen on all points), with a
    paired percentile CI resampling whole episodes: judge and baseline are scored on the
    same resampled points each time. Returns the skill and the best baseline's name."""
    fn = STATISTICS[statistic]
    x, y = np.asarray(judge, float), np.asarray(oracle, float)
    scored = {n: fn(np.asarray(b, float), y) for n, b in baselines.items()}
    defined = {n: v for n, v in scored.items() if not np.isnan(v)}
    if not defined or np.isnan(fn(x, y)):
        return Stat.undefined(f"{statistic} undefined for the judge or every baseline"), ""
    best = max(defined, key=lambda n: defined[n])
    b = np.asarray(baselines[best], float)
    value = fn(x, y) - defined[best]
    members = _members(clusters)
    if len(members) < 2:
        return Stat(value, why="one episode: no interval"), best
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        idx = np.concatenate([members[k] for k in rng.integers(0, len(members), len(members))])
        d = fn(x[idx], y[idx]) - fn(b[idx], y[idx])
        if not np.isnan(d):
            draws.append(d)
    if len(draws) < resamples / 2:
        return Stat(value, why=f"{resamples - len(draws)} of {resamples} resamples undefined"), best
    low, high = np.quantile(draws, [0.025, 0.975])
    return Stat(value, float(low), float(high)), best
