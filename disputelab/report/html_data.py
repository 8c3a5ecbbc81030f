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


class TopicCurves:
    """Mean oracle consensus per topic after each party turn, per scenario and arm."""

    def __init__(self) -> None:
        # scenario id -> arm -> topic -> one curve per episode
        self.curves: dict[str, dict[str, dict[str, list[list[float]]]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list))
        )
        self.titles: dict[str, str] = {}
        self.topics: dict[str, list[tuple[str, str]]] = {}

    def add(self, rec: EpisodeRecord) -> None:
        ep = rec.episode
        if ep.initial_consensus is None:
            return
        sid = ep.scenario_id
        self.titles.setdefault(sid, rec.scenario.get("title", sid))
        names = [(t["id"], t.get("name", t["id"])) for t in rec.scenario.get("topics", [])]
        self.topics.setdefault(sid, names)
        states = [ep.initial_consensus] + [
            t.consensus for t in ep.turns if t.role == "party" and t.consensus is not None
        ]
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
