"""Episodes packed small for the HTML report's embedded JSON.

A 2,000-episode rule experiment has some 200,000 turns and 56 MB of utterances, but
only about 7,000 distinct utterances: template voices repeat themselves. So every string
goes into one shared table and turns refer to it by number, as do the per-topic
consensus and stance vectors, which repeat as well. Turns are stored by column (one
array per field) rather than as objects, so a key is not written 200,000 times.
Sparse things (private thoughts, notes, stage headings) list only the turns that have
them. The page's script unpacks one episode at a time, when it is shown.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, Generic, TypeVar

from disputelab.episode import Episode, Turn
from disputelab.protocols.view import EpisodeView
from disputelab.report.plots import mean_curve
from disputelab.store.sqlite import EpisodeRecord, StoredScore

T = TypeVar("T", bound=Hashable)
NONE = -1  # "no such entry" where a column holds table indices
ROLES = {"party": "p", "mediator": "m", "system": "s"}


class Interner(Generic[T]):
    """Each distinct value once; the index of its first appearance stands for it."""

    def __init__(self) -> None:
        self.ids: dict[T, int] = {}
        self.items: list[T] = []

    def __call__(self, value: T) -> int:
        i = self.ids.get(value)
        if i is None:
            i = self.ids[value] = len(self.items)
            self.items.append(value)
        return i


def _num(x: float | None, digits: int = 3) -> float | None:
    """A JSON-safe number: NaN and None become null (JSON has no NaN)."""
    if x is None or math.isnan(x):
        return None
    return round(x, digits)


def scenario_view(scenario: dict[str, Any]) -> dict[str, Any]:
    """What the viewer needs of a scenario: its title, who the parties are, and each
    topic with its options' labels, topics in the order the vectors use."""
    return {
        "id": scenario.get("id", ""),
        "title": scenario.get("title", ""),
        "parties": [[p["id"], p.get("name", p["id"])] for p in scenario.get("parties", [])],
        "topics": [
            [
                t["id"],
                t.get("name", t["id"]),
                [[o["id"], o.get("label", o["id"])] for o in t.get("options", [])],
            ]
            for t in scenario.get("topics", [])
        ],
    }


