"""The roundtable protocol (SoCRATES, ProMediate): parties speak in a fixed cyclic order.

The protocol, not the agents, owns turn-taking and stopping. After every party turn it
checks, in this order: a walk-away (impasse), every party's latest signal being consensus
(resolved), and the party-turn budget. The mediator may speak after any party turn except
the last; its turns do not consume the budget, so a mediated episode and its matched
unmediated one give the parties the same number of turns.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import ClassVar

from pydantic import Field, field_validator

from disputelab.agents.base import Agent, MediatorAgent, TurnContext
from disputelab.agents.registry import MEDIATOR, PARTY
from disputelab.episode import Outcome, Signal, Status
from disputelab.protocols.base import (
    DisputeProtocol,
    ProtocolParams,
    ReportLayout,
    Seat,
    register_protocol,
)
from disputelab.protocols.session import Session

DEFAULT_BUDGET = 100


class RoundTableParams(ProtocolParams):
    budget: int = Field(default=DEFAULT_BUDGET, le=10_000, description="Party-turn budget.")

    @field_validator("budget")
    @classmethod
    def _at_least_one(cls, v: int) -> int:
        if v < 1:
            raise ValueError(f"turn budget must be at least 1, got {v}")
        return v


class RoundTable(DisputeProtocol):
    """Fixed cyclic order; stop on all-consensus, a walk-away or the turn budget."""

    name = "roundtable"
    summary = "parties speak in turn; a proactive mediator may step in after any turn"
    Params = RoundTableParams
    seats = (
        Seat("parties", PARTY, per_party=True),
        Seat("mediator", MEDIATOR, optional=True, default="none", default_with_model="none"),
    )
    plays_twin = True
    evaluators = ("socrates-oracle",)
    report: ClassVar[ReportLayout] = ReportLayout(
        "metrics (oracle consensus)", "disputelab.report.tables:experiment_markdown_for"
    )

    def max_calls(self, params: ProtocolParams, n_parties: int) -> dict[str, int]:
        assert isinstance(params, RoundTableParams)
        # An LLM mediator decides whether to speak, then what to say, after a party turn.
        return {"parties": params.budget, "mediator": 2 * (params.budget - 1)}

    async def play(
        self, session: Session, seated: Mapping[str, Agent | None], params: ProtocolParams
    ) -> Outcome:
        assert isinstance(params, RoundTableParams)
        budget, n = params.budget, session.n
        mediator = seated.get("mediator")
        assert mediator is None or isinstance(mediator, MediatorAgent)
        parties = session.parties
        while session.party_turn < budget:
            agent = parties[session.party_turn % n]
            t0 = time.perf_counter()
            action = await agent.act(
                session.view(agent.party_id), TurnContext(session.party_turn, budget, n)
            )
            session.party_spoke(agent, action, time.perf_counter() - t0)
            done = session.party_turn
            if action.signal is Signal.WALK_AWAY:
                return Outcome(Status.IMPASSE, f"{agent.party_id} walked away at party turn {done}")
            # Only a consensus signal can complete a round of them.
            if action.signal is Signal.CONSENSUS and session.all_signalled_consensus():
                return Outcome(
                    Status.RESOLVED,
                    f"all {n} parties signalled consensus at party turn {done}",
                    session.common_ground(),
                )
            if mediator is not None and done < budget:
                t0 = time.perf_counter()
                move = await mediator.consider(
                    session.view("mediator"), TurnContext(done, budget, n)
                )
                session.seat_spoke("mediator", mediator, move, time.perf_counter() - t0)
        return Outcome(
            Status.BUDGET,
            f"turn budget of {budget} party turns ran out",
            session.common_ground(),
        )


register_protocol(RoundTable())
