"""The `cause:` condition with a model: pick the best-fitting subcategory of a dispute
cause and rewrite the case brief so that the cause stands out.

AgentMediation's released code asked for the cause to be "super-intensified" by default,
which mixed two treatments: what the dispute is about, and how heated it is. Here the
rewrite keeps the conflict's intensity unless the separate intensity knob asks otherwise
(cause:KEY@INTENSITY, 1 = keep it, below 1 = calmer, above 1 = more heated).
"""

from __future__ import annotations

from typing import Any

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


async def write_cause(
    scenario: Scenario, key: str, intensity: float, model: ChatModel
) -> tuple[Scenario, str]:
    """A copy of `scenario` whose brief foregrounds cause `key`, and the subcategory chosen."""
    category = _category(key)
    zh = scenario.language.startswith("zh")
    lang = "zh" if zh else "en"
    if intensity <= 0:
        return scenario.model_copy(deep=True), ""  # intensity 0: the condition changes nothing
    level = "keep" if abs(intensity - 1.0) < 1e-9 else "down" if intensity < 1.0 else "up"
    brief = scenario.legal.brief if scenario.legal and scenario.legal.brief else scenario.background
    subs = "\n".join(
        f"- {s.key}: {s.zh if zh else s.en} ({s.description})" for s in category.subcategories
    )
    prompt = (_ASK_ZH if zh else _ASK_EN).format(
        category=category.zh if zh else category.en,
        description=category.description,
        subs=subs,
        intensity=_INTENSITY[lang][level],
        limit=max(120, 2 * len(brief)) if zh else max(80, len(brief.split()) * 2),
        brief=brief,
    )
    request = ChatRequest(
        (Message("user", prompt),),
        temperature=0.0,
        max_tokens=900,
        schema=cause_schema(category),
        schema_name="cause",
        seed=0,
    )
    valid = {s.key for s in category.subcategories}

    def parse(data: Any) -> CauseReply:
        reply = CauseReply.model_validate(data)
        if reply.subcategory not in valid:
            raise ValueError(f"subcategory must be one of {', '.join(sorted(valid))}")
        return reply

    try:
        reply, _ = await ask_structured(model, request, parse)
    except ModelReplyError as exc:
        raise ModelReplyError(f"cause:{key}: {str(exc).splitlines()[0]}") from None
    out = scenario.model_copy(deep=True)
    text = reply.brief.strip()
    out.background = text
    if out.legal is not None:
        out.legal.brief = text
    return out, reply.subcategory
