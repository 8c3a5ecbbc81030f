"""The `cause:` condition with a model: pick the best-fitting subcategory of a dispute
cause and rewrite the case brief so that the cause stands out.

AgentMediation's released code asked for the cause to be "super-intensified" by default,
which mixed two treatments: what the dispute is about, and how heated it is. Here the
rewrite keeps the conflict's intensity unless the separate intensity knob asks otherwise
(cause:KEY@INTENSITY, 1 = keep it, below 1 = calmer, above 1 = more heated).

The paper describes two steps, choosing the subcategory and then rewriting the brief for
it, where its released code asks for both in one call. One call is the default, so that
runs keep the briefs they were written with; `cause:KEY@two-step` asks for the paper's
two calls, the second told the subcategory the first chose.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from disputelab.llm.base import ChatModel, ChatRequest, Message, ModelReplyError
from disputelab.llm.structured import MAX_SCHEMA_STRING, ask_structured
from disputelab.scenario.causes import CauseCategory, dispute_causes
from disputelab.scenario.schema import Scenario

_ASK_EN = (
    "You prepare case material for a mediation study. Rewrite the dispute brief below so "
    "that its main cause is '{category}' ({description}). First choose which of these "
    "subcategories fits the case best:\n{subs}\n"
    "Then rewrite the brief: keep every party, fact, amount and date; add or sharpen only "
    "what makes that cause visible. {intensity} Write in English, at most {limit} words.\n\n"
    "Brief:\n{brief}"
)
_ASK_ZH = (
    "你在为调解研究准备案例材料。请改写下面的纠纷简介，使其主要成因为“{category}”（{description}）。"
    "先从以下子类中选出最符合本案的一项：\n{subs}\n"
    "再改写简介：保留所有当事人、事实、金额和日期，只补充或突出能体现该成因的内容。{intensity}"
    "用中文书写，不超过{limit}字。\n\n简介：\n{brief}"
)
_CHOOSE_EN = (
    "You prepare case material for a mediation study. The dispute below is to be studied "
    "as one whose main cause is '{category}' ({description}). Which of these subcategories "
    "fits this case best?\n{subs}\nAnswer with its key and one sentence saying why.\n\n"
    "Brief:\n{brief}"
)
_CHOOSE_ZH = (
    "你在为调解研究准备案例材料。下面的纠纷将作为主要成因为“{category}”（{description}）的案例来研究。"
    "以下哪个子类最符合本案？\n{subs}\n请给出其键名，并用一句话说明理由。\n\n简介：\n{brief}"
)
_REWRITE_EN = (
    "You prepare case material for a mediation study. Rewrite the dispute brief below so "
    "that its main cause is '{category}', in the form '{sub}' ({sub_description}). Keep "
    "every party, fact, amount and date; add or sharpen only what makes that cause "
    "visible. {intensity} Write in English, at most {limit} words.\n\nBrief:\n{brief}"
)
_REWRITE_ZH = (
    "你在为调解研究准备案例材料。请改写下面的纠纷简介，使其主要成因为“{category}”中的“{sub}”"
    "（{sub_description}）。保留所有当事人、事实、金额和日期，只补充或突出能体现该成因的内容。"
    "{intensity}用中文书写，不超过{limit}字。\n\n简介：\n{brief}"
)
_INTENSITY = {
    "en": {
        "keep": "Keep the emotional intensity of the conflict exactly as it is.",
        "down": "Make the conflict noticeably calmer than it is now.",
        "up": "Make the conflict noticeably more heated than it is now.",
    },
    "zh": {
        "keep": "保持冲突的情绪强度不变，不要激化。",
        "down": "让冲突比现在明显缓和。",
        "up": "让冲突比现在明显激烈。",
    },
}


class CauseReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    subcategory: str
    brief: str = Field(min_length=1)


def _category(key: str) -> CauseCategory:
    for c in dispute_causes():
        if c.key == key:
            return c
    raise ValueError(
        f"unknown cause {key!r}; use one of {', '.join(c.key for c in dispute_causes())}"
    )


def cause_schema(category: CauseCategory) -> dict[str, Any]:
    """The reply: one of the category's subcategory keys, then the rewritten brief."""
    return {
        "type": "object",
        "properties": {
            "subcategory": {"type": "string", "enum": [s.key for s in category.subcategories]},
            "brief": {"type": "string", "maxLength": MAX_SCHEMA_STRING},
        },
        "required": ["subcategory", "brief"],
        "additionalProperties": False,
    }


class ChoiceReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    subcategory: str
    reason: str = ""


class BriefReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    brief: str = Field(min_length=1)


