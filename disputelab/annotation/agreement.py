"""Trackers against people: how well each consensus tracker agrees with the annotators
of a stored run, beside how well the annotators agree with each other.

The unit is the one the oracle validation uses: one topic of one episode right after
one party turn t (the tracker's value at index t). An annotator's consensus label there
is 1-5, level 0-4; a tracker's value is rounded to the nearest of the same five levels
(`evaluation.validation.level_of`). Agreement is Krippendorff's alpha at the ordinal
level throughout, so a tracker's alpha with an annotator reads on the same scale as two
annotators' alpha with each other.

Both ways of pooling annotators are reported: the tracker against each annotator (and
the mean of those), and against the majority label, the level more than half of a
unit's annotators gave (units without one are left out of the majority columns and
counted). The other kinds of label (stances, norm flags, the mediator rubric) have no
tracker to score, so only the annotators' alpha on them is given.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from disputelab.annotation.alpha import Level, krippendorff_alpha
from disputelab.annotation.store import NO_STANCE, Label, read_labels
from disputelab.episode import Episode
from disputelab.errors import DisputelabError
from disputelab.evaluation.baselines import BASELINES
from disputelab.evaluation.trackers import LLM_TRACKERS, Trajectory, track
from disputelab.evaluation.validation import level_of
from disputelab.scenario.schema import Scenario

__all__ = ["HumanFit", "HumanReport", "NoLabels", "human_agreement", "human_table"]

Unit = tuple[str, int, str]  # episode, party turn, topic


class NoLabels(DisputelabError, ValueError):
    """A run nobody has labelled (or labelled no consensus of)."""


@dataclass(frozen=True)
class HumanFit:
    """One tracker's agreement with the annotators (ordinal alpha throughout)."""

    tracker: str
    judge: str
    points: int  # units the tracker has a value for and some annotator labelled
    by_annotator: dict[str, float]
    majority_alpha: float
    majority_exact: float  # share of majority units where the tracker gives that level
    failure: str | None = None

    @property
    def mean(self) -> float:
        values = [v for v in self.by_annotator.values() if not math.isnan(v)]
        return sum(values) / len(values) if values else math.nan


@dataclass
class HumanReport:
    run_id: str
    annotators: list[str]
    episodes: int
    units: int  # consensus units at least one annotator labelled
    between: float  # all annotators' alpha on those units
    pairwise: dict[str, float]  # annotator -> mean alpha with each other annotator
    other_kinds: dict[str, tuple[float, int]]  # kind -> (annotators' alpha, units)
    fits: list[HumanFit]
    no_majority: int = 0
    incomplete: list[str] = field(default_factory=list)
    # tracker -> annotator -> nominal alpha of stances, for trackers that read stances
    stances: dict[str, dict[str, float]] = field(default_factory=dict)


def _alpha(units: Sequence[Sequence[Any]], level: Level) -> float:
    kept = [u for u in units if sum(v is not None for v in u) >= 2]
    return krippendorff_alpha(kept, level) if kept else math.nan


def _consensus(
    labels: Sequence[Label], party_turns: dict[tuple[str, int], int]
) -> dict[Unit, dict[str, int]]:
    """Each unit's level (0-4) by annotator, from the consensus labels of party turns."""
    out: dict[Unit, dict[str, int]] = {}
    for x in labels:
        t = party_turns.get((x.episode, x.turn))
        if x.kind == "consensus" and t is not None:
            out.setdefault((x.episode, t, x.topic), {})[x.annotator] = int(x.value) - 1
    return out


def _majority(levels: dict[str, int]) -> int | None:
    level, n = Counter(levels.values()).most_common(1)[0]
    return level if n * 2 > len(levels) else None


def _fit(
    name: str,
    judge: str,
    trajectories: dict[str, Trajectory],
    truth: dict[Unit, dict[str, int]],
    annotators: list[str],
) -> HumanFit:
    levels: dict[Unit, int] = {}
    for (episode, t, topic), _ in truth.items():
        values = trajectories[episode].by_topic.get(topic, [])
        if t < len(values) and not math.isnan(values[t]):
            levels[(episode, t, topic)] = level_of(values[t])
    by_annotator = {
        a: _alpha([(levels[u], truth[u].get(a)) for u in levels], "ordinal") for a in annotators
    }
    majority = {u: m for u in levels if (m := _majority(truth[u])) is not None}
    pairs = [(levels[u], m) for u, m in majority.items()]
    exact = sum(a == b for a, b in pairs) / len(pairs) if pairs else math.nan
    failures = [tr.failure for tr in trajectories.values() if tr.failure]
    return HumanFit(
        name,
        judge,
        len(levels),
        by_annotator,
        _alpha(pairs, "ordinal"),
        exact,
        failures[0] if failures else None,
    )


