"""The roundtable protocol (SoCRATES, ProMediate): parties take the floor in turn.

The protocol, not the agents, owns turn-taking and stopping. Who speaks next is the
`turn_taking` parameter: `cyclic` seats the parties in a fixed order; `motivated` lets
every party think after each event and gives the floor to the most motivated one
(Inner Thoughts, as in ProMediate; see `turn_taking.py` and `motivated.py`).

After every party turn it checks, in this order: a walk-away (impasse), every party's
latest signal being consensus (resolved), and the party-turn budget. The mediator may
speak after any party turn except the last; its turns do not consume the budget, so a
mediated episode and its matched unmediated one give the parties the same number of
turns.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import ClassVar, Literal

from pydantic import Field, field_validator

from disputelab.agents.base import Agent, MediatorAgent, TurnContext
from disputelab.agents.registry import MEDIATOR, PARTY, TURN_PREDICTOR
from disputelab.episode import Episode, Outcome, Signal, Status
from disputelab.protocols.base import (
    DisputeProtocol,
    ProtocolParams,
    ReportLayout,
    Seat,
    register_protocol,
)
from disputelab.protocols.roundtable.motivated import (
    DEFAULT_THOUGHTS,
    MotivatedFloor,
    floor_view,
    turn_taking_details,
)
from disputelab.protocols.session import Session
from disputelab.protocols.view import EpisodeView, default_view

DEFAULT_BUDGET = 100


def motivated(params: ProtocolParams) -> bool:
    return getattr(params, "turn_taking", "cyclic") == "motivated"


class RoundTableParams(ProtocolParams):
    budget: int = Field(default=DEFAULT_BUDGET, le=10_000, description="Party-turn budget.")
    turn_taking: Literal["cyclic", "motivated"] = Field(
        default="cyclic",
        description="Who speaks next: cyclic (fixed order) or motivated (the party most "
        "motivated by its private thoughts).",
    )
    thoughts: int = Field(
        default=DEFAULT_THOUGHTS,
        ge=1,
        le=5,
        description="Candidate thoughts per party per event (motivated turn-taking).",
    )

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
        Seat("turn-taking", TURN_PREDICTOR, used_when=motivated, model_from="parties"),
    )
    plays_twin = True
    evaluators = ("socrates-oracle", "turn-taking")
    report: ClassVar[ReportLayout] = ReportLayout(
        "metrics (oracle consensus)", "disputelab.report.tables:experiment_markdown_for"
    )

    def max_calls(self, params: ProtocolParams, n_parties: int) -> dict[str, int]:
        assert isinstance(params, RoundTableParams)
        # An LLM mediator decides whether to speak, then what to say, after a party turn.
        calls = {"parties": params.budget, "mediator": 2 * (params.budget - 1)}
        if params.turn_taking == "motivated":
            # Before each party turn, every party but the last speaker drafts its
            # thoughts (one call) and rates each (one call per thought); before the first
            # turn nobody has spoken, so all of them think. One prediction per turn.
            per_party = 1 + params.thoughts
            thinking = n_parties + (params.budget - 1) * max(1, n_parties - 1)
            calls["parties"] += thinking * per_party
            calls["turn-taking"] = params.budget
        return calls

    def details(self, episode: Episode) -> list[tuple[str, str]]:
        return turn_taking_details(episode)

    def episode_view(self, episode: Episode) -> EpisodeView:
        return default_view(episode, self.details(episode), floor_view)

    async def play(
        self, session: Session, seated: Mapping[str, Agent | None], params: ProtocolParams
    ) -> Outcome:
        assert isinstance(params, RoundTableParams)
        budget, n = params.budget, session.n
        mediator = seated.get("mediator")
        assert mediator is None or isinstance(mediator, MediatorAgent)
        parties = session.parties
        floor = (
            MotivatedFloor(session, seated.get("turn-taking"), params.thoughts)
            if params.turn_taking == "motivated"
            else None
        )
        while session.party_turn < budget:
            ctx = TurnContext(session.party_turn, budget, n)
            t0 = time.perf_counter()
            if floor is None:
                agent = parties[session.party_turn % n]
                action = await agent.act(session.view(agent.party_id), ctx)
                session.party_spoke(agent, action, time.perf_counter() - t0)
            else:
                agent, action, choice = await floor.next_turn(ctx)
                session.party_spoke(agent, action, time.perf_counter() - t0, choice=choice)
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
