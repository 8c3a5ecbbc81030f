"""Reading a party's stated preferences with a model, where the importer's rules cannot.

ProMediate's case briefs sometimes state a choice only in prose ("you favour mandatory
consultation on every prescription outside a physician's specialty..."), and two options
can share nearly every word, so no word-matching rule can tell them apart safely. For
those, and only those, `scenarios import --model` asks a model. The reply is held to a
JSON schema whose option ids are the topic's own, and is checked again here: an option
the case does not have, an option both accepted and refused, or nothing acceptable at
all, is a failed reading, never a silent one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from disputelab.llm.base import ChatModel, ChatRequest, Message, ModelReplyError
from disputelab.llm.structured import ask_structured
from disputelab.scenario.importers.promediate import ModelReading, UnreadPreference

_SYSTEM = (
    "You read role-play briefs for a negotiation exercise and record, exactly, which "
    "options a participant's brief says they would accept and which they would not. You "
    "never add a preference the brief does not state."
)
_ASK = (
    "Issue: {topic}\nIts options:\n{options}\n\n"
    "What {party}'s brief says about this issue:\n---\n{text}\n---\n\n"
    "Give `ranking`: the option ids {party} would accept, most preferred first (a first "
    "choice, then a second choice, and so on; an option called barely acceptable still "
    "counts, last). Give `unacceptable`: the option ids the brief says {party} will not "
    "accept. Leave out any option the brief does not speak about."
)


class PreferenceReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    ranking: list[str]
    unacceptable: list[str]


def _schema(ids: Sequence[str]) -> dict[str, Any]:
    listed = {"type": "array", "items": {"type": "string", "enum": list(ids)}}
    return {
        "type": "object",
        "properties": {"ranking": listed, "unacceptable": listed},
        "required": ["ranking", "unacceptable"],
        "additionalProperties": False,
    }


def checked(reply: PreferenceReply, ids: Sequence[str]) -> PreferenceReply:
    """The reply, if every option it names exists and the two lists are consistent."""
    named = [*reply.ranking, *reply.unacceptable]
    unknown = sorted(set(named) - set(ids))
    if unknown:
        raise ValueError(f"names options the case does not have: {', '.join(unknown)}")
    both = sorted(set(reply.ranking) & set(reply.unacceptable))
    if both:
        raise ValueError(f"both accepts and refuses {', '.join(both)}")
    if len(set(reply.ranking)) != len(reply.ranking):
        raise ValueError("ranks an option twice")
    if not reply.ranking:
        raise ValueError("finds no acceptable option")
    return reply


async def read_one(model: ChatModel, item: UnreadPreference) -> ModelReading:
    ids = [o.id for o in item.topic.options]
    options = "\n".join(f"{o.id}: {o.label}" for o in item.topic.options)
    ask = _ASK.format(topic=item.topic.name, options=options, party=item.party, text=item.text)
    request = ChatRequest(
        (Message("system", _SYSTEM), Message("user", ask)),
        temperature=0.0,
        max_tokens=120,
        schema=_schema(ids),
        schema_name="stated_preferences",
    )
    try:
        reply, _ = await ask_structured(
            model, request, lambda d: checked(PreferenceReply.model_validate(d), ids)
        )
    except ModelReplyError as exc:
        return ModelReading(item.party, item.topic.id, [], [], str(exc).splitlines()[0])
    return ModelReading(item.party, item.topic.id, reply.ranking, reply.unacceptable, "")


async def read_all(model: ChatModel, items: Sequence[UnreadPreference]) -> list[ModelReading]:
    """Every unread preference at once, within the model's concurrency limit."""
    return list(await asyncio.gather(*(read_one(model, item) for item in items)))