class Packer:
    """Packs episodes against shared tables of strings, vectors and scenarios."""

    def __init__(self) -> None:
        self.strings: Interner[str] = Interner()
        self.numbers: Interner[tuple[float | None, ...]] = Interner()
        self.stances: Interner[tuple[str | None, ...]] = Interner()
        self.scenarios: Interner[str] = Interner()  # a scenario view as JSON text
        self._seen: dict[tuple[float | None, ...], int] = {}  # unrounded vector -> index

    def tables(self) -> dict[str, Any]:
        return {
            "strings": self.strings.items,
            "numbers": self.numbers.items,
            "stances": self.stances.items,
            "scenarios": [json.loads(s) for s in self.scenarios.items],
        }

    def _consensus(self, values: dict[str, float] | None, topics: Sequence[str]) -> int:
        if not values:
            return NONE
        raw = tuple(values.get(t) for t in topics)
        i = self._seen.get(raw)
        if i is None:  # a vector seen before skips the rounding
            i = self._seen[raw] = self.numbers(tuple(_num(v) for v in raw))
        return i

    def _stances(self, turn: Turn, topics: Sequence[str]) -> int:
        if turn.action is None or not turn.action.stances:
            return NONE
        st = turn.action.stances
        return self.stances(tuple(st[t].option if t in st else None for t in topics))

    def episode(
        self,
        rec: EpisodeRecord,
        scores: Iterable[StoredScore],
        usage: Iterable[dict[str, Any]],
        view: EpisodeView,
    ) -> dict[str, Any]:
        ep, s = rec.episode, self.strings
        sv = scenario_view(rec.scenario)
        topics = [t[0] for t in sv["topics"]]
        out: dict[str, Any] = {
            "id": rec.episode_id,
            "sc": self.scenarios(json.dumps(sv, sort_keys=True)),
            "arm": rec.arm,
            "condition": ep.condition,
            "protocol": ep.protocol,
            "agents": ep.agents,
            "seed": ep.seed,
            "status": rec.status.value,
            "stop": ep.outcome.stop_reason if ep.outcome else rec.error,
            "agreement": ep.outcome.agreement if ep.outcome else {},
            "init": self._consensus(ep.initial_consensus, topics),
        }
        out.update(self._turns(ep, topics, view))
        out["usage"] = [
            [
                u["role"],
                u["model"],
                u["calls"],
                u["input_tokens"],
                u["output_tokens"],
                u["cost_usd"],
            ]
            for u in usage
        ]
        out["scores"] = [[s(x.metric), _num(x.value, 4), s(x.evaluator)] for x in scores]
        out["panels"] = [[s(h), s(t)] for h, t in view.panels]
        out["charts"] = [
            {
                "title": c.title,
                "y": c.y_label,
                "lines": [
                    [name, [_num(v, 4) for p in pts for v in p]] for name, pts in c.lines.items()
                ],
            }
            for c in view.charts
        ]
        return out

    def _turns(self, ep: Episode, topics: Sequence[str], view: EpisodeView) -> dict[str, Any]:
        s = self.strings
        thoughts: list[list[int]] = []
        notes: list[list[int]] = []
        groups: list[list[int]] = []
        group = ""
        for i, tv in enumerate(view.turns):
            thoughts += [[i, s(th.who), s(th.text), s(th.note)] for th in tv.thoughts]
            notes += [[i, s(label), s(text)] for label, text in tv.notes]
            if tv.group != group:
                groups.append([i, s(tv.group)])
                group = tv.group
        return {
            "speaker": [s(t.speaker) for t in ep.turns],
            "role": "".join(ROLES.get(t.role, "s") for t in ep.turns),
            "pturn": [t.party_turn for t in ep.turns],
            "text": [s(t.text) for t in ep.turns],
            "consensus": [self._consensus(t.consensus, topics) for t in ep.turns],
            "stance": [self._stances(t, topics) for t in ep.turns],
            "thoughts": thoughts,
            "notes": notes,
            "groups": groups,
        }


def arm_label(ep: Episode) -> str:
    med = ep.agents.get("mediator", "none") or "none"
    return "unmediated" if med == "none" else f"mediator: {med}"


def tracked_states(
    ep: Episode, scores: Sequence[StoredScore]
) -> tuple[str, list[dict[str, float]]] | None:
    """An episode's consensus per topic at the start and after each party turn, and the
    tracker that gave it: the oracle where the parties have hidden state, else the
    trajectory a tracker stored with its scores (self-report, topic-localized,
    per-turn); None when there is neither."""
    if ep.initial_consensus is not None:
        states = [ep.initial_consensus] + [
            t.consensus for t in ep.turns if t.role == "party" and t.consensus is not None
        ]
        return "oracle", states
    for score in scores:
        by_topic = score.detail.get("by_topic") if score.metric == "final_consensus" else None
        if score.evaluator.startswith("tracker:") and isinstance(by_topic, dict) and by_topic:
            length = max(len(v) for v in by_topic.values())
            states = [
                {
                    t: math.nan if vs[i] is None else float(vs[i])
                    for t, vs in by_topic.items()
                    if i < len(vs)
                }
                for i in range(length)
            ]
            return score.evaluator.removeprefix("tracker:"), states
    return None


