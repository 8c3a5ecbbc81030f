"""A person at the roundtable's mediator seat: after each party turn they may step in
(words, and optionally a package per topic) or stay silent, which Enter does.

The turn-taking predictor is no seat at the table but the machinery of motivated
turn-taking, so no person takes it.
"""

from __future__ import annotations

from collections.abc import Sequence

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext
from disputelab.agents.registry import AgentSetup
from disputelab.episode import Intervention
from disputelab.humans import (
    Field,
    HumanSeat,
    MoveSource,
    Needs,
    PickField,
    SeatRef,
    TextField,
    human_kind,
    no_human_seat,
    public_block,
    topic_options,
)
from disputelab.protocols.roundtable.agents import MEDIATOR, TURN_PREDICTOR

SAY = "say"


def mediator_brief(public: PublicScenario) -> str:
    lines = public_block(public)
    lines += [
        "",
        "You are the mediator. You hear what the parties say in the open; what each would "
        "accept in private is theirs alone. After each party turn you may step in, with "
        "words and, if you like, a package of one option per topic, or stay silent.",
    ]
    return "\n".join(lines)


class HumanMediator(HumanSeat):
    """The roundtable's proactive mediator, played by a person."""

    def __init__(self, public: PublicScenario, source: MoveSource, role: str = "mediator") -> None:
        super().__init__(SeatRef(role, role, "Mediator"), mediator_brief(public), public, source)
        self.name = "human"

    async def consider(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext
    ) -> Intervention | None:
        fields: list[Field] = [
            TextField(SAY, "say", placeholder="stay silent", help="Your words to the parties."),
            *(
                PickField(
                    f"propose:{t.id}",
                    f"propose {t.name}",
                    topic_options(t),
                    (),
                    min_picks=0,
                    help=f"An option of {t.name} to propose, or none.",
                    needs=Needs(SAY),
                )
                for t in self.public.topics
            ),
        ]
        move = await self.ask("step in, or stay silent", dialogue, ctx, fields)
        words = move.text(SAY)
        if not words:
            return None
        proposal = {t.id: p for t in self.public.topics if (p := move.pick(f"propose:{t.id}"))}
        return Intervention(words, proposal)


def _build(public: PublicScenario, source: MoveSource, setup: AgentSetup) -> HumanMediator:
    return HumanMediator(public, source, setup.role or "mediator")


human_kind(MEDIATOR, "a person mediates: step in with words and a package, or stay silent", _build)
no_human_seat(
    TURN_PREDICTOR,
    "it names who is expected to speak next: machinery of motivated turn-taking, not a seat",
)
