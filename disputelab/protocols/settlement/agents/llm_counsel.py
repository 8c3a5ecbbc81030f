"""Model counsel: a direct counsel (one call per turn, no look-ahead), the candidate
proposer of the planning counsel (K candidates per turn, within a per-turn call budget),
and, with `rollout_model: counsel`, the other side's offers inside its rollouts.

Every call's seed and cache sample index come from `llm.seeds.turn_sampling`, with the
call's index within the turn as `repeat`, so the calls of one turn are distinct cache
entries and a cached re-run replays them all without calling the model.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from disputelab.agents.base import PublicTurn, TurnContext
from disputelab.agents.parties.llm import usage_of
from disputelab.episode import Action, Usage
from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse, Message, ModelReplyError
from disputelab.llm.concurrency import each
from disputelab.llm.seeds import turn_sampling
from disputelab.llm.structured import ask_structured
from disputelab.protocols.settlement.agents.brief import Brief, read
from disputelab.protocols.settlement.agents.counsel import (
    Counsel,
    Move,
    choose_options,
    move_to_action,
)
from disputelab.protocols.settlement.agents.planning import SimState

MAX_TOKENS = 500
HISTORY_TURNS = 12  # the latest turns shown to the model


class ProposalReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    decision: Literal["offer", "accept"] = "offer"
    amount: float = Field(ge=0)
    clauses: list[str] = Field(default_factory=list)
    plan: str = ""
    utterance: str = Field(min_length=1)


class CandidatesReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    candidates: list[ProposalReply] = Field(min_length=1)


# One schema object per argument: the structured layer memoises its checks and prompt
# line by the object, so a schema rebuilt for every call missed them.
@functools.cache
def proposal_schema(language: str) -> dict[str, Any]:
    chars = 160 if language.startswith("zh") else 300
    return {
        "type": "object",
        "properties": {
            "decision": {"type": "string", "enum": ["offer", "accept"]},
            "amount": {"type": "number"},
            "clauses": {
                "type": "array",
                "items": {"type": "string", "maxLength": 160},
                "maxItems": 6,
            },
            "plan": {"type": "string", "maxLength": 160},
            "utterance": {"type": "string", "maxLength": chars},
        },
        "required": ["decision", "amount", "clauses", "plan", "utterance"],
        "additionalProperties": False,
    }


@functools.cache
def candidates_schema(language: str, k: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "candidates": {
                "type": "array",
                "items": proposal_schema(language),
                "minItems": 1,
                "maxItems": k,
            }
        },
        "required": ["candidates"],
        "additionalProperties": False,
    }


_ASK = {
    "en": {
        "system": "You are settlement counsel in a civil dispute. {role}\n{batna}\nWrite "
        "each clause "
        "as 'field: text' with fields such as deadline, payment_method, liability, enforcement. "
        "Never propose illegal, coercive or unenforceable terms.",
        "turn": "Counsel turn {turn} of {rounds}. The other side's standing offer: {standing}.",
        "memory": "What earlier negotiations taught (rules, experience, similar cases):\n{lines}",
        "one": "Decide: accept the standing offer, or make an offer (an amount and clauses).",
        "many": "Propose {k} different moves (each an offer with an amount and clauses, or "
        "accepting the standing offer), from firm to conciliatory.",
        "set": "This is proposal set {i} of {n}: make it differ from the other sets.",
    },
    "zh": {
        "system": "您是民事纠纷中的和解代理律师。{role}\n{batna}\n每项条款写成“字段: 内容”，字段如 "
        "deadline、payment_method、liability、enforcement。不得提出违法、胁迫或无法执行的条款。",
        "turn": "第{turn}轮（共{rounds}轮）。对方当前报价：{standing}。",
        "memory": "以往谈判的经验（规则、经验、类似案例）：\n{lines}",
        "one": "请决定：接受对方当前报价，或提出报价（金额与条款）。",
        "many": "请提出{k}种不同的方案（每种为含金额与条款的报价，或接受对方报价），从强硬到温和。",
        "set": "这是第{i}组方案（共{n}组），请与其他组有所不同。",
    },
}


def _lang(language: str) -> str:
    return "zh" if language.startswith("zh") else "en"


def transcript(dialogue: Sequence[PublicTurn]) -> str:
    return "\n".join(f"{t.speaker}: {t.text}" for t in dialogue[-HISTORY_TURNS:])


def messages(
    brief: Brief,
    batna_text: str,
    dialogue: Sequence[PublicTurn],
    memories: Sequence[str],
    turn: int,
    ask: str,
) -> tuple[Message, ...]:
    x = _ASK[_lang(brief.language)]
    reading = read(dialogue, brief)
    standing = f"{reading.theirs[-1]:,.0f}" if reading.theirs else "-"
    parts = [
        transcript(dialogue),
        x["turn"].format(turn=turn + 1, rounds=brief.rounds, standing=standing),
    ]
    if memories:
        parts.append(x["memory"].format(lines="\n".join(memories)))
    parts.append(ask)
    system = x["system"].format(role=brief.text, batna=batna_text)
    return (Message("system", system), Message("user", "\n\n".join(parts)))


def to_move(reply: ProposalReply, brief: Brief, dialogue: Sequence[PublicTurn]) -> Move:
    """A reply as a move; accepting needs a standing offer, and an amount must be finite."""
    reading = read(dialogue, brief)
    options = choose_options(brief, reading)
    clauses = tuple(c.strip() for c in reply.clauses if c.strip())
    if reply.decision == "accept":
        if not reading.theirs:
            raise ValueError("decision is accept but the other side has made no offer yet")
        return Move(
            True,
            reading.theirs[-1],
            options,
            clauses or reading.their_clauses,
            reply.utterance.strip(),
        )
    if not math.isfinite(reply.amount):
        raise ValueError("amount must be a finite number")
    return Move(False, reply.amount, options, clauses, reply.utterance.strip())


def usable_moves(
    replies: Sequence[ProposalReply], brief: Brief, dialogue: Sequence[PublicTurn]
) -> list[Move]:
    """The replies that make valid moves; ValueError naming the first fault when none do."""
    moves: list[Move] = []
    fault = ""
    for r in replies:
        try:
            moves.append(to_move(r, brief, dialogue))
        except ValueError as exc:
            fault = fault or str(exc)
    if not moves:
        raise ValueError(f"no usable candidate: {fault}")
    return moves


class ModelProposer:
    """K candidate moves per turn from the model, within `max_calls` calls."""

    def __init__(
        self, model: ChatModel, seed: int, batna_text: str = "", temperature: float = 0.8
    ) -> None:
        self.model = model
        self.seed = seed
        self.batna_text = batna_text
        self.temperature = temperature

    async def __call__(
        self,
        brief: Brief,
        dialogue: Sequence[PublicTurn],
        memories: list[str],
        k: int,
        turn: int,
        max_calls: int = 1,
    ) -> tuple[list[Move], Usage | None]:
        calls = max(1, min(max_calls, k))
        per_call = math.ceil(k / calls)
        ask = _ASK[_lang(brief.language)]

        async def one(repeat: int) -> tuple[list[Move], list[ChatResponse]]:
            request = ChatRequest(
                messages(
                    brief,
                    self.batna_text,
                    dialogue,
                    memories,
                    turn,
                    _ask(ask, per_call, repeat, calls),
                ),
                temperature=self.temperature,
                max_tokens=MAX_TOKENS * per_call,
                schema=candidates_schema(brief.language, per_call),
                schema_name="settlement_candidates",
                **turn_sampling(self.seed, turn, repeat)._asdict(),
            )

            def parse(data: Any) -> list[Move]:
                reply = CandidatesReply.model_validate(data)
                return usable_moves(reply.candidates[:per_call], brief, dialogue)

            try:
                return await ask_structured(self.model, request, parse)
            except ModelReplyError as exc:
                # The planner still has the curve's candidates: a model that keeps
                # replying unusably costs its calls, not the episode.
                return [], exc.responses

        # Each call names its place in the set and none reads another's reply: they go
        # out together, and their candidates are kept in the calls' order.
        replies = await each(one, range(calls))
        moves = [m for got, _ in replies for m in got]
        responses = [r for _, rs in replies for r in rs]
        return moves[:k], usage_of(responses)


def _ask(x: dict[str, str], per_call: int, repeat: int, calls: int) -> str:
    """The request for one call's candidates; with several calls per turn each names its
    place, so their prompts (and replies) differ as well as their sample index."""
    ask = x["many"].format(k=per_call)
    return ask if calls == 1 else ask + " " + x["set"].format(i=repeat + 1, n=calls)


# Cache sample indices of rollout calls start here, clear of the proposer's (one per call
# of the turn's candidate budget), so the two never share a cache entry.
ROLLOUT_REPEAT = 1000

_ROLLOUT = {
    "en": "You now simulate the other side's counsel, from what {side}'s counsel knows "
    "(the talks so far and the outcome analysis), never from the other side's brief. In "
    "a look-ahead, {side} has offered {mine}; the other side's last offer was {theirs}. "
    "What amount does the other side offer next?",
    "zh": "现在请您模拟对方代理律师，只依据{side}一方所知（此前的谈判与诉讼结果评估），"
    "不得依据对方的委托材料。在推演中，{side}一方已报价{mine}；对方上次报价为{theirs}。"
    "对方下一次会报价多少？",
}


def rollout_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"amount": {"type": "number"}},
        "required": ["amount"],
        "additionalProperties": False,
    }


class RolloutReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    amount: float = Field(ge=0)


class ModelOpponent:
    """The other side's offers inside rollouts, asked of the counsel's model from the
    acting side's information only, at most `budget` calls per counsel turn; None once
    the budget is spent or a reply stays unusable (the planner's rule model answers then)."""

    def __init__(self, model: ChatModel, seed: int, temperature: float = 0.7) -> None:
        self.model = model
        self.seed = seed
        self.temperature = temperature
        self.batna_text = ""
        self._context: tuple[Brief, Sequence[PublicTurn], int] | None = None
        self._budget = 0
        self._asked = 0
        self._responses: list[Any] = []

    def start(self, brief: Brief, dialogue: Sequence[PublicTurn], turn: int, budget: int) -> None:
        """A new counsel turn: its dialogue, and a fresh budget of calls."""
        self._context = (brief, dialogue, turn)
        self._budget, self._asked = budget, 0

    async def __call__(self, state: SimState) -> float | None:
        if self._context is None or self._asked >= self._budget:
            return None
        brief, dialogue, turn = self._context
        self._asked += 1
        unit = "-"  # no offer yet
        ask = _ROLLOUT[_lang(brief.language)].format(
            side=brief.side,
            mine=f"{state.my_last:,.0f}" if state.my_last is not None else unit,
            theirs=f"{state.their_last:,.0f}" if state.their_last is not None else unit,
        )
        request = ChatRequest(
            (
                Message("system", self.batna_text or "Settlement negotiation."),
                Message("user", f"{transcript(dialogue)}\n\n{ask}"),
            ),
            temperature=self.temperature,
            max_tokens=60,
            schema=rollout_schema(),
            schema_name="settlement_rollout",
            **turn_sampling(self.seed, turn, ROLLOUT_REPEAT + self._asked)._asdict(),
        )

        def parse(data: Any) -> float:
            amount = RolloutReply.model_validate(data).amount
            if not math.isfinite(amount):
                raise ValueError("amount must be a finite number")
            return amount

        try:
            amount, responses = await ask_structured(self.model, request, parse)
        except ModelReplyError as exc:
            self._responses += exc.responses
            return None
        self._responses += responses
        return amount

    def take_usage(self) -> Usage | None:
        """The rollout calls since the last take, or None when there were none."""
        if not self._responses:
            return None
        used, self._responses = usage_of(self._responses), []
        return used


class LLMCounsel(Counsel):
    """Direct model counsel: one structured call per turn, no planning, no memory."""

    def __init__(
        self, model: ChatModel, seed: int, name: str = "llm", temperature: float = 0.7
    ) -> None:
        super().__init__()
        self.model = model
        self.seed = seed
        self.name = name
        self.temperature = temperature
        self.batna_text = ""

    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        brief = self.need_brief()
        x = _ASK[_lang(brief.language)]
        request = ChatRequest(
            messages(brief, self.batna_text, dialogue, [], ctx.party_turn, x["one"]),
            temperature=self.temperature,
            max_tokens=MAX_TOKENS,
            schema=proposal_schema(brief.language),
            schema_name="settlement_move",
            **turn_sampling(self.seed, ctx.party_turn)._asdict(),
        )

        def parse(data: Any) -> Move:
            return to_move(ProposalReply.model_validate(data), brief, dialogue)

        move, responses = await ask_structured(self.model, request, parse)
        self.report_usage(usage_of(responses))
        return move_to_action(brief, move, move.plan or "-")
