"""What one planning turn's tree search did, kept with the turn it decided.

A planning counsel writes its record into the turn's private thought: a readable first
line (`plan: <candidate played>; <candidate> Q=.. n=..; ...`) and a second line
`search: {json}` with the settings (depth, simulations, K, c), each root candidate's
visits and Q, and how many ties between equal scores were broken at random. The stored
episode is then enough to show, per counsel turn, why that candidate was played.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from disputelab.episode import Episode

PREFIX = "search: "


@dataclass(frozen=True)
class RootStat:
    """One root candidate after the search: where it came from, N(root, a), Q(root, a)."""

    source: str
    visits: int
    q: float


@dataclass(frozen=True)
class SearchRecord:
    chosen: int  # index into `roots` of the candidate played
    roots: tuple[RootStat, ...]
    ties_broken: int  # equal top scores settled at random (UCB in the tree, Q at the root)
    depth: int
    simulations: int
    c: float

    def thought(self) -> str:
        head = "; ".join(f"{r.source} Q={r.q:.3f} n={r.visits}" for r in self.roots)
        body = {
            "chosen": self.chosen,
            "roots": [{"source": r.source, "visits": r.visits, "q": r.q} for r in self.roots],
            "ties_broken": self.ties_broken,
            "depth": self.depth,
            "simulations": self.simulations,
            "c": self.c,
        }
        return f"plan: {self.roots[self.chosen].source}; {head}\n{PREFIX}{json.dumps(body)}"

    def line(self) -> str:
        """The record in one line, for `disputelab run` and the report."""
        parts = [
            ("*" if i == self.chosen else "") + f"{r.source} n={r.visits} Q={r.q:.3f}"
            for i, r in enumerate(self.roots)
        ]
        return (
            f"{'; '.join(parts)}; ties broken {self.ties_broken} "
            f"(depth {self.depth}, {self.simulations} simulations, c={self.c:g})"
        )


def read_record(thought: str) -> SearchRecord | None:
    """The search record in a turn's thought, or None when the turn holds none. A record
    that does not parse is an error, not a missing record: the episode is corrupt."""
    lines = thought.splitlines()
    if len(lines) < 2 or not lines[0].startswith("plan: ") or not lines[1].startswith(PREFIX):
        return None
    line = lines[1]
    try:
        d: dict[str, Any] = json.loads(line[len(PREFIX) :])
        roots = tuple(
            RootStat(str(r["source"]), int(r["visits"]), float(r["q"])) for r in d["roots"]
        )
        return SearchRecord(
            int(d["chosen"]),
            roots,
            int(d["ties_broken"]),
            int(d["depth"]),
            int(d["simulations"]),
            float(d["c"]),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"a planning turn's search record does not parse: {exc}") from exc


def records(episode: Episode) -> Sequence[tuple[int, str, SearchRecord]]:
    """(counsel turn, speaker, record) for every planning turn of `episode`."""
    out = []
    for t in episode.turns:
        if t.action is not None and t.action.thought:
            record = read_record(t.action.thought)
            if record is not None:
                out.append((t.party_turn, t.speaker, record))
    return out
