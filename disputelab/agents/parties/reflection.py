"""A party's self-check and its running note of its own terms (AgentMediation's party).

Under `party_reflection` an LLM party in the staged protocol does two more things after
each statement or bargaining turn, as AgentMediation's parties do:

1. **Self-check.** A separate call reads the turn it just produced beside the dialogue
   and its last noted terms, and checks only objective faults: a claim that moves the
   wrong way (a claimant asking for more than before, a payer offering less), numbers
   or dates that contradict each other, ignoring the other side's latest terms, repeating
   an earlier line word for word, or haggling over trifles. Tone is not judged. When it
   finds a serious fault it gives a corrected line, which replaces the words and is
   checked again, up to `MAX_CHECKS` checks in all. Only the words change: the stances
   the party took stay its decision.
2. **Terms note.** One more call sums up, in one sentence, the terms the party now
   stands on (how it splits responsibility, the key amount, what it has conceded). The
   note goes into the party's next prompt, so it can stay consistent with itself. It
   is asked beside the first check, about the line as spoken; a revised line has it
   asked again.

The prompts are disputelab's own.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from disputelab.agents.base import PublicScenario
from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse, Message
from disputelab.llm.structured import ask_structured

MAX_CHECKS = 3
CHECK_TOKENS = 400
NOTE_TOKENS = 150


class CheckReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    side: str = ""
    analysis: str = ""
    serious_problem: bool
    revised: str = ""


class NoteReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    terms: str = Field(min_length=1)


_TEXT = {
    "en": {
        "check": "Before your line is spoken, check it. Your line:\n{line}\n\nThe terms you "
        "stood on before it: {terms}\n\nSay first which side you are on (the one who claims "
        "or the one who pays) and which way your demands may move. Then look only for "
        "objective faults: a demand that moves the wrong way (a claimant asking for more, a "
        "payer offering less, than before); numbers or dates that do not add up; not "
        "answering the other side's latest terms; repeating an earlier line word for word; "
        "arguing over trifles. Do not judge tone. If there is a serious fault, set "
        "serious_problem to true and write the corrected line in revised (same length, "
        "same stance); otherwise false and leave revised empty.",
        "note": "Your line just now:\n{line}\n\nThe terms you stood on before it: "
        "{terms}\n\nIn one plain sentence, state the terms you now stand on: how you split "
        "responsibility between the sides, the key amount, and what you have conceded or "
        "will concede at most.",
        "none": "(none yet)",
        "memory": "The terms you stood on after your last turn (stay consistent with them):",
    },
    "zh": {
        "check": "在说出这句话之前，请先检查它。你的发言：\n{line}\n\n你此前坚持的条件：{terms}"
        "\n\n先说明你是哪一方（主张赔偿的一方还是支付的一方），以及你的要求应往哪个方向变动。"
        "然后只检查客观问题：要求变动方向错误（索赔方比之前要得更多，付款方比之前给得更少）；"
        "数字或日期前后矛盾；没有回应对方最新的条件；逐字重复之前的发言；在细枝末节上纠缠。"
        "不评价语气。如有严重问题，serious_problem 填 true，并在 revised 中写出修改后的发言"
        "（长度和立场不变）；否则填 false，revised 留空。",
        "note": "你刚才的发言：\n{line}\n\n你此前坚持的条件：{terms}\n\n"
        "请用一句平实的话说明你现在坚持的条件：双方责任如何划分、关键金额、你已让步或最多"
        "愿意让步到什么程度。",
        "none": "（暂无）",
        "memory": "你上一轮发言后坚持的条件（请与之保持一致）：",
    },
}


def reflection_text(language: str) -> dict[str, str]:
    return _TEXT["zh" if language.startswith("zh") else "en"]


# One schema object per argument: the structured layer memoises its checks and prompt
# line by the object, so a schema rebuilt for every call missed them.
@functools.cache
def _schema(limit: int, check: bool) -> dict[str, Any]:
    if not check:
        return {
            "type": "object",
            "properties": {"terms": {"type": "string", "maxLength": limit}},
            "required": ["terms"],
            "additionalProperties": False,
        }
    return {
        "type": "object",
        "properties": {
            "side": {"type": "string", "maxLength": 120},
            "analysis": {"type": "string", "maxLength": 2 * limit},
            "serious_problem": {"type": "boolean"},
            "revised": {"type": "string", "maxLength": limit},
        },
        "required": ["side", "analysis", "serious_problem", "revised"],
        "additionalProperties": False,
    }


async def self_check(
    model: ChatModel,
    system: str,
    public: PublicScenario,
    talk: str,
    line: str,
    terms: str,
    call: Mapping[str, Any],
) -> tuple[str, int, list[ChatResponse]]:
    """The line after up to `MAX_CHECKS` checks, how many times it was revised, and the
    calls. `call` holds the request's temperature, seed and sample index."""
    x = reflection_text(public.language)
    limit = 120 if public.language.startswith("zh") else 300
    responses: list[ChatResponse] = []
    revisions = 0
    for _ in range(MAX_CHECKS):
        ask = x["check"].format(line=line, terms=terms or x["none"])
        request = ChatRequest(
            (Message("system", system), Message("user", f"{talk}\n\n{ask}")),
            max_tokens=CHECK_TOKENS,
            schema=_schema(limit, check=True),
            schema_name="self_check",
            **call,
        )
        reply, got = await ask_structured(model, request, CheckReply.model_validate)
        responses += got
        if not reply.serious_problem or not reply.revised.strip():
            break
        line = reply.revised.strip()
        revisions += 1
    return line, revisions, responses


async def note_terms(
    model: ChatModel,
    system: str,
    public: PublicScenario,
    line: str,
    terms: str,
    call: Mapping[str, Any],
) -> tuple[str, list[ChatResponse]]:
    """One sentence of the terms the party now stands on, and the calls."""
    x = reflection_text(public.language)
    limit = 120 if public.language.startswith("zh") else 300
    request = ChatRequest(
        (
            Message("system", system),
            Message("user", x["note"].format(line=line, terms=terms or x["none"])),
        ),
        max_tokens=NOTE_TOKENS,
        schema=_schema(limit, check=False),
        schema_name="terms_note",
        **call,
    )
    reply, responses = await ask_structured(model, request, NoteReply.model_validate)
    return reply.terms.strip(), responses
