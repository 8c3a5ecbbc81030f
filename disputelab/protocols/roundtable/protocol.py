"""The roundtable protocol (SoCRATES, ProMediate): parties take the floor in turn.

The protocol, not the agents, owns turn-taking and stopping. Who speaks next is the
`turn_taking` parameter: `cyclic` seats the parties in a fixed order; `motivated` lets
every party think after each event and gives the floor to the most motivated one
(Inner Thoughts, as in ProMediate; see `turn_taking.py` and `motivated.py`).

After every party turn it checks, in this order: a walk-away (impasse), every party's
latest signal being consensus (resolved), and the budget. The mediator may speak after
any party turn except the last. By default (`turn_counting: party`) its turns do not
consume the budget, so a mediated episode and its matched unmediated one give the parties
the same number of turns. ProMediate counts otherwise (`turn_counting: dialogue`): every
dialogue line, the mediator's included, takes one turn of a budget of 4·N·M lines
(`budget_per_party_topic: 4`), and with `stop_on_consensus: false` the talk runs to the
end of the budget as its released code does.

With `caucus: K` the mediator meets each party in private after every K-th of its turns
(`caucus.py`): the party names to the mediator alone some of what it would accept, and the
other parties never hear it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from disputelab.agents.base import Agent, MediatorAgent, TurnContext
from disputelab.agents.registry import PARTY
from disputelab.episode import Action, Episode, Outcome, Signal, Status
from disputelab.protocols.agent_params import AgentParams
from disputelab.protocols.base import (
    DisputeProtocol,
    ProtocolParams,
    ReportLayout,
    Seat,
    protocol,
)
from disputelab.protocols.roundtable.agents import MEDIATOR, TURN_PREDICTOR
from disputelab.protocols.roundtable.caucus import due, hold_caucus
from disputelab.protocols.roundtable.motivated import (
    DEFAULT_THOUGHTS,
    MotivatedFloor,
    floor_view,
    turn_taking_details,
)
from disputelab.protocols.session import Session
from disputelab.protocols.view import EpisodeView, default_view

if TYPE_CHECKING:
    from disputelab.store.sqlite import Store

DEFAULT_BUDGET = 100


def motivated(params: ProtocolParams) -> bool:
    return getattr(params, "turn_taking", "cyclic") == "motivated"


class RoundTableParams(AgentParams):
    budget: int = Field(default=DEFAULT_BUDGET, le=10_000, description="Party-turn budget.")
    budget_per_party_topic: int = Field(
        default=0,
        ge=0,
        le=100,
        description="When above 0, the budget is this many turns per party per topic "
        "(ProMediate: 4, a budget of 4·N·M), in place of --budget.",
    )
    turn_counting: Literal["party", "dialogue"] = Field(
        default="party",
        description="What the budget counts: party turns (mediator turns are free) or "
        "dialogue lines (mediator turns count too, as in ProMediate).",
    )
    stop_on_consensus: bool = Field(
        default=True,
        description="Stop when every party signals consensus (ProMediate runs the whole budget).",
    )
    mediator_every_turn: bool = Field(
        default=False,
        description="Consult an LLM mediator after every party turn, as SoCRATES does "
        "(default: once every party has spoken since its last turn).",
    )
    social_when_call: bool = Field(
        default=False,
        description="The social mediator first asks whether to step in at all, and plans "
        "only when that rating passes its threshold (ProMediate Table 12).",
    )
    mediator_consensus_state: bool = Field(
        default=False,
        description="Show the LLM mediator, per topic, whether the parties' stated stances "
        "agree (ProMediate's social mediator plans with the consensus state).",
    )
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

    caucus: int = Field(
        default=0,
        ge=0,
        le=1000,
        description="After every this many mediator turns, the mediator meets each party "
        "in private and the party names some of what it would accept (rule parties: "
        "behaviour disclosure.caucus_share and disclosure.caucus_truthfulness); 0: never.",
    )

    @classmethod
    def as_played(cls, stored: dict[str, Any]) -> dict[str, Any]:
        # Versions before the rule below stored any count of thoughts with cyclic turns,
        # where it was never read.
        if stored.get("turn_taking", "cyclic") != "motivated":
            return {k: v for k, v in stored.items() if k != "thoughts"}
        return stored

    @model_validator(mode="after")
    def _thoughts_need_motivated_turns(self) -> RoundTableParams:
        # Cyclic turn-taking asks for no thoughts, so another count given with it would be
        # recorded with the run but change nothing. (The default is let through: stored and
        # dumped parameters carry every field, and are validated again.)
        if self.thoughts != DEFAULT_THOUGHTS and self.turn_taking != "motivated":
            raise ValueError(
                "thoughts applies to motivated turn-taking only; add turn_taking=motivated "
                "or leave thoughts out"
            )
        return self

    @field_validator("budget")
    @classmethod
    def _at_least_one(cls, v: int) -> int:
        if v < 1:
            raise ValueError(f"turn budget must be at least 1, got {v}")
        return v


@protocol
class RoundTable(DisputeProtocol):
    """Fixed cyclic order; stop on all-consensus, a walk-away or the turn budget."""

    name = "roundtable"
    summary = "parties speak in turn; a proactive mediator may step in after any turn"
    turn_budget = "budget"
    turn_budget_unit = "party turns"
    Params = RoundTableParams
    heard_as = MappingProxyType({"mediator": "mediator"})  # the mediator's seat hears as one
    seats = (
        Seat("parties", PARTY, per_party=True),
        Seat("mediator", MEDIATOR, optional=True, default="none", default_with_model="none"),
        Seat("turn-taking", TURN_PREDICTOR, used_when=motivated, model_from="parties"),
    )
    plays_twin = True
    evaluators = ("socrates-oracle", "turn-taking")
    report: ClassVar[ReportLayout] = ReportLayout(
        "metrics (oracle consensus)",
        # Intervention effectiveness is here because it carries the one effect an
        # audit found in every parameter world (a third party raises it).
        effect_metrics=(
            "socrates-oracle:consensus_gain",
            "socrates-oracle:final_consensus",
            "socrates-oracle:intervention_effectiveness",
            "socrates-oracle:resolved",
        ),
        binary_metrics=("socrates-oracle:resolved",),
    )

    def experiment_tables(self, store: Store, run_id: str, config: Mapping[str, Any]) -> str:
        from disputelab.protocols.roundtable.tables.layout import experiment_markdown_for

        return experiment_markdown_for(store, run_id, dict(config))

    def embeds(self, params: ProtocolParams | None) -> bool:
        # Inner-thought parties rank their memories and thoughts by salience.
        return params is not None and motivated(params)

    def max_calls(self, params: ProtocolParams, n_parties: int) -> dict[str, int]:
        assert isinstance(params, RoundTableParams)
        # The topics are not known here: a per-party-topic budget is bounded at four
        # topics, the most SoCRATES and ProMediate's cases have.
        budget = resolved_budget(params, n_parties, 4)
        # An LLM mediator decides whether to speak, then what to say, after a party turn
        # (the social one may also ask whether to plan at all, and plans in three calls).
        per_turn = 4 if params.social_when_call else 3
        calls = {"parties": budget, "mediator": per_turn * max(0, budget - 1)}
        if params.turn_taking == "motivated":
            # Before each party turn, every party but the last speaker drafts its
            # thoughts (one call) and rates each (one call per thought); before the first
            # turn nobody has spoken, so all of them think. One prediction per turn.
            per_party = 1 + params.thoughts
            thinking = n_parties + (budget - 1) * max(1, n_parties - 1)
            calls["parties"] += thinking * per_party
            calls["turn-taking"] = budget
        return calls

    def details(self, episode: Episode) -> list[tuple[str, str]]:
        return turn_taking_details(episode)

    def episode_view(self, episode: Episode) -> EpisodeView:
        return default_view(episode, self.details(episode), floor_view)

    async def play(
        self, session: Session, seated: Mapping[str, Agent | None], params: ProtocolParams
    ) -> Outcome:
        assert isinstance(params, RoundTableParams)
        mediator = seated.get("mediator")
        assert mediator is None or isinstance(mediator, MediatorAgent)
        floor = (
            MotivatedFloor(session, seated.get("turn-taking"), params.thoughts)
            if params.turn_taking == "motivated"
            else None
        )
        return await _Table(session, mediator, floor, params).play()


def resolved_budget(params: RoundTableParams, n_parties: int, n_topics: int) -> int:
    """The turn budget: `budget`, or `budget_per_party_topic`·N·M when that is set."""
    if params.budget_per_party_topic:
        return max(1, params.budget_per_party_topic * n_parties * n_topics)
    return params.budget


class _Table:
    """One roundtable episode: the clock, who speaks, and when it stops."""

    def __init__(
        self,
        session: Session,
        mediator: MediatorAgent | None,
        floor: MotivatedFloor | None,
        params: RoundTableParams,
    ) -> None:
        self.session = session
        self.mediator = mediator
        self.floor = floor
        self.params = params
        self.n = session.n
        self.budget = resolved_budget(params, self.n, len(session.topic_ids))
        self.mediator_lines = 0
        self.lines = params.turn_counting == "dialogue"  # mediator turns count too
        self.unit = "dialogue lines" if self.lines else "party turns"

    def clock(self) -> int:
        """Turns spent: party turns, plus the mediator's when every dialogue line counts."""
        spent = self.session.party_turn
        return spent + self.mediator_lines if self.lines else spent

    async def play(self) -> Outcome:
        session, n, budget = self.session, self.n, self.budget
        done = self.clock()
        while done < budget:
            agent_id, action = await self._party_turn(TurnContext(done, budget, n))
            done = self.clock()
            if action.signal is Signal.WALK_AWAY:
                return Outcome(Status.IMPASSE, f"{agent_id} walked away at {self._at(done)}")
            # Only a consensus signal can complete a round of them.
            agreed = action.signal is Signal.CONSENSUS and session.all_signalled_consensus()
            if agreed and self.params.stop_on_consensus:
                return Outcome(
                    Status.RESOLVED,
                    f"all {n} parties signalled consensus at {self._at(done)}",
                    session.common_ground(),
                )
            if self.mediator is not None and done < budget:
                await self._consult(self.mediator, TurnContext(done, budget, n))
                done = self.clock()  # a mediator line may count
        if session.all_signalled_consensus():  # reached, but the talk ran on to the end
            return Outcome(
                Status.RESOLVED,
                f"all {n} parties were at consensus when the budget of {budget} "
                f"{self.unit} ran out",
                session.common_ground(),
            )
        return Outcome(
            Status.BUDGET, f"turn budget of {budget} {self.unit} ran out", session.common_ground()
        )

    def _at(self, done: int) -> str:
        return f"party turn {self.session.party_turn}" + (
            f" (dialogue line {done})" if self.params.turn_counting == "dialogue" else ""
        )

    async def _party_turn(self, ctx: TurnContext) -> tuple[str, Action]:
        session = self.session
        t0 = time.perf_counter()
        if self.floor is None:
            agent = session.parties[session.party_turn % self.n]
            action = await agent.act(session.view(agent.party_id), ctx)
            session.party_spoke(agent, action, time.perf_counter() - t0)
        else:
            agent, action, choice = await self.floor.next_turn(ctx)
            session.party_spoke(agent, action, time.perf_counter() - t0, choice=choice)
        return agent.party_id, action

    async def _consult(self, mediator: MediatorAgent, ctx: TurnContext) -> None:
        t0 = time.perf_counter()
        move = await mediator.consider(self.session.view("mediator"), ctx)
        turn = self.session.seat_spoke("mediator", mediator, move, time.perf_counter() - t0)
        if turn is not None:
            self.mediator_lines += 1
            if due(self.params.caucus, self.mediator_lines):
                hold_caucus(self.session)
