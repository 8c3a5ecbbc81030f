"""ProMediate's two small evaluation judges, for TLE and ME, in disputelab's own words.

- **Topic mentions (TLE).** ProMediate asks a model, per dialogue line and topic, whether
  the line mentions the topic. Here one call per line returns a yes or no for every topic
  at once (the same question, M times fewer calls).
- **Targeted topics (ME).** ProMediate asks a model which topics a mediator line targets
  ("None" skips it). Here the judge returns the topic ids the intervention works on; an
  empty list leaves the intervention out, as "None" did.

Without a judge the metrics read these off the episode (stances stated anew, the
mediator's proposal). Every call goes through the model layer, so it is cached, retried
and metered; several judges combine by majority. A judge that fails makes the metric that
needed it NaN with the reason, never a silent fallback to the episode's own reading.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from disputelab.episode import Episode
from disputelab.evaluation.promediate import Judged, table_lines
from disputelab.llm.base import ChatModel, ChatRequest, Message, ModelError
from disputelab.llm.concurrency import both, each
from disputelab.llm.structured import ask_structured
from disputelab.scenario.schema import Scenario

VERSION = "1"

MENTION_ASK = (
    "Here is one line of a multi-party negotiation and the list of issues under "
    "negotiation. For each issue, answer true if the line talks about that issue (names "
    "it, argues about it, or proposes or rejects an option on it) and false otherwise."
)
TARGET_ASK = (
    "Here is one intervention by the mediator of a multi-party negotiation and the list "
    "of issues under negotiation. List the ids of the issues this intervention is trying "
    "to move the parties on. Give an empty list if it works on no particular issue."
)


def _issues(scenario: Scenario) -> str:
    return "\n".join(f"- {t.id}: {t.name}. {t.description}".rstrip() for t in scenario.topics)


def _speaker(episode: Episode, scenario: Scenario, i: int) -> str:
    names = {p.id: p.name for p in scenario.parties} | {"mediator": "Mediator"}
    turn = table_lines(episode)[i]
    return f"{names.get(turn.speaker, turn.speaker)}: {turn.text}"


async def _ask(
    judges: Sequence[ChatModel], prompt: str, schema: dict[str, Any], name: str
) -> list[dict[str, Any]]:
    request = ChatRequest(
        (Message("user", prompt),),
        temperature=0.0,
        max_tokens=200,
        schema=schema,
        schema_name=name,
    )

    async def one(judge: ChatModel) -> dict[str, Any]:
        reply, _ = await ask_structured(judge, request, _object)
        return reply

    return await each(one, judges)


def _object(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ValueError("the reply must be a JSON object")
    return data


async def judged_mentions(
    judges: Sequence[ChatModel], episode: Episode, scenario: Scenario
) -> dict[str, list[int]]:
    """Per topic, the dialogue lines (from 1) a majority of judges say mention it."""
    ids = [t.id for t in scenario.topics]
    schema = {
        "type": "object",
        "properties": {t: {"type": "boolean"} for t in ids},
        "required": ids,
        "additionalProperties": False,
    }
    lines = [
        line
        for line, turn in enumerate(table_lines(episode), start=1)
        if turn.role in ("party", "mediator") and turn.text.strip()
    ]

    async def judged(line: int) -> list[dict[str, Any]]:
        prompt = (
            f"Issues:\n{_issues(scenario)}\n\nLine:\n{_speaker(episode, scenario, line - 1)}"
            f"\n\n{MENTION_ASK}"
        )
        return await _ask(judges, prompt, schema, "topic_mentions")

    # Each line is judged on its own: every line's calls go out together.
    out: dict[str, list[int]] = {t: [] for t in ids}
    for line, replies in zip(lines, await each(judged, lines), strict=True):
        for t in ids:
            if 2 * sum(r.get(t) is True for r in replies) > len(replies):
                out[t].append(line)
    return {t: lines for t, lines in out.items() if lines}


async def judged_targets(
    judges: Sequence[ChatModel], episode: Episode, scenario: Scenario
) -> list[tuple[int, list[str]]]:
    """Per mediator line, (lines before it, the topics a majority of judges say it
    targets), on the dialogue-line clock of `episode_events`."""
    ids = [t.id for t in scenario.topics]
    schema = {
        "type": "object",
        "properties": {
            "topics": {
                "type": "array",
                "items": {"type": "string", "enum": ids},
                "maxItems": len(ids),
            }
        },
        "required": ["topics"],
        "additionalProperties": False,
    }
    lines = [
        line for line, turn in enumerate(table_lines(episode), start=1) if turn.role == "mediator"
    ]

    async def judged(line: int) -> list[dict[str, Any]]:
        prompt = (
            f"Issues:\n{_issues(scenario)}\n\nIntervention:\n"
            f"{_speaker(episode, scenario, line - 1)}\n\n{TARGET_ASK}"
        )
        return await _ask(judges, prompt, schema, "targeted_topics")

    out: list[tuple[int, list[str]]] = []
    for line, replies in zip(lines, await each(judged, lines), strict=True):
        votes = [set(r.get("topics") or []) & set(ids) for r in replies]
        out.append((line - 1, [t for t in ids if 2 * sum(t in v for v in votes) > len(votes)]))
    return out


async def judge_events(judges: Sequence[ChatModel], episode: Episode, scenario: Scenario) -> Judged:
    """Mentions and targets from the judges; each is the reason instead if it failed.
    The two read the episode only, so they are asked together."""

    async def mentions() -> dict[str, list[int]] | str:
        try:
            return await judged_mentions(judges, episode, scenario)
        except ModelError as exc:
            return f"topic-mention judge failed: {str(exc).splitlines()[0]}"

    async def targets() -> list[tuple[int, list[str]]] | str:
        try:
            return await judged_targets(judges, episode, scenario)
        except ModelError as exc:
            return f"targeted-topic judge failed: {str(exc).splitlines()[0]}"

    return Judged(*await both(mentions, targets))
