"""A party's closing verdict asked as two calls, as AgentMediation asks it: first whether
the party accepts the final proposal (its Table 18), then how satisfied it is (Table 19),
each with its own anchors. The one-call verdict (decision and satisfaction together) is
disputelab's default and stays in `llm.py`.

The anchors below are ours: they keep the meaning of each of the paper's levels, not its
wording.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from disputelab.agents.base import PublicScenario
from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse, Message
from disputelab.llm.structured import ask_structured, model_schema

MAX_TOKENS = 400


class VerdictReply(BaseModel):
    """A verdict whichever way it was asked: decision, satisfaction, words, reason."""

    model_config = ConfigDict(extra="ignore")
    utterance: str = Field(min_length=1)
    decision: Literal["accept", "uncertain", "reject"]
    satisfaction: Literal["very low", "low", "medium", "high", "very high"]
    reason: str = ""


class AcceptanceReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    decision: Literal["accept", "uncertain", "reject"]
    reason: str = ""
    utterance: str = Field(min_length=1)


class SatisfactionReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    satisfaction: Literal["very low", "low", "medium", "high", "very high"]
    reason: str = ""


_ACCEPT = {
    "en": (
        "The mediator's final proposal is: {summary}.\n"
        "Decide, as your character, whether you accept it. Take your time: weigh it against "
        "what you really need and what going to court would bring, not against how the talk "
        "felt. Answer accept (you would sign it), uncertain (you cannot commit yet) or "
        "reject (you would rather litigate); give your reason, and say in one or two "
        "sentences what you tell the table."
    ),
    "zh": (
        "调解员的最终方案是：{summary}。\n"
        "请以你的身份决定是否接受。不要急于下结论：把它和你真正需要的东西、以及诉讼可能带来的结果相比，"
        "而不是和谈话的气氛相比。回答 accept（愿意签字）、uncertain（暂时无法决定）"
        "或 reject（宁可诉讼），"
        "说明理由，并用一两句话说出你对大家讲的话。"
    ),
}

_SATISFY = {
    "en": (
        "The mediator's final proposal is: {summary}.\n"
        "Now, privately and honestly (nobody else will read this, so there is no need to "
        "seem cooperative), rate how satisfied you are with how this mediation went for you. "
        "Ask yourself whether you got to voice what worried you, whether your most important "
        "needs were dealt with, how far the outcome meets what you hoped for at heart, and "
        "whether you can live with it despite any doubts. Levels:\n"
        "- very low: you could not say what mattered, or were brushed aside; your core needs "
        "are unmet; you felt powerless; the result is hard to swallow.\n"
        "- low: you said some of it but what mattered most was waved away; you went along "
        "mainly to avoid a fight and regret it inside.\n"
        "- medium: your position was stated and partly heard; some core questions were never "
        "explored; you can accept the result, with hesitation.\n"
        "- high: you stated your position clearly and were answered; the concessions were "
        "reasonable; your key issues were addressed; you broadly agree.\n"
        "- very high: you said everything you needed to; your core needs were understood and "
        "met; you felt respected and are at peace with the result.\n"
        "Give the level and your reason."
    ),
    "zh": (
        "调解员的最终方案是：{summary}。\n"
        "现在请私下、诚实地（没有别人会看到，不必显得合作）评价你对这次调解的满意程度。问问自己：你是否说出了"
        "真正的顾虑？最重要的需求是否得到处理？结果在多大程度上符合你内心的期望？尽管有疑虑，你能否接受它？等级：\n"
        "- very low（很低）：没能说出在意的事，或被忽视；核心需求没有满足；感到无力；"
        "结果难以接受。\n"
        "- low（较低）：说了一部分，但最重要的被搁置；主要为了避免冲突而配合，内心后悔。\n"
        "- medium（中等）：立场表达了并被部分听到；一些核心问题没有深入；可以接受但有犹豫。\n"
        "- high（较高）：清楚表达了立场并得到回应；让步合理；关键问题得到处理；基本同意。\n"
        "- very high（很高）：充分表达；核心需求被理解并满足；感到被尊重，对结果安心。\n"
        "给出等级和理由。"
    ),
}


def _schema(reply: type[BaseModel], lengths: Mapping[str, int]) -> dict[str, Any]:
    """The reply's JSON schema with length bounds on its free-text fields: one object per
    reply and bounds, so that the structured layer's memos know it from the second call."""
    return _bounded_schema(reply, tuple(lengths.items()))


@functools.cache
def _bounded_schema(reply: type[BaseModel], lengths: tuple[tuple[str, int], ...]) -> dict[str, Any]:
    schema = copy.deepcopy(model_schema(reply))
    for name, limit in lengths:
        schema["properties"][name]["maxLength"] = limit
    schema["additionalProperties"] = False
    schema["required"] = list(schema["properties"])
    return schema


async def ask_verdict_in_two(
    model: ChatModel,
    system: str,
    public: PublicScenario,
    dialogue: str,
    summary: str,
    temperature: float,
    sampling: Mapping[str, Any],
    limits: tuple[int, int] = (300, 200),
) -> tuple[VerdictReply, list[ChatResponse]]:
    """Acceptance, then satisfaction, as two requests; both replies folded into one."""
    lang = "zh" if public.language.startswith("zh") else "en"
    utterance, reason = limits
    calls: list[ChatResponse] = []

    def request(task: str, reply: type[BaseModel], name: str, lengths: dict[str, int]) -> Any:
        return ChatRequest(
            (Message("system", system), Message("user", f"{dialogue}\n\n{task}")),
            temperature=temperature,
            max_tokens=MAX_TOKENS,
            schema=_schema(reply, lengths),
            schema_name=name,
            **sampling,
        )

    accept_req = request(
        _ACCEPT[lang].format(summary=summary),
        AcceptanceReply,
        "acceptance",
        {"reason": reason, "utterance": utterance},
    )
    accepted, responses = await ask_structured(model, accept_req, AcceptanceReply.model_validate)
    calls += responses
    task = _SATISFY[lang].format(summary=summary)
    satisfy_req = request(task, SatisfactionReply, "satisfaction", {"reason": reason})
    satisfied, responses = await ask_structured(
        model, satisfy_req, SatisfactionReply.model_validate
    )
    calls += responses
    return (
        VerdictReply(
            utterance=accepted.utterance,
            decision=accepted.decision,
            satisfaction=satisfied.satisfaction,
            reason=f"{accepted.reason} | {satisfied.reason}".strip(" |"),
        ),
        calls,
    )
