"""The roundtable protocol (SoCRATES, ProMediate): parties speak in a fixed cyclic order.

The protocol, not the agents, owns turn-taking and stopping. After every party turn it
checks, in this order: a walk-away (impasse), every party's latest signal being consensus
(resolved), and the party-turn budget. The mediator may speak after any party turn except
the last; its turns do not consume the budget, so a mediated episode and its matched
unmediated one give the parties the same number of turns.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from disputelab.agents.base import (
    HiddenState,
    MediatorAgent,
    PartyAgent,
    PublicTurn,
    TurnContext,
)
from disputelab.consensus import consensus_by_topic, topic_consensus
from disputelab.episode import Episode, Outcome, Signal, Stance, Status, Turn, Usage
from disputelab.scenario.schema import Scenario

DEFAULT_BUDGET = 100

TurnSink = Callable[[Turn], None]


class RoundTable:
    """Fixed cyclic order; stop on all-consensus, a walk-away or the turn budget."""

    name = "roundtable"

    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        if budget < 1:
            raise ValueError(f"turn budget must be at least 1, got {budget}")
        self.budget = budget

    async def run(
        self,
        scenario: Scenario,
        parties: Sequence[PartyAgent],
        mediator: MediatorAgent | None,
        episode: Episode,
        on_turn: TurnSink | None = None,
    ) -> Episode:
        """Play one episode into `episode`, handing every finished turn to `on_turn`."""
        start = time.perf_counter()
        order = [p.party_id for p in parties]
        expected = [p.id for p in scenario.parties]
        if sorted(order) != sorted(expected):
            raise ValueError(f"agents {order} do not match the scenario's parties {expected}")
        n = len(parties)
        topic_ids = [t.id for t in scenario.topics]
        sources: dict[str, HiddenState] = {
            p.party_id: p for p in parties if isinstance(p, HiddenState)
        }
        oracle = len(sources) == n
        hidden: dict[str, dict[str, Stance]] = {}
        if oracle:
            hidden = {pid: src.hidden_stances() for pid, src in sources.items()}
            episode.initial_consensus = consensus_by_topic(topic_ids, list(hidden.values()))
        public: list[PublicTurn] = []
        signals: dict[str, Signal] = {}
        stated: dict[str, dict[str, Stance]] = {}
        party_turn = 0
        outcome: Outcome | None = None
        consensus: dict[str, float] | None = episode.initial_consensus

        def record(turn: Turn) -> None:
            episode.turns.append(turn)
            public.append(PublicTurn.of(turn))
            if on_turn is not None:
                on_turn(turn)

        while party_turn < self.budget:
            agent = parties[party_turn % n]
            ctx = TurnContext(party_turn, self.budget, n)
            t0 = time.perf_counter()
            action = await agent.act(public, ctx)
            latency = time.perf_counter() - t0
            party_turn += 1
            if oracle:
                consensus = _update_consensus(
                    consensus,
                    topic_ids,
                    hidden,
                    agent.party_id,
                    sources[agent.party_id].hidden_stances(),
                )
            record(
                Turn(
                    len(episode.turns),
                    party_turn,
                    agent.party_id,
                    "party",
                    action.utterance,
                    action=action,
                    consensus=consensus,
                    latency_s=latency,
                    usage=getattr(agent, "last_usage", None),
                )
            )
            _charge(episode, "parties", getattr(agent, "last_usage", None))
            signals[agent.party_id] = action.signal
            stated[agent.party_id] = action.stances
            if action.signal is Signal.WALK_AWAY:
                outcome = Outcome(
                    Status.IMPASSE, f"{agent.party_id} walked away at party turn {party_turn}"
                )
                break
            if len(signals) == n and all(s is Signal.CONSENSUS for s in signals.values()):
                outcome = Outcome(
                    Status.RESOLVED,
                    f"all {n} parties signalled consensus at party turn {party_turn}",
                    _agreement(topic_ids, stated),
                )
                break
            if mediator is not None and party_turn < self.budget:
                t0 = time.perf_counter()
                move = await mediator.consider(public, TurnContext(party_turn, self.budget, n))
                if move is not None:
                    record(
                        Turn(
                            len(episode.turns),
                            party_turn,
                            "mediator",
                            "mediator",
                            move.utterance,
                            intervention=move,
                            consensus=consensus,
                            latency_s=time.perf_counter() - t0,
                            usage=getattr(mediator, "last_usage", None),
                        )
                    )
                _charge(episode, "mediator", getattr(mediator, "last_usage", None))
        if outcome is None:
            outcome = Outcome(
                Status.BUDGET,
                f"turn budget of {self.budget} party turns ran out",
                _agreement(topic_ids, stated),
            )
        episode.outcome = outcome
        episode.wall_time_s = time.perf_counter() - start
        return episode


def _agreement(
    topic_ids: Sequence[str], stated: dict[str, dict[str, Stance]]
) -> dict[str, str | None]:
    """Per topic, the option every party backs, or None where they differ."""
    out: dict[str, str | None] = {}
    for t in topic_ids:
        options = {s[t].option if t in s else None for s in stated.values()}
        out[t] = options.pop() if len(options) == 1 else None
    return out


def _update_consensus(
    previous: dict[str, float] | None,
    topic_ids: Sequence[str],
    hidden: dict[str, dict[str, Stance]],
    speaker: str,
    new: dict[str, Stance],
) -> dict[str, float]:
    """Oracle consensus after `speaker` moved, recomputing only the topics it changed."""
    old = hidden.get(speaker, {})
    hidden[speaker] = new
    if previous is None:
        return consensus_by_topic(topic_ids, list(hidden.values()))
    out = dict(previous)
    everyone = list(hidden.values())
    for t in topic_ids:
        if old.get(t) != new.get(t):
            out[t] = topic_consensus([s.get(t) for s in everyone])
    return out


def _charge(episode: Episode, role: str, usage: Usage | None) -> None:
    """Add one agent call's usage to the episode's total for its role."""
    if usage is None:
        return
    total = episode.usage.setdefault(role, Usage(cost_usd=None))
    total.calls += usage.calls
    total.input_tokens += usage.input_tokens
    total.output_tokens += usage.output_tokens
