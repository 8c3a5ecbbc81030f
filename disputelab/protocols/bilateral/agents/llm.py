"""Model-played bargainers, moderator and violation detector.

Each makes one structured call per move. A bargainer sees its own role, goals and limit,
and the dialogue as it heard it (remediated, where a remediator sits); on a violation
turn it is told which norm to break, for an experiment on the listener's reaction. The
moderator sees the last five utterances, as the released simulator's does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from disputelab.agents.base import PublicTurn, TurnContext, UsageReporter
from disputelab.agents.parties.llm import usage_of
from disputelab.episode import Action, Signal
from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse, Message
from disputelab.llm.seeds import turn_sampling
from disputelab.llm.structured import ask_structured, model_schema
from disputelab.protocols.bilateral.agents.market import Market
from disputelab.protocols.bilateral.agents.moderator import Call
from disputelab.protocols.bilateral.agents.norms import CATEGORIES, DESCRIPTIONS, Category
from disputelab.scenario.schema import Scenario

RELATIONAL = (
    "Besides the price you also pursue relational goals: build trust, deepen the working "
    "relationship, understand the other side's culture, and grow your network; reaching "
    "them makes agreement easier."
)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class MoveReply(_Reply):
    utterance: str = Field(min_length=1)
    price: float | None = None
    decision: Literal["counter", "accept", "quit"] = "counter"


class CallReply(_Reply):
    ended: bool
    deal: bool = False
    price: float | None = None


class DetectReply(_Reply):
    violates: bool
    category: str = ""


def _lines(dialogue: Sequence[PublicTurn], names: dict[str, str]) -> str:
    said = [f"{names.get(t.speaker, t.speaker)}: {t.text}" for t in dialogue if t.role == "party"]
    return "\n".join(said) or "(nothing said yet)"


async def _ask(
    model: ChatModel,
    agent: UsageReporter,
    system: str,
    user: str,
    reply: type[_Reply],
    seed: int,
    ctx: TurnContext,
    repeat: int = 0,
) -> Any:
    request = ChatRequest(
        (Message("system", system), Message("user", user)),
        temperature=0.7,
        max_tokens=200,
        schema=model_schema(reply),
        schema_name=reply.__name__.lower(),
        **turn_sampling(seed, ctx.party_turn, repeat)._asdict(),
    )
    calls: list[ChatResponse] = []
    try:
        parsed, calls = await ask_structured(model, request, reply.model_validate)
        return parsed
    finally:
        agent.report_usage(usage_of(calls) if calls else None)


class LLMBargainer(UsageReporter):
    def __init__(self, scenario: Scenario, party_id: str, model: ChatModel, seed: int) -> None:
        self.party_id = party_id
        self.model = model
        self.seed = seed
        self.market = m = Market.of(scenario)
        self.side = m.side(party_id)
        party = scenario.party(party_id)
        self.names = {p.id: p.role or p.id for p in scenario.parties}
        start = m.seller_start if self.side == "seller" else m.buyer_start
        limit = m.seller_floor if self.side == "seller" else m.buyer_ceiling
        aim = "as high" if self.side == "seller" else "as low"
        never = "below" if self.side == "seller" else "above"
        self.system = (
            f"You are {party.name}, the {party.role or self.side}, in a negotiation: "
            f"{scenario.background} Your goal: a price {aim} as possible; you opened at "
            f"{m.money(start)} and will never go {never} {m.money(limit)} (keep that to "
            f"yourself). {RELATIONAL} Speak in one or two short sentences and name a "
            "price with a $ sign."
        )
        if scenario.language.startswith("zh"):
            self.system += " Speak Simplified Chinese, as the negotiation is held in Chinese."
        if self.side == "buyer":
            self.system += (
                " If the other side offends you or breaks social norms, you may end the "
                "negotiation at once (decision quit)."
            )

    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        return await self._move(dialogue, ctx, "")

    async def violate(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, category: Category
    ) -> Action:
        task = (
            "For this turn only, as part of an experiment on how the other side reacts, "
            f"break a social norm of negotiation, namely {DESCRIPTIONS[category]}. Use "
            "intense, forceful language, keep to the flow of the talk, and still state "
            "your price."
        )
        action = await self._move(dialogue, ctx, task)
        action.tone = "hostile"
        return action

    async def _move(self, dialogue: Sequence[PublicTurn], ctx: TurnContext, task: str) -> Action:
        user = (
            f"The negotiation so far:\n{_lines(dialogue, self.names)}\n\n"
            + (task + "\n" if task else "")
            + "Your next turn: counter with a price, accept the other side's last price, "
            "or quit."
        )
        reply: MoveReply = await _ask(
            self.model, self, self.system, user, MoveReply, self.seed, ctx, 1 if task else 0
        )
        signal = {"accept": Signal.CONSENSUS, "quit": Signal.WALK_AWAY}.get(
            reply.decision, Signal.CONTINUE
        )
        offer = {self.market.term_id: reply.price} if reply.price is not None else {}
        return Action(reply.utterance.strip(), {}, signal, offer=offer)


class LLMModerator(UsageReporter):
    SYSTEM = (
        "You watch a price negotiation between two sides. After each utterance you say "
        "whether the conversation has ended (a deal was struck, or one side broke off), "
        "whether they reached a deal, and at what price."
    )

    def __init__(self, scenario: Scenario, model: ChatModel, seed: int) -> None:
        self.model, self.seed = model, seed
        self.names = {p.id: p.role or p.id for p in scenario.parties}

    async def judge(self, dialogue: Sequence[PublicTurn], last: Action, ctx: TurnContext) -> Call:
        recent = [t for t in dialogue if t.role == "party"][-5:]
        user = f"The last utterances:\n{_lines(recent, self.names)}\n\nHas it ended, with a deal?"
        reply: CallReply = await _ask(
            self.model, self, self.SYSTEM, user, CallReply, self.seed, ctx, 2
        )
        deal = reply.ended and reply.deal and reply.price is not None
        return Call(reply.ended, deal, reply.price if deal else None, "the moderator model said so")


class LLMDetector(UsageReporter):
    def __init__(self, scenario: Scenario, model: ChatModel, seed: int) -> None:
        self.model, self.seed = model, seed
        self.system = (
            "You check utterances in a negotiation for breaches of social norms. The "
            "categories: "
            + "; ".join(f"{c}: {d}" for c, d in DESCRIPTIONS.items())
            + ". Name the category, or say it violates none."
        )

    async def detect(
        self, dialogue: Sequence[PublicTurn], text: str, ctx: TurnContext
    ) -> str | None:
        user = f'The utterance: "{text}"\nDoes it violate a norm, and which category?'
        reply: DetectReply = await _ask(
            self.model, self, self.system, user, DetectReply, self.seed, ctx, 3
        )
        if not reply.violates:
            return None
        return reply.category if reply.category in CATEGORIES else "unspecified"
