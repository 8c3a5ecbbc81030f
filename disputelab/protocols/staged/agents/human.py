"""A person leads a staged session: they open it, propose a package (with the points of
contention and the legal bases it rests on), guide each bargaining round and make the
final proposal. What Enter plays is what the rule mediator would: its opening words,
its split-the-difference package and the statutes it can cite, so that a person can
start from a sensible proposal and change what they disagree with.
"""

from __future__ import annotations

from collections.abc import Sequence

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext
from disputelab.agents.registry import AgentSetup
from disputelab.episode import Intervention
from disputelab.humans import (
    Field,
    HumanSeat,
    Move,
    MoveSource,
    PickField,
    SeatRef,
    TextField,
    human_kind,
    public_block,
    topic_options,
)
from disputelab.protocols.staged.agents import STAGED_MEDIATOR
from disputelab.protocols.staged.agents.mediators import RuleStagedMediator, append_bases


def staged_brief(public: PublicScenario, retrieved: Sequence[str]) -> str:
    lines = public_block(public)
    case = public.case
    if case is not None and case.facts:
        lines += ["", "Facts established:", *(f"- {f.content}" for f in case.facts)]
    if retrieved:
        lines += ["", "Legal provisions retrieved for this case:", *(f"- {b}" for b in retrieved)]
    lines += [
        "",
        "You are the mediator and lead the session: you open it, propose a package of one "
        "option per topic with the points of contention and the legal bases it rests on, "
        "guide each bargaining round, and make the final proposal the parties accept or not.",
    ]
    return "\n".join(lines)


class HumanStagedMediator(HumanSeat):
    """The staged protocol's mediator, played by a person."""

    def __init__(
        self,
        public: PublicScenario,
        source: MoveSource,
        retrieved: Sequence[str] = (),
        appended: Sequence[str] = (),
        role: str = "mediator",
    ) -> None:
        brief = staged_brief(public, retrieved)
        super().__init__(SeatRef(role, role, "Mediator"), brief, public, source)
        self.name = "human"
        self.rule = RuleStagedMediator(public, retrieved)  # what Enter plays
        self.appended = tuple(appended)

    async def open(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Intervention:
        default = await self.rule.open(dialogue, ctx)
        field = TextField("say", "say", default.utterance, required=True)
        move = await self.ask("open the session", dialogue, ctx, [field])
        return Intervention(move.text("say"))

    async def propose(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, final: bool
    ) -> Intervention:
        default = await self.rule.propose(dialogue, ctx, final)
        fields: list[Field] = [
            *self.package_fields(default.proposal),
            TextField("points", "points of contention", default.points, required=True),
            TextField(
                "bases",
                "legal bases",
                "; ".join(default.bases),
                help="The statutes your proposal rests on, separated by semicolons.",
            ),
            TextField("say", "say", default.utterance, required=True),
        ]
        ask = "your final proposal" if final else "your proposal"
        move = await self.ask(ask, dialogue, ctx, fields)
        bases = tuple(b.strip() for b in move.text("bases").split(";") if b.strip())
        made = Intervention(
            move.text("say"),
            self.package(move),
            "final proposal" if final else "initial proposal",
            move.text("points"),
            bases,
        )
        return append_bases(made, self.appended)

    async def guide(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Intervention:
        default = await self.rule.guide(dialogue, ctx)
        fields: list[Field] = [
            *self.package_fields(default.proposal),
            TextField("say", "say", default.utterance, required=True),
        ]
        move = await self.ask("guide this bargaining round", dialogue, ctx, fields)
        return Intervention(move.text("say"), self.package(move), "round guidance")

    def package_fields(self, default: dict[str, str]) -> list[PickField]:
        return [
            PickField(
                f"package:{t.id}",
                t.name,
                topic_options(t),
                (default[t.id],) if t.id in default else (t.options[0].id,),
            )
            for t in self.public.topics
        ]

    def package(self, move: Move) -> dict[str, str]:
        return {t.id: p for t in self.public.topics if (p := move.pick(f"package:{t.id}"))}


def _build(public: PublicScenario, source: MoveSource, setup: AgentSetup) -> HumanStagedMediator:
    append = setup.settings.expertise_use == "append"
    shown, appended = ((), setup.retrieved) if append else (setup.retrieved, ())
    return HumanStagedMediator(public, source, shown, appended, setup.role or "mediator")


human_kind(STAGED_MEDIATOR, "a person leads the five stages and makes the proposals", _build)
