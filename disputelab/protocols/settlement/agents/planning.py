"""The negotiation a planning counsel simulates: its own candidates against a modelled
opponent, rolled forward a few rounds and scored by the value function.

The opponent model is a time-dependent counsel whose walk-away is the BATNA reservation of
its side (both sides know the BATNA), whose opening is its first offer heard (or a mirror
of our own target around the expected judgment), and whose eagerness is unknown: each
simulation draws it from OPPONENT_TYPES, so replies are a chance event and the tree
branches on them. By default no model call is made in a rollout: an LLM planner proposes
the root candidates and the rule model simulates (a lighter simulated opponent). With
`rollout_model: counsel` the rollouts ask the counsel's model for the other side's offers,
within a per-turn budget, and fall back to the rule model when it is spent.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, replace

from disputelab.protocols.settlement.agents.auditor import audit
from disputelab.protocols.settlement.agents.brief import Brief, Reading
from disputelab.protocols.settlement.agents.counsel import BOULWARE, CONCEDER, Move, next_amount
from disputelab.protocols.settlement.agents.model import (
    Components,
    Weights,
    at_least_as_good,
    curve_offer,
    m_comp,
    m_fair,
    m_settle,
    m_surplus,
    other,
    value,
)

# Eagerness of the opponent, drawn per simulation: Boulware, linear, Conceder (assumption).
# The planner's model of the other side, a setting of the method under test: it stays
# as it is in every parameter world, whichever curve the real opponent follows.
OPPONENT_TYPES = (BOULWARE, 1.0, CONCEDER)
# Concession multipliers of the root candidates, relative to the curve's own step; the
# first is the curve itself, which is what the direct counsel plays (assumption).
MULTIPLIERS = (1.0, 0.5, 2.0, 3.0, 0.0, 4.0)
MIN_STEP_SHARE = 0.05  # a candidate step is at least this share of target-to-walk-away


OpponentModel = Callable[["SimState"], Awaitable[float | None]]


@dataclass(frozen=True)
class SimState:
    """A simulated position, with our side to move unless it is over."""

    my_turns: int
    their_turns: int
    my_last: float | None
    their_last: float | None
    left: int  # counsel turns left before the round limit
    agreed: float | None = None
    clauses: tuple[str, ...] = ()
    opp_eagerness: float | None = None


@dataclass(frozen=True)
class Candidate:
    move: Move
    source: str  # "curve", "step x0.5", "memory", "accept", "model", ...


def candidates(
    brief: Brief, reading: Reading, eagerness: float, floor: float | None, k: int, base: Move
) -> list[Candidate]:
    """K offers around the curve's next step (the first is the step itself), plus
    accepting the standing offer when there is one."""
    step = next_amount(brief, len(reading.own), eagerness, floor)
    previous = reading.own[-1] if reading.own else brief.target
    walk = brief.reservation if floor is None else floor
    span = abs(brief.target - walk)
    size = max(abs(previous - step), MIN_STEP_SHARE * span)
    direction = -1 if brief.side == "plaintiff" else 1
    standing = reading.theirs[-1] if reading.theirs else None
    out: list[Candidate] = []
    for m in MULTIPLIERS[: max(k, 1)]:
        amount = step if m == 1.0 else previous + direction * size * m
        if not at_least_as_good(amount, walk, brief.side):
            amount = walk
        if standing is not None and not at_least_as_good(amount, standing, brief.side):
            amount = standing  # never ask for less than the other side already offers
        move = Move(False, amount, base.options, base.clauses, f"offer: curve step x{m:g}")
        out.append(Candidate(move, "curve" if m == 1.0 else f"step x{m:g}"))
    their_turn_last = reading.last_speaker != brief.party_id
    if standing is not None and their_turn_last and at_least_as_good(standing, walk, brief.side):
        # Accepting takes their package: their clauses are what the auditor will read.
        accept = Move(True, standing, base.options, reading.their_clauses, "accept")
        out.append(Candidate(accept, "accept"))
    return _distinct(out)


def _distinct(cands: list[Candidate]) -> list[Candidate]:
    seen: set[tuple[bool, float]] = set()
    out = []
    for c in cands:
        key = (c.move.accept, round(c.move.amount, 2))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


@dataclass
class NegotiationGame:
    """The `mcts.Game` of one decision."""

    brief: Brief
    eagerness: float
    floor: float | None
    roots: list[Candidate]
    opp_target: float
    rollout_rounds: int
    weights: Weights
    gap0: float
    root_turns: int = 0
    # The other side's next offer in rollouts, asked of a model (None: the rule model).
    opponent: OpponentModel | None = None

    # ---- tree interface --------------------------------------------------------------
    def actions(self, state: SimState) -> tuple[Hashable, ...]:
        if state.my_turns == self.root_turns:
            return tuple(range(len(self.roots)))
        acts: tuple[Hashable, ...] = ("curve", "big-step")
        return acts + (("accept",) if state.their_last is not None else ())

    def start(self, reading: Reading, left: int) -> SimState:
        self.root_turns = len(reading.own)
        theirs = (
            reading.theirs[-1]
            if reading.theirs and reading.last_speaker != self.brief.party_id
            else None
        )
        return SimState(
            len(reading.own),
            len(reading.theirs),
            reading.own[-1] if reading.own else None,
            theirs,
            left,
            clauses=self.roots[0].move.clauses if self.roots else (),
        )

    def step(
        self, state: SimState, action: Hashable, rng: random.Random
    ) -> tuple[Hashable, SimState]:
        done, state = self._own(state, action)
        if done is not None:
            return done, state
        if state.opp_eagerness is None:
            state = replace(state, opp_eagerness=rng.choice(OPPONENT_TYPES))
        return self._reply(state)

    def terminal(self, state: SimState) -> bool:
        return state.agreed is not None or state.left <= 0

    async def rollout(self, state: SimState, rng: random.Random) -> SimState:
        """L rounds of the default policy; the other side's offers come from `opponent`
        (a model) while it answers, else from the modelled rule counsel."""
        for _ in range(self.rollout_rounds):
            if self.terminal(state):
                break
            if self.opponent is None:
                _, state = self.step(state, "curve", rng)
                continue
            done, state = self._own(state, "curve")
            if done is not None:
                continue
            theirs = await self.opponent(state)
            if theirs is None:  # the model's budget is spent, or its reply was unusable
                if state.opp_eagerness is None:
                    state = replace(state, opp_eagerness=rng.choice(OPPONENT_TYPES))
                _, state = self._reply(state)
            else:
                _, state = self._answer(state, theirs)
        return state

    def value(self, final: SimState) -> float:
        return value(self.components(final), self.weights)

    # ---- the pieces ------------------------------------------------------------------
    def components(self, final: SimState) -> Components:
        b = self.brief
        gap_end = abs((final.my_last or b.target) - (final.their_last or self.opp_target))
        agreed = final.agreed
        package = agreed if agreed is not None else final.my_last
        flag = audit(package, final.clauses, b.language).flag
        return Components(
            m_settle(agreed is not None, self.gap0, gap_end),
            m_surplus(agreed, b.side, b.batna),
            m_fair(agreed, b.batna, b.vulnerable),
            m_comp(flag),
        )

    def _own_move(self, state: SimState, action: Hashable) -> Move:
        if isinstance(action, int):
            return self.roots[action].move
        b = self.brief
        if action == "accept" and state.their_last is not None:
            return Move(True, state.their_last)
        step = next_amount(b, state.my_turns, self.eagerness, self.floor)
        if action == "big-step" and state.my_last is not None:
            step = state.my_last + 2 * (step - state.my_last)
        # Accept-next inside rollouts, as the default policy does for real.
        if state.their_last is not None and at_least_as_good(state.their_last, step, b.side):
            return Move(True, state.their_last)
        return Move(False, step)

    def _own(self, state: SimState, action: Hashable) -> tuple[Hashable | None, SimState]:
        """Our move: the state after it, with its key when it ends the simulation."""
        own = self._own_move(state, action)
        if own.accept:
            # Agreeing adopts the accepted package: its clauses are what gets audited.
            clauses = own.clauses or state.clauses
            return ("agreed",), replace(
                state, agreed=own.amount, left=state.left - 1, clauses=clauses
            )
        state = replace(
            state,
            my_turns=state.my_turns + 1,
            my_last=own.amount,
            left=state.left - 1,
            clauses=own.clauses or state.clauses,
        )
        return (("deadline",) if state.left <= 0 else None), state

    def _reply(self, state: SimState) -> tuple[Hashable, SimState]:
        """The modelled opponent's answer: accept-next, else its curve's next offer."""
        b = self.brief
        assert state.opp_eagerness is not None
        total = max(1, (b.rounds + (0 if b.opens else 1)) // 2)
        progress = state.their_turns / max(total - 1, 1)
        theirs = curve_offer(
            self.opp_target, b.batna.reservation(other(b.side)), progress, state.opp_eagerness
        )
        return self._answer(state, theirs)

    def _answer(self, state: SimState, theirs: float) -> tuple[Hashable, SimState]:
        """The other side's turn given the offer it would make: it accepts ours when ours
        is at least as good for it (accept-next), else it offers `theirs`."""
        left = state.left - 1
        if state.my_last is not None and at_least_as_good(
            state.my_last, theirs, other(self.brief.side)
        ):
            return ("they-accept",), replace(state, agreed=state.my_last, left=left)
        key = ("counter", round(theirs, -1), state.opp_eagerness)
        return key, replace(state, their_turns=state.their_turns + 1, their_last=theirs, left=left)


def opponent_target(brief: Brief, reading: Reading) -> float:
    """Their opening as heard, else our target mirrored around the expected judgment."""
    if reading.theirs:
        return reading.theirs[0]
    return 2 * brief.batna.expected_judgment - brief.target