def _other_kinds(labels: Sequence[Label], annotators: list[str]) -> dict[str, tuple[float, int]]:
    """The annotators' alpha on stances (nominal), norm flags (nominal) and the rubric
    (ordinal), each unit one thing one label is about."""
    out: dict[str, tuple[float, int]] = {}
    for kind, level in (("stance", "nominal"), ("norm", "nominal"), ("rubric", "ordinal")):
        units: dict[tuple[str, ...], dict[str, str]] = {}
        for x in labels:
            if x.kind == kind:
                key = (x.episode, str(x.turn), x.party, x.topic, x.item)
                units.setdefault(key, {})[x.annotator] = x.value
        rows = [[u.get(a) for a in annotators] for u in units.values()]
        values = (
            [[None if v is None else int(v) for v in r] for r in rows] if kind != "stance" else rows
        )
        out[kind] = (_alpha(values, level), sum(len(u) >= 2 for u in units.values()))  # type: ignore[arg-type]
    return out


def _pairwise(truth: dict[Unit, dict[str, int]], annotators: list[str]) -> dict[str, float]:
    """Each annotator's mean alpha with every other annotator, on the units both labelled."""
    by_pair = {
        (a, b): _alpha([(u.get(a), u.get(b)) for u in truth.values()], "ordinal")
        for a, b in combinations(annotators, 2)
    }
    out = {}
    for a in annotators:
        mine = [v for pair, v in by_pair.items() if a in pair and not math.isnan(v)]
        out[a] = sum(mine) / len(mine) if mine else math.nan
    return out


async def _track_all(
    names: Sequence[str], records: dict[str, Any], judges: Sequence[Any]
) -> dict[str, dict[str, Trajectory]]:
    """Each tracker's (and baseline's) trajectory of each episode of `records`."""
    tracked: dict[str, dict[str, Trajectory]] = {}
    for name in [*names, *BASELINES]:
        tracked[name] = {}
        for eid, record in records.items():
            sc = Scenario.model_validate(record.scenario)
            if name in BASELINES:
                tracked[name][eid] = BASELINES[name](record.episode, sc)
            else:
                tracked[name][eid] = await track(name, record.episode, sc, judges)
    return tracked


def stated_stances(episode: Episode, scenario: Scenario) -> dict[tuple[int, str, str], str]:
    """(party turn, party, topic) -> the option the party had last stated by then
    (`none` before it stated one): the self-report tracker's reading of stances."""
    latest: dict[str, dict[str, str]] = {}
    out: dict[tuple[int, str, str], str] = {}
    for turn in episode.turns:
        if turn.role != "party":
            continue
        if turn.action is not None:
            stated = turn.action.stances.items()
            latest[turn.speaker] = {k: s.option or NO_STANCE for k, s in stated}
        for party in scenario.parties:
            for topic in scenario.topics:
                said = latest.get(party.id, {}).get(topic.id, NO_STANCE)
                out[(turn.party_turn, party.id, topic.id)] = said
    return out


def _stance_reading(
    name: str, trajectory: Trajectory, episode: Episode, scenario: Scenario
) -> dict[tuple[int, str, str], str] | None:
    """A tracker's stance per (party turn, party, topic); None for one that reads none."""
    if name == "self-report":
        return stated_stances(episode, scenario)
    if not trajectory.stances:
        return None
    return {
        (t, party, topic): option or NO_STANCE
        for topic, states in trajectory.stances.items()
        for t, by_party in enumerate(states)
        for party, option in by_party.items()
    }


def _stance_fits(
    tracked: dict[str, dict[str, Trajectory]],
    records: dict[str, Any],
    truth: dict[tuple[str, int, str, str], dict[str, str]],
    annotators: list[str],
) -> dict[str, dict[str, float]]:
    """Tracker -> annotator -> nominal alpha of their stances, for trackers with some."""
    out: dict[str, dict[str, float]] = {}
    for name, trajectories in tracked.items():
        read: dict[tuple[str, int, str, str], str] = {}
        for eid, trajectory in trajectories.items():
            sc = Scenario.model_validate(records[eid].scenario)
            reading = _stance_reading(name, trajectory, records[eid].episode, sc)
            read |= {(eid, *k): v for k, v in (reading or {}).items()}
        if read:
            out[name] = {
                a: _alpha([(read[u], truth[u].get(a)) for u in truth if u in read], "nominal")
                for a in annotators
            }
    return out


def _stance_truth(
    labels: Sequence[Label], party_turns: dict[tuple[str, int], int]
) -> dict[tuple[str, int, str, str], dict[str, str]]:
    out: dict[tuple[str, int, str, str], dict[str, str]] = {}
    for x in labels:
        t = party_turns.get((x.episode, x.turn))
        if x.kind == "stance" and t is not None:
            out.setdefault((x.episode, t, x.party, x.topic), {})[x.annotator] = x.value
    return out


def _records(store: Any, run_id: str, labels: Sequence[Label]) -> tuple[dict[str, Any], list[str]]:
    """The run's finished episodes that were labelled, and those left out, why."""
    records, incomplete = {}, []
    labelled = {x.episode for x in labels}
    for eid in store.episode_ids(run_id):
        if eid not in labelled:
            continue
        record = store.load_episode(eid)
        if record.complete:
            records[eid] = record
        else:
            incomplete.append(f"{eid}: did not finish")
    return records, incomplete


