"""How a rule party feels about the others: resentment that hostility and unfavourable
moves raise, favourable moves and a mediator's words soothe, and time cools."""

from __future__ import annotations

from disputelab.agents.utility import PreferenceTable
from disputelab.scenario.behaviour import Behaviour

Backed = tuple[int | None, ...]  # the option index a party backs per topic (None: none)


class Resentment:
    """A party's resentment (`level`, never negative) and the thresholds it acts on:
    at `dig_in` it stops conceding and holds its offer; at `walk_away` it leaves.

    Only hostility and *moves* stir it, never a position merely repeated. How much a
    hurt counts is scaled by the party's reactivity; a mediator calms it in proportion
    to the party's deference.
    """

    __slots__ = (
        "calming",
        "cooling",
        "deference",
        "dig_in",
        "hostility",
        "hurt",
        "level",
        "reactivity",
        "soothe",
        "walk_away",
    )

    def __init__(self, b: Behaviour, reactivity: float, deference: float) -> None:
        self.level = 0.0
        self.reactivity = reactivity
        self.deference = deference
        self.hostility = b["resentment.hostility"]
        self.hurt = b["resentment.hurt"]
        self.soothe = b["resentment.soothe"]
        self.cooling = b["resentment.cooling"]
        self.calming = b["mediator.calming"]
        self.dig_in = b["resentment.dig_in"]
        self.walk_away = b["resentment.walk_away"]

    @property
    def dug_in(self) -> bool:
        return self.level >= self.dig_in

    @property
    def walks_away(self) -> bool:
        return self.level >= self.walk_away

    def cool(self) -> None:
        """Time passes: one own turn's cooling."""
        self.level *= self.cooling

    def calm(self) -> None:
        """A mediator spoke."""
        self.level *= 1.0 - self.calming * self.deference

    def react(
        self, hostile: bool, before: Backed | None, after: Backed, table: PreferenceTable
    ) -> None:
        """Another party spoke, `hostile` or not, and moved from backing `before` (None:
        it had not spoken) to backing `after`: a move to an option this party cannot
        accept hurts by the topic's weight, a move to a worse one by the value lost, and
        a move to a better one soothes by the value gained."""
        if hostile:
            # Clipped at 0: a negative hostility (the mirrored world's) soothes.
            self.level = max(0.0, self.level + self.hostility * self.reactivity)
        if before == after:
            return
        hurt = 0.0
        pleased = 0.0
        for j, idx in enumerate(after):
            was = before[j] if before is not None else None
            if idx is None or was == idx:
                continue
            if not table.ok[j][idx]:
                hurt += table.w[j]
            elif was is not None:
                delta = table.v[j][idx] - table.v[j][was]
                hurt += table.w[j] * max(0.0, -delta)
                pleased += table.w[j] * max(0.0, delta)
        self.level = max(
            0.0, self.level + self.hurt * self.reactivity * hurt - self.soothe * pleased
        )
