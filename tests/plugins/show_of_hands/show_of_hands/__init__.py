"""Show of hands: a chair opens each round, every party speaks once, and the round ends
with the chair counting hands. It stops when every party signals consensus or after
`rounds` rounds. The chair hears each party's words in upper case (a per-listener
delivery), and its (pretend) model calls are charged under its own usage role.

Everything here registers as the module is imported: disputelab imports it because the
package names it under the `disputelab.plugins` entry-point group.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from pydantic import Field

from disputelab.plugin import (
    PARTY,
    Agent,
    AgentSetup,
    DisputeProtocol,
    EpisodeToScore,
    Intervention,
    MetricResult,
    Outcome,
    ProtocolParams,
    PublicTurn,
    ScoringContext,
    Seat,
    Session,
    Status,
    TurnContext,
    Usage,
    UsageReporter,
    agent_kind,
    evaluator,
    protocol,
)

CHAIR = "toy-chair"  # the new seat's interface
CHAIRS: list[Chair] = []  # every chair built, so a test can ask what it heard


class Chair(UsageReporter):
    """Opens each round and counts hands; pretends each call cost one model call."""

    name = "counter"

    def __init__(self) -> None:
        self.heard: list[str] = []
        CHAIRS.append(self)

    async def open_round(self, dialogue: Sequence[PublicTurn], r: int) -> Intervention:
        self.heard = [t.text for t in dialogue if t.role == "party"]
        self.report_usage(Usage(calls=1, input_tokens=10 * r, output_tokens=5))
        return Intervention(f"Round {r}: hands up when you can accept.")


@agent_kind(CHAIR, "counter", "counts hands")
def counter(setup: AgentSetup) -> Agent:
    return Chair()


class ToyParams(ProtocolParams):
    rounds: int = Field(default=3, ge=1, le=50, description="Rounds of hands.")


@protocol
class ShowOfHands(DisputeProtocol):
    name = "show-of-hands"
    summary = "a chair calls rounds; parties speak once each round"
    turn_budget = "rounds"
    turn_budget_unit = "rounds of hands"
    Params = ToyParams
    seats = (Seat("parties", PARTY, per_party=True), Seat("chair", CHAIR, default="counter"))
    evaluators = ("toy-hands",)

    async def play(
        self, session: Session, seated: Mapping[str, Agent | None], params: ProtocolParams
    ) -> Outcome:
        assert isinstance(params, ToyParams)
        chair = seated["chair"]
        assert isinstance(chair, Chair)
        for r in range(1, params.rounds + 1):
            t0 = time.perf_counter()
            move = await chair.open_round(session.view("chair"), r)
            session.seat_spoke("chair", chair, move, time.perf_counter() - t0, speaker="chair")
            for agent in session.parties:
                budget = params.rounds * session.n
                context = TurnContext(session.party_turn, budget, session.n)
                action = await agent.act(session.view(agent.party_id), context)
                loud = {"chair": action.utterance.upper()}
                session.party_spoke(agent, action, 0.0, delivered=loud)
            if session.all_signalled_consensus():
                return Outcome(
                    Status.RESOLVED, f"all hands up in round {r}", session.common_ground()
                )
        return Outcome(Status.BUDGET, f"{params.rounds} rounds without all hands up")


@evaluator("toy-hands", "1", "rounds the chair called")
async def hands(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
    rounds = sum(1 for t in item.episode.turns if t.speaker == "chair")
    return {"rounds_played": MetricResult(float(rounds), "chair turns in the episode")}
