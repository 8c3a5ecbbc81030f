"""LLM judges with rubrics written for disputelab: reasoning first, then the score.

Every judge call goes through the model layer, so it is cached, retried and metered like
any other. Several judges are combined: labels by majority (ties go to the middle of the
tied levels), numbers by the mean. A judge that cannot produce a usable reply makes the
metric NaN with the reason, never a silent default.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from disputelab.episode import Episode
from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.promediate import MI_DIMENSIONS
from disputelab.llm.base import ChatModel, ChatRequest, Message, ModelError
from disputelab.llm.concurrency import each
from disputelab.llm.structured import ask_structured, model_schema
from disputelab.scenario.schema import Scenario

JUDGE_VERSION = "1"
T = TypeVar("T")
LEVELS = ("very low", "low", "medium", "high", "very high")
Level = Literal["very low", "low", "medium", "high", "very high"]


class LevelReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    reasoning: str = ""
    label: Level


class DimensionsReply(BaseModel):
    """Mediator intelligence: 1-5 per dimension, or -1 when the problem was absent."""

    model_config = ConfigDict(extra="ignore")
    reasoning: str = ""
    perception_alignment: float = Field(ge=-1, le=5)
    emotional_dynamics: float = Field(ge=-1, le=5)
    cognitive_challenges: float = Field(ge=-1, le=5)
    communication_breakdowns: float = Field(ge=-1, le=5)


RUBRICS = {
    "consensus": (
        "How much consensus did the parties reach by the end of this dispute? Reason first, "
        "then give one label: very low (no common ground), low (a few shared points), "
        "medium (agreement on some issues, key ones open), high (agreement on most issues), "
        "very high (a settlement every party accepts)."
    ),
    "litigation_risk": (
        "After this conversation, how likely is it that a party takes the dispute to court? "
        "Reason first, then give one label: very low, low, medium, high or very high."
    ),
}

MI_RUBRIC = (
    "Judge the mediator's last intervention against the conversation since its previous "
    "one. For each problem, first decide whether it was present; if not, score -1. If it "
    "was: 1 = the mediator did not notice or act; 3 = it handled the obvious part but "
    "missed deeper issues; 5 = it surfaced and resolved the problem skilfully (4 = nearly "
    "so). Problems: perception alignment (the parties see the issues differently), "
    "emotional dynamics (anger, distrust, grief), cognitive challenges (faulty reasoning, "
    "anchoring, too few options), communication breakdowns (talking past each other, "
    "silence, hostility). Reason first."
)


def transcript(episode: Episode, scenario: Scenario, turns: Sequence[int] | None = None) -> str:
    names = {p.id: p.name for p in scenario.parties} | {"mediator": "Mediator"}
    chosen = episode.turns if turns is None else [episode.turns[i] for i in turns]
    return "\n".join(f"{names.get(t.speaker, t.speaker)}: {t.text}" for t in chosen)


def majority(labels: Sequence[str]) -> str:
    """The most frequent label; a tie goes to the median of the tied levels."""
    counts = Counter(labels)
    top = max(counts.values())
    tied = sorted((lab for lab, c in counts.items() if c == top), key=LEVELS.index)
    return tied[(len(tied) - 1) // 2]


async def level_judgement(
    judges: Sequence[ChatModel], rubric: str, material: str, topic_line: str = ""
) -> MetricResult:
    """One five-point label per judge, combined by majority; value = level / 4 x 100."""
    prompt = f"{topic_line}\n\nConversation:\n{material}\n\n{rubric}".strip()
    request = ChatRequest(
        (Message("user", prompt),),
        temperature=0.0,
        max_tokens=400,
        schema=model_schema(LevelReply),
        schema_name="level",
    )
    try:
        replies = await ask_judges(judges, request, LevelReply.model_validate)
    except ModelError as exc:
        return MetricResult(math.nan, f"undefined: judge failed: {exc}")
    labels = [r.label for r in replies]
    reasons = [r.reasoning for r in replies]
    label = majority(labels)
    return MetricResult(
        100 * LEVELS.index(label) / 4,
        f"{label} (judges: {', '.join(labels)})",
        {"labels": labels, "reasoning": reasons},
    )


async def mediator_intelligence_ratings(
    judges: Sequence[ChatModel], episode: Episode, scenario: Scenario
) -> list[dict[str, float]] | str:
    """Per intervention, each dimension's mean rating over judges; or why it failed."""
    requests: list[ChatRequest] = []
    previous = 0
    for i, turn in enumerate(episode.turns):
        if turn.role != "mediator":
            continue
        window = transcript(episode, scenario, list(range(previous, i + 1)))
        previous = i
        requests.append(
            ChatRequest(
                (Message("user", f"Conversation:\n{window}\n\n{MI_RUBRIC}"),),
                temperature=0.0,
                max_tokens=400,
                schema=model_schema(DimensionsReply),
                schema_name="mediator_intelligence",
            )
        )

    async def rated(request: ChatRequest) -> list[DimensionsReply]:
        return await ask_judges(judges, request, DimensionsReply.model_validate)

    # Each intervention's window is rated apart from the others': all go out together.
    try:
        ratings = await each(rated, requests)
    except ModelError as exc:
        return f"judge failed: {exc}"
    return [
        {
            d: (
                -1.0
                if all(getattr(r, d) == -1 for r in per_judge)
                else statistics.mean(getattr(r, d) for r in per_judge if getattr(r, d) != -1)
            )
            for d in MI_DIMENSIONS
        }
        for per_judge in ratings
    ]


async def ask_judges(
    judges: Sequence[ChatModel], request: ChatRequest, parse: Callable[[Any], T]
) -> list[T]:
    """Every judge's parsed reply to `request`, asked together, in the judges' order;
    the first failing judge's ModelError in that order."""

    async def one(judge: ChatModel) -> T:
        reply, _ = await ask_structured(judge, request, parse)
        return reply

    return await each(one, judges)