async def human_agreement(
    store: Any, run_id: str, trackers: Sequence[str], judges: Sequence[Any] = (), judge: str = ""
) -> HumanReport:
    """Score `trackers` (and the baselines) on `run_id` of `store` against the labels
    its annotators gave; `judges` are asked by the judge-based trackers, named `judge`
    in the table. NoLabels when nobody labelled a consensus of the run."""
    labels = read_labels(store.root, run_id)
    records, incomplete = _records(store, run_id, labels)
    party_turns = {
        (eid, t.index): t.party_turn
        for eid, r in records.items()
        for t in r.episode.turns
        if t.role == "party"
    }
    truth = _consensus(labels, party_turns)
    if not truth:
        raise NoLabels(f"run {run_id} has no consensus labels; annotate it first")
    annotators = sorted({a for levels in truth.values() for a in levels})
    tracked = await _track_all(trackers, records, judges)
    fits = [
        _fit(n, judge if n in LLM_TRACKERS else "-", ts, truth, annotators)
        for n, ts in tracked.items()
    ]
    stance_truth = _stance_truth(labels, party_turns)
    return HumanReport(
        run_id,
        annotators,
        len(records),
        len(truth),
        _alpha([[u.get(a) for a in annotators] for u in truth.values()], "ordinal"),
        _pairwise(truth, annotators),
        _other_kinds(labels, annotators),
        fits,
        sum(_majority(levels) is None for levels in truth.values()),
        incomplete,
        _stance_fits(tracked, records, stance_truth, annotators),
    )


STANCE_COLUMN = "stance alpha (mean)"


def _num(x: float) -> str:
    return "NaN" if math.isnan(x) else f"{x:.3f}"


def _mean_of(by_annotator: dict[str, float] | None) -> str:
    """The mean of a tracker's stance alphas; '-' for a tracker that reads no stances."""
    if by_annotator is None:
        return "-"
    values = [v for v in by_annotator.values() if not math.isnan(v)]
    return _num(sum(values) / len(values)) if values else "NaN"


def human_table(
    report: HumanReport,
) -> tuple[str, tuple[str, ...], list[dict[str, str]], list[str]]:
    """The report as the validation table prints: heading, columns, rows, notes."""
    who = [f"alpha vs {a}" for a in report.annotators]
    columns = (
        "tracker",
        "judge",
        "points",
        *who,
        "mean alpha vs annotators",
        "alpha vs majority",
        "exact vs majority",
        STANCE_COLUMN,
    )
    between = {"tracker": "annotators with each other", "judge": "-", "points": str(report.units)}
    between |= {c: _num(report.pairwise[a]) for c, a in zip(who, report.annotators, strict=True)}
    between |= {
        "mean alpha vs annotators": _num(report.between),
        "alpha vs majority": "-",
        "exact vs majority": "-",
        STANCE_COLUMN: _num(report.other_kinds["stance"][0]),
    }
    rows = [between]
    for fit in report.fits:
        row = {"tracker": fit.tracker, "judge": fit.judge, "points": str(fit.points)}
        row |= {c: _num(fit.by_annotator[a]) for c, a in zip(who, report.annotators, strict=True)}
        row |= {
            "mean alpha vs annotators": _num(fit.mean),
            "alpha vs majority": _num(fit.majority_alpha),
            "exact vs majority": _num(fit.majority_exact),
            STANCE_COLUMN: _mean_of(report.stances.get(fit.tracker)),
        }
        rows.append(row)
    heading = (
        f"Human validation of run {report.run_id}: trackers against "
        f"{len(report.annotators)} annotators' consensus labels on {report.episodes} episodes"
    )
    return heading, columns, rows, _notes(report)


def _notes(report: HumanReport) -> list[str]:
    notes = [
        f"Units: topic x party turn that an annotator labelled ({report.units}); labels 1-5 "
        "and tracker values rounded to the five levels 0, .25, .5, .75, 1; every alpha is "
        "ordinal Krippendorff's alpha. 'annotators with each other': all annotators' alpha "
        "(mean column) and each annotator's mean alpha with every other. Majority: the "
        "level more than half of a unit's annotators gave; exact: the share of those units "
        f"where the tracker gives it; {report.no_majority} units have no majority. "
        f"{STANCE_COLUMN}: nominal alpha of each party's option per topic after each party "
        "turn, the tracker against each annotator, averaged (the annotators' row: with each "
        "other); self-report reads the options parties last stated, topic-localized its "
        "judge's labels; '-' for a tracker that reads no stances.",
    ]
    words = {
        "stance": "stances (nominal)",
        "norm": "norm flags (nominal)",
        "rubric": "mediator rubric (ordinal)",
    }
    for kind, (alpha, units) in report.other_kinds.items():
        notes.append(f"annotators' alpha on {words[kind]}: {_num(alpha)} on {units} units")
    for fit in report.fits:
        if fit.failure:
            notes.append(f"{fit.tracker} failed: {fit.failure}")
    notes += [f"left out {why}" for why in report.incomplete]
    return notes
