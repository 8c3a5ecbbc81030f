"""An LLM party's private thinking under motivated turn-taking: draft candidate thoughts
in one call, then rate each in its own call on the Inner Thoughts motivation scale.

Calls per party per event: 1 + k (k thoughts, default 2). The ratings run concurrently.
A rating that still fails after the re-asks is NaN with the reason, never a made-up
number: such a thought is never selected, though it can still be voiced as the fallback.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from disputelab.agents.base import PublicScenario, PublicTurn
from disputelab.agents.prompts import speaker_label
from disputelab.agents.thinking import RECENT_EVENTS, Mind, event_tag
from disputelab.episode import Thought
from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse, Message, ModelReplyError
from disputelab.llm.concurrency import each
from disputelab.llm.seeds import turn_sampling
from disputelab.llm.structured import ask_structured

THOUGHT_CHARS = 100
REASON_CHARS = 200
RATING_TEMPERATURE = 0.3  # ProMediate asks for ratings at 0.3 (its spec, section 3.9)


class DraftReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    text: str = Field(min_length=1)
    stimuli: list[str] = Field(default_factory=list)


class ThoughtsReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    thoughts: list[DraftReply] = Field(min_length=1)


class RatingReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    reason: str = ""
    rating: float = Field(ge=1.0, le=5.0)


# One schema object per argument: the structured layer memoises its checks and prompt
# line by the object, so a schema rebuilt for every call missed them.
@functools.cache
def thoughts_schema(k: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "thoughts": {
                "type": "array",
                "minItems": 1,
                "maxItems": k,
                "items": {
                    "type": "object",
                    "properties": {
                        "text": {"type": "string", "maxLength": THOUGHT_CHARS},
                        "stimuli": {"type": "array", "items": {"type": "string"}, "maxItems": 4},
                    },
                    "required": ["text", "stimuli"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["thoughts"],
        "additionalProperties": False,
    }


RATING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "maxLength": REASON_CHARS},
        "rating": {"type": "number", "minimum": 1, "maximum": 5},
    },
    "required": ["reason", "rating"],
    "additionalProperties": False,
}

_DRAFT = (
    "Nobody is speaking this instant. Before the next person talks, write down up to {k} "
    "private thoughts you have right now about the negotiation. Let your memories and "
    "earlier thoughts shape them. Keep each under 15 words and make them differ from "
    "one another; favour issues that are still open, and be willing to give ground where "
    "it costs you little. If the current state of the deal already satisfies you, one "
    "thought saying so is enough. For each thought list the ids (CON#, MEM#, THO#) of "
    "what prompted it. Nobody else will see these thoughts."
)
_RATE = (
    'You had this private thought: "{thought}"\n\n'
    "How strongly do you want to say it aloud now? Rate from 1 to 5, decimals allowed: "
    "1 means you would almost surely keep quiet, 3 that you would speak if the floor were "
    "free, 5 that you would cut in on someone to say it. Weigh: whether it bears on what "
    "you care about; whether it supplies something missing or corrects something wrong; "
    "how much it could move the deal; how urgent it is; whether it follows from what was "
    "just said; whether it is new rather than a repeat; whether someone quiet ought to be "
    "heard first; and whether others are likely eager to talk. Each consideration moves "
    "the rating by a little (0.1 to 0.3). Give your reasons, first for speaking and then "
    "against, in one or two sentences, then the rating."
)


def _recent(public: PublicScenario, dialogue: Sequence[PublicTurn]) -> str:
    names = {p.id: p.name for p in public.parties}
    lines = []
    for t in dialogue[-RECENT_EVENTS:]:
        lines.append(f"CON#{t.turn_index}: {speaker_label(names, t)}: {t.text}")
    return "\n".join(lines) or "(nobody has spoken yet; the meeting is just opening)"


def _context(public: PublicScenario, dialogue: Sequence[PublicTurn], mind: Mind) -> str:
    memories = "\n".join(f"MEM#{i}: {text}" for i, text in mind.recalled_memories()) or "(none)"
    earlier = "\n".join(f"THO#{t.id}: {t.text}" for t in mind.recalled_thoughts()) or "(none)"
    return (
        f"Latest exchanges:\n{_recent(public, dialogue)}\n\n"
        f"What you remember that bears on it:\n{memories}\n\n"
        f"Your earlier thoughts that bear on it:\n{earlier}"
    )


async def llm_thoughts(
    model: ChatModel,
    system: str,
    public: PublicScenario,
    party_id: str,
    mind: Mind,
    dialogue: Sequence[PublicTurn],
    k: int,
    seed: int,
    party_turn: int,
    temperature: float,
) -> tuple[list[Thought], list[ChatResponse]]:
    """Draft up to `k` thoughts, rate each, keep them in `mind`; with every response."""
    context = _context(public, dialogue, mind)
    sampling = turn_sampling(seed, party_turn)._asdict()
    draft = ChatRequest(
        (Message("system", system), Message("user", f"{context}\n\n{_DRAFT.format(k=k)}")),
        temperature=temperature,
        max_tokens=80 + 60 * k,
        schema=thoughts_schema(k),
        schema_name="thoughts",
        **sampling,
    )
    drafted, responses = await ask_structured(model, draft, ThoughtsReply.model_validate)
    drafts = drafted.thoughts[:k]

    async def rate(text: str) -> tuple[float, str, list[ChatResponse]]:
        ask = ChatRequest(
            (
                Message("system", system),
                Message("user", f"{context}\n\n{_RATE.format(thought=text)}"),
            ),
            temperature=RATING_TEMPERATURE,
            max_tokens=160,
            schema=RATING_SCHEMA,
            schema_name="motivation",
            **sampling,
        )
        try:
            reply, rs = await ask_structured(model, ask, RatingReply.model_validate)
        except ModelReplyError as exc:  # its calls still count
            return math.nan, f"rating failed: {str(exc).splitlines()[0]}", exc.responses
        return round(reply.rating, 1), reply.reason, rs

    rated = await each(rate, [d.text for d in drafts])
    tag = event_tag(dialogue)
    event = dialogue[-1].turn_index if dialogue else -1
    thoughts = []
    for i, (d, (rating, reason, rs)) in enumerate(zip(drafts, rated, strict=True)):
        responses += rs
        stimuli = tuple(s for s in d.stimuli if s.startswith(("CON#", "MEM#", "THO#"))) or (tag,)
        thoughts.append(
            Thought(
                f"{party_id}:{event}:{i}", party_id, d.text.strip(), rating, rating, reason, stimuli
            )
        )
    await mind.keep_async(thoughts)
    return thoughts, responses
