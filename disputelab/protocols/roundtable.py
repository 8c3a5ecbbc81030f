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
from disputelab.consensus import consensus_by_topic
from disputelab.episode import Episode, Outcome, Signal, Stance, Status, Turn
from disputelab.protocols.common import agreement as _agreement
from disputelab.protocols.common import charge as _charge
from disputelab.protocols.common import update_consensus as _update_consensus
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
