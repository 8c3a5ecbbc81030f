"""The parties' strategy points through a staged session: recorded on every party turn,
and, under the adaptive strategy update, moved after each bargaining round.

AgentMediation's dynamic strategies (Tables 16-17) let every party re-judge its
assertiveness and cooperativeness after each round from the dialogue. Here the move is
`disputelab.scenario.tki.adapt`: the point goes `adaptive.rate` of the way towards the
point the other parties' turns of that round showed (`shown_point`), which rule and LLM
parties alike can follow. Each party turn carries the point it was played from
(`Action.strategy`), so the stored episode holds every party's point per round.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from disputelab.agents.base import AdoptsStrategy, PartyAgent
from disputelab.episode import Action, Stance, Turn
from disputelab.scenario.schema import Scenario
from disputelab.scenario.tki import Point, adapt, mean_point, point_text, shown_point

if TYPE_CHECKING:
    from disputelab.store.sqlite import Store


@dataclass
class StrategyRecord:
    """Each party's current point, and which of them adapt, at what rate."""

    points: dict[str, Point]
    adaptive: frozenset[str]
    rate: float
    history: list[dict[str, Point]] = field(default_factory=list)  # after each round

    @staticmethod
    def of(scenario: Scenario, rate: float) -> StrategyRecord | None:
        """The record a scenario asks for: where a strategy was drawn for one party or any
        party adapts; None otherwise, so that other episodes stay exactly as they were."""
        adaptive = frozenset(
            p.id for p in scenario.parties if p.persona.strategy_update == "adaptive"
        )
        if scenario.drawn_strategy is None and not adaptive:
            return None
        points = {p.id: p.persona.point for p in scenario.parties}
        return StrategyRecord(points, adaptive, rate)

    def stamp(self, party_id: str, action: Action) -> Action:
        """The action with the point its party played it from."""
        return replace(action, strategy=self.points[party_id])

    def adapt(
        self,
        turns: Sequence[Turn],
        before: Mapping[str, Mapping[str, Stance]],
        parties: Sequence[PartyAgent],
    ) -> None:
        """After a bargaining round (its `turns`; `before` what each party stated before
        it): every adaptive party that can change its strategy moves its point towards
        what the others showed, and plays on from there."""
        shown: dict[str, list[Point]] = {}
        for t in turns:
            if t.role != "party" or t.action is None:
                continue
            a = t.action
            moved = bool(a.stances) and dict(before.get(t.speaker, {})) != a.stances
            shown.setdefault(t.speaker, []).append(shown_point(a.signal.value, a.tone, moved))
        for agent in parties:
            pid = agent.party_id
            if pid not in self.adaptive or not isinstance(agent, AdoptsStrategy):
                continue  # a person's strategy is theirs: it is recorded, never moved
            others = mean_point(p for q, pts in shown.items() if q != pid for p in pts)
            if others is None:
                continue
            self.points[pid] = adapt(self.points[pid], others, self.rate)
            agent.adopt(self.points[pid])
        self.history.append(dict(self.points))


def strategy_notes(turn: Turn) -> list[tuple[str, str]]:
    """A party turn's strategy point, for `disputelab view`, where it was recorded."""
    if turn.action is None or turn.action.strategy is None:
        return []
    return [("strategy", point_text(turn.action.strategy))]


def _recorded(condition: str) -> bool:
    """Whether the condition's episodes carry strategy points (drawn or adaptive)."""
    return any(
        (part.strip().startswith("strategy:") and part.strip().endswith("@one"))
        or part.strip() == "strategy_update:adaptive"
        for part in condition.split(",")
    )


def _points_by_round(store: Store, run_id: str) -> dict[tuple[str, str, int], list[Point]]:
    """(condition | mediator, whose, round) -> every point recorded there; round 0 is the
    statement. `whose` is the drawn party, the other parties, or every party."""
    out: dict[tuple[str, str, int], list[Point]] = defaultdict(list)
    for eid in sorted(store.complete_episode_ids(run_id)):
        _, _, cond, med, _ = eid.split("/")
        if not _recorded(cond):
            continue
        rec = store.load_episode(eid)
        drawn = (rec.scenario.get("drawn_strategy") or {}).get("party")
        spoken: dict[str, int] = defaultdict(int)
        for t in rec.episode.turns:
            if t.role != "party" or t.action is None or t.action.strategy is None:
                continue
            whose = "every party" if drawn is None else "drawn" if t.speaker == drawn else "others"
            out[(f"{cond} | {med}", whose, spoken[t.speaker])].append(t.action.strategy)
            spoken[t.speaker] += 1
    return out


def strategy_points_table(
    store: Store, run_id: str, conditions: Sequence[str]
) -> tuple[list[str], list[str]] | None:
    """Each condition's mean strategy point per round (a/c: assertiveness and
    cooperativeness, 0-10), over its episodes' parties: the drawn party of a one-party
    strategy apart from the others. None where no episode recorded a point."""
    if not any(_recorded(c) for c in conditions):
        return None
    points = _points_by_round(store, run_id)
    if not points:
        return None
    last = max(k for _, _, k in points)
    head = ["statement", *(f"round {k}" for k in range(1, last + 1))]
    lines = ["| condition | mediator | parties | " + " | ".join(head) + " |"]
    lines.append("|---" * (len(head) + 3) + "|")
    for row, whose in sorted({(r, w) for r, w, _ in points}):
        cells = []
        for k in range(last + 1):
            mean = mean_point(points.get((row, whose, k), []))
            cells.append("-" if mean is None else f"{mean[0]:.1f}/{mean[1]:.1f}")
        lines.append(f"| {row} | {whose} | " + " | ".join(cells) + " |")
    note = (
        "Cells: mean assertiveness/cooperativeness (0-10) of the parties' points when they "
        "spoke, over the cell's episodes; a round's point is the one the party played it "
        "from, so an adaptive move after round k shows in round k+1."
    )
    return lines, [note]
