"""Motivated turn-taking for the roundtable: every party thinks, the keenest speaks.

Before each party turn, every party that may speak (all but the last party speaker)
reacts to the newest event with `k` private thoughts, each rated for motivation; at the
same time the turn-taking predictor names who it expects to speak. The ratings get the
silence boost, each party selects its best new thought by the rules in `turn_taking`,
and the chosen party voices its thought as a full typed action, so stances and signals
stay as checkable as under cyclic turns.

Thinking runs concurrently across parties (ProMediate thinks one party after another).
Its calls are charged to the parties' seat and counted on each turn's `TurnChoice`; the
prediction's to the `turn-taking` seat.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import cast

from disputelab.agents.base import Agent, PartyAgent, TurnContext
from disputelab.agents.thinking import Deliberates
from disputelab.episode import Action, Episode, Thought, Turn, TurnChoice, Usage
from disputelab.llm.concurrency import both, each
from disputelab.protocols.roundtable.agents.predictors import PredictsTurns
from disputelab.protocols.roundtable.turn_taking import ANYONE, boosted, choose
from disputelab.protocols.session import Session
from disputelab.protocols.view import PrivateThought, TurnView, add_to

DEFAULT_THOUGHTS = 2


class MotivatedFloor:
    """Decides each party turn's speaker and has it speak; keeps who spoke when."""

    def __init__(self, session: Session, predictor: Agent | None, k: int) -> None:
        cannot = [p.party_id for p in session.parties if not isinstance(p, Deliberates)]
        if cannot:
            raise ValueError(
                f"motivated turn-taking needs parties that think; {', '.join(cannot)} "
                "cannot (use rule, llm or hybrid parties)"
            )
        if not isinstance(predictor, PredictsTurns):
            raise ValueError("motivated turn-taking needs a turn-taking predictor seat")
        self.session = session
        self.predictor = predictor
        self.k = k
        self.by_id = {p.party_id: p for p in session.parties}
        # Checked once above: runtime protocol checks are too slow for every turn.
        self.thinkers: dict[str, Deliberates] = {
            p.party_id: cast(Deliberates, p) for p in session.parties
        }
        self.last_spoke = {p.party_id: 0 for p in session.parties}  # party turn after it
        self.previous: str | None = None
        self.thresholds = {
            p.id: (p.persona.im_threshold, p.persona.interrupt_threshold)
            for p in session.scenario.parties
        }

    def eligible(self) -> list[str]:
        """Who may speak, longest silent first (which breaks ties)."""
        ids = [pid for pid in self.by_id if pid != self.previous]
        return sorted(ids, key=lambda pid: self.last_spoke[pid])

    def silence(self, pid: str) -> int:
        return self.session.party_turn - self.last_spoke[pid]

    def _boost(self, t: Thought) -> Thought:
        rating = boosted(t.raw, self.silence(t.party))
        return Thought(t.id, t.party, t.text, rating, t.raw, t.reason, t.stimuli)

    async def _think(self, pid: str, ctx: TurnContext) -> tuple[list[Thought], Usage | None]:
        thoughts = await self.thinkers[pid].think(self.session.view(pid), ctx, self.k)
        return [self._boost(t) for t in thoughts], self.by_id[pid].take_usage()

    async def _predict(self, ctx: TurnContext, eligible: Sequence[str]) -> tuple[str, Usage | None]:
        guess = await self.predictor.predict(self.session.public, ctx)
        # A prediction for the last speaker, or for nobody at the table, leaves it open.
        return guess if guess in eligible else ANYONE, self.predictor.take_usage()

    async def next_turn(self, ctx: TurnContext) -> tuple[PartyAgent, Action, TurnChoice]:
        eligible = self.eligible()
        # Each party thinks from the same view, and the prediction reads only the public
        # dialogue: independent calls, so they go out together. A failure cancels the
        # thinking after it (`together`), and the episode fails with its own reason.
        (predicted, predicting), thought_lists = await both(
            lambda: self._predict(ctx, eligible),
            lambda: each(lambda pid: self._think(pid, ctx), eligible),
        )
        # Charged once all are back, in a fixed order: not in the order they came back.
        self.session.charge("turn-taking", predicting)
        for _, used in thought_lists:
            self.session.charge("parties", used)
        new = {pid: ts for pid, (ts, _) in zip(eligible, thought_lists, strict=True)}
        calls = sum(u.calls for _, u in thought_lists if u is not None)
        salient: dict[str, Thought | None] = {}
        for pid in eligible:
            best = self.thinkers[pid].most_salient()
            salient[pid] = self._boost(best) if best is not None else None
        picked = choose(new, salient, predicted, self.thresholds, eligible)
        thought = picked.thought or Thought(
            f"{picked.speaker}:none", picked.speaker, "", math.nan, math.nan, "no thoughts at all"
        )
        speaker = self.thinkers[picked.speaker]
        action = await speaker.articulate(self.session.view(picked.speaker), ctx, thought)
        choice = TurnChoice(
            predicted,
            picked.rule,
            thought.rating,
            thought.id,
            new,
            picked.selected,
            calls,
        )
        self.previous = picked.speaker
        self.last_spoke[picked.speaker] = self.session.party_turn + 1
        return self.by_id[picked.speaker], action, choice


def turn_taking_details(episode: Episode) -> list[tuple[str, str]]:
    """What `disputelab run` prints about a motivated episode: shares, order, calls."""
    choices = [(t.speaker, t.choice) for t in episode.turns if t.choice is not None]
    if not choices:
        return []
    spoken = Counter(s for s, _ in choices)
    total = len(choices)
    shares = ", ".join(f"{pid} {100 * c / total:.0f}%" for pid, c in spoken.most_common())
    rules = Counter(c.rule for _, c in choices)
    order = " ".join(s for s, _ in choices[:20]) + (" ..." if total > 20 else "")
    calls = sum(c.calls for _, c in choices)
    return [
        ("speaking shares", shares),
        ("speaking order", order),
        ("who took the floor how", ", ".join(f"{r} {n}" for r, n in rules.most_common())),
        (
            "thinking calls",
            f"{calls} over {total} party turns ({calls / total:.1f} per turn)"
            if calls
            else "none (rule parties think without a model)",
        ),
    ]


def floor_view(turn: Turn, view: TurnView) -> TurnView:
    """A motivated turn's view adds how the speaker got the floor, and every party's
    candidate thoughts of that round with their motivation."""
    choice = turn.choice
    if choice is None:
        return view
    thoughts = [
        PrivateThought(
            pid,
            th.text,
            f"motivation {_rating(th.rating)}" + (", voiced" if th.id == choice.thought_id else ""),
        )
        for pid, ts in choice.thoughts.items()
        for th in ts
    ]
    floor = (
        f"{choice.rule} (predicted: {choice.predicted}), motivation {_rating(choice.motivation)}"
    )
    return add_to(view, thoughts, [("floor", floor)])


def _rating(x: float) -> str:  # ratings are on a 1-5 scale with one decimal
    return "NaN" if math.isnan(x) else f"{x:.1f}"