def choice_schema(category: CauseCategory) -> dict[str, Any]:
    """The first of two steps' reply: a subcategory key and why."""
    return {
        "type": "object",
        "properties": {
            "subcategory": {"type": "string", "enum": [s.key for s in category.subcategories]},
            "reason": {"type": "string", "maxLength": 400},
        },
        "required": ["subcategory", "reason"],
        "additionalProperties": False,
    }


BRIEF_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"brief": {"type": "string", "maxLength": MAX_SCHEMA_STRING}},
    "required": ["brief"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class _Ask:
    """What every prompt of one rewrite is filled with."""

    category: CauseCategory
    zh: bool
    brief: str
    values: dict[str, Any]


def _ask(scenario: Scenario, category: CauseCategory, intensity: float) -> _Ask:
    zh = scenario.language.startswith("zh")
    level = "keep" if abs(intensity - 1.0) < 1e-9 else "down" if intensity < 1.0 else "up"
    brief = scenario.legal.brief if scenario.legal and scenario.legal.brief else scenario.background
    subs = "\n".join(
        f"- {s.key}: {s.zh if zh else s.en} ({s.description})" for s in category.subcategories
    )
    values = {
        "category": category.zh if zh else category.en,
        "description": category.description,
        "subs": subs,
        "intensity": _INTENSITY["zh" if zh else "en"][level],
        "limit": max(120, 2 * len(brief)) if zh else max(80, len(brief.split()) * 2),
        "brief": brief,
    }
    return _Ask(category, zh, brief, values)


def _request(prompt: str, schema: dict[str, Any], name: str, tokens: int) -> ChatRequest:
    return ChatRequest(
        (Message("user", prompt),),
        temperature=0.0,
        max_tokens=tokens,
        schema=schema,
        schema_name=name,
        seed=0,
    )


_WithSubcategory = TypeVar("_WithSubcategory", CauseReply, ChoiceReply)


def _parser(
    reply_type: type[_WithSubcategory], category: CauseCategory
) -> Callable[[Any], _WithSubcategory]:
    """A reply's parser that also holds its subcategory to the category's own."""
    valid = {s.key for s in category.subcategories}

    def parse(data: Any) -> _WithSubcategory:
        reply = reply_type.model_validate(data)
        if reply.subcategory not in valid:
            raise ValueError(f"subcategory must be one of {', '.join(sorted(valid))}")
        return reply

    return parse


async def _one_call(ask: _Ask, model: ChatModel) -> tuple[str, str]:
    """The released code's way: subcategory and brief in one reply."""
    prompt = (_ASK_ZH if ask.zh else _ASK_EN).format(**ask.values)
    request = _request(prompt, cause_schema(ask.category), "cause", 900)
    reply, _ = await ask_structured(model, request, _parser(CauseReply, ask.category))
    return reply.brief, reply.subcategory


async def _two_calls(ask: _Ask, model: ChatModel) -> tuple[str, str]:
    """The paper's way: choose the subcategory, then rewrite the brief for the one chosen."""
    choose = (_CHOOSE_ZH if ask.zh else _CHOOSE_EN).format(**ask.values)
    request = _request(choose, choice_schema(ask.category), "cause_subcategory", 200)
    choice, _ = await ask_structured(model, request, _parser(ChoiceReply, ask.category))
    sub = next(s for s in ask.category.subcategories if s.key == choice.subcategory)
    rewrite = (_REWRITE_ZH if ask.zh else _REWRITE_EN).format(
        **ask.values, sub=sub.zh if ask.zh else sub.en, sub_description=sub.description
    )
    brief, _ = await ask_structured(
        model, _request(rewrite, BRIEF_SCHEMA, "cause_brief", 900), BriefReply.model_validate
    )
    return brief.brief, choice.subcategory


async def write_cause(
    scenario: Scenario, key: str, intensity: float, model: ChatModel, *, two_step: bool = False
) -> tuple[Scenario, str]:
    """A copy of `scenario` whose brief foregrounds cause `key`, and the subcategory chosen:
    in one call, or in the paper's two (`two_step`)."""
    category = _category(key)
    if intensity <= 0:
        return scenario.model_copy(deep=True), ""  # intensity 0: the condition changes nothing
    ask = _ask(scenario, category, intensity)
    try:
        text, subcategory = await (_two_calls if two_step else _one_call)(ask, model)
    except ModelReplyError as exc:
        raise ModelReplyError(f"cause:{key}: {str(exc).splitlines()[0]}") from None
    out = scenario.model_copy(deep=True)
    out.background = text.strip()
    if out.legal is not None:
        out.legal.brief = text.strip()
    return out, subcategory