class TopicCurves:
    """Mean consensus per topic after each party turn, per scenario and arm, from the
    oracle or the tracker the run used (each scenario says which)."""

    def __init__(self) -> None:
        # scenario id -> arm -> topic -> one curve per episode
        self.curves: dict[str, dict[str, dict[str, list[list[float]]]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list))
        )
        self.titles: dict[str, str] = {}
        self.topics: dict[str, list[tuple[str, str]]] = {}
        self.trackers: dict[str, set[str]] = defaultdict(set)

    def add(self, rec: EpisodeRecord, scores: Sequence[StoredScore] = ()) -> None:
        ep = rec.episode
        tracked = tracked_states(ep, scores)
        if tracked is None:
            return
        tracker, states = tracked
        sid = ep.scenario_id
        self.trackers[sid].add(tracker)
        self.titles.setdefault(sid, rec.scenario.get("title", sid))
        names = [(t["id"], t.get("name", t["id"])) for t in rec.scenario.get("topics", [])]
        self.topics.setdefault(sid, names)
        cell = self.curves[sid][arm_label(ep)]
        for topic, _ in names:
            curve = [c[topic] for c in states if topic in c and not math.isnan(c[topic])]
            if curve:
                cell[topic].append(curve)

    def data(self) -> list[dict[str, Any]]:
        """Per scenario: its topics and, per arm, each topic's mean curve and count."""
        out = []
        for sid, arms in sorted(self.curves.items()):
            out.append(
                {
                    "id": sid,
                    "title": self.titles[sid],
                    "tracker": ", ".join(sorted(self.trackers[sid])),
                    "topics": [[t, name] for t, name in self.topics[sid]],
                    "arms": [
                        [
                            arm,
                            max((len(cs) for cs in by_topic.values()), default=0),
                            [
                                [_num(v) for v in mean_curve(by_topic[t])]
                                if by_topic.get(t)
                                else []
                                for t, _ in self.topics[sid]
                            ],
                        ]
                        for arm, by_topic in sorted(arms.items())
                    ],
                }
            )
        return out


class OfferPaths:
    """Mean amount each party proposed after each of its turns, per scenario, arm and
    numeric term: a price negotiation's path (it has no topics to chart)."""

    def __init__(self) -> None:
        # scenario id -> (arm, party name) -> term id -> one path per episode
        self.paths: dict[str, dict[tuple[str, str], dict[str, list[list[float]]]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list))
        )
        self.titles: dict[str, str] = {}
        self.terms: dict[str, list[tuple[str, str]]] = {}

    def add(self, rec: EpisodeRecord) -> None:
        ep = rec.episode
        names = {p["id"]: p.get("name", p["id"]) for p in rec.scenario.get("parties", [])}
        by_party: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for turn in ep.turns:
            if turn.role == "party" and turn.action is not None:
                for term, value in turn.action.offer.items():
                    by_party[turn.speaker][term].append(float(value))
        if not by_party:
            return
        sid = ep.scenario_id
        self.titles.setdefault(sid, rec.scenario.get("title", sid))
        terms = {term for offers in by_party.values() for term in offers}
        known = [(t["id"], t.get("name", t["id"])) for t in rec.scenario.get("terms", [])]
        self.terms.setdefault(
            sid, [k for k in known if k[0] in terms] or [(t, t) for t in sorted(terms)]
        )
        for speaker, offers in by_party.items():
            cell = self.paths[sid][(arm_label(ep), names.get(speaker, speaker))]
            for term, path in offers.items():
                cell[term].append(path)

    def data(self) -> list[dict[str, Any]]:
        """Per scenario: its terms and, per arm and party, each term's mean path."""
        return [
            {
                "id": sid,
                "title": self.titles[sid],
                "terms": [[t, name] for t, name in self.terms[sid]],
                "series": [
                    [
                        f"{party}, {arm}",
                        max((len(ps) for ps in by_term.values()), default=0),
                        [
                            [_num(v, 2) for v in mean_curve(by_term[t])] if by_term.get(t) else []
                            for t, _ in self.terms[sid]
                        ],
                    ]
                    for (arm, party), by_term in sorted(cells.items())
                ],
            }
            for sid, cells in sorted(self.paths.items())
        ]
