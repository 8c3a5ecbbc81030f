"""Who is expected to speak next: the turn-taking prediction of Inner Thoughts.

A prediction names one party, or `ANYONE` when the floor is open. It decides which
threshold each party's motivation must reach: none for the predicted party, the
interrupt threshold for the others, the self-selection threshold when it is open.

- `RulePredictor` reads the public dialogue only: a party named in the latest utterance
  is expected to answer; otherwise the party whose stated positions differ most from
  the latest speaker's; otherwise anyone.
- `LLMPredictor` asks a model, given the last five utterances. A reply that names
  nobody at the table counts as "anyone", as in ProMediate, and so does one that never
  fits the schema after the re-asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from disputelab.agents.base import Agent, PublicScenario, PublicTurn, TurnContext, UsageReporter
from disputelab.agents.parties.llm import usage_of
from disputelab.agents.prompts import speaker_label
from disputelab.llm.base import ChatModel, ChatRequest, Message, ModelReplyError
from disputelab.llm.seeds import turn_sampling
from disputelab.llm.structured import ask_structured

ANYONE = "anyone"
WINDOW = 5


@runtime_checkable
class PredictsTurns(Agent, Protocol):
    async def predict(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> str:
        """A party id, or `ANYONE`."""
        ...


def disagreement(a: PublicTurn, b: PublicTurn) -> int:
    """On how many topics two turns back different options."""
    return sum(
        1
        for t, s in a.stances.items()
        if t in b.stances and s.option is not None and b.stances[t].option != s.option
    )


class RulePredictor(UsageReporter):
    def __init__(self, public: PublicScenario) -> None:
        self.public = public

    async def predict(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> str:
        return self.rule_prediction(dialogue)

    def rule_prediction(self, dialogue: Sequence[PublicTurn]) -> str:
        if not dialogue:
            return ANYONE
        last = dialogue[-1]
        named = [
            (last.text.find(p.name), p.id)
            for p in self.public.parties
            if p.id != last.speaker and p.name and p.name in last.text
        ]
        if named:
            return min(named)[1]
        if last.role != "party":
            return ANYONE
        latest: dict[str, PublicTurn] = {}
        for t in dialogue:
            if t.role == "party" and t.speaker != last.speaker:
                latest[t.speaker] = t
        # The most opposed answers; among equals, whoever spoke longest ago.
        scored = [
            (disagreement(last, t), -t.turn_index, pid)
            for pid, t in latest.items()
            if disagreement(last, t) > 0
        ]
        return max(scored)[2] if scored else ANYONE


class NextSpeaker(BaseModel):
    model_config = ConfigDict(extra="ignore")
    next: str


class LLMPredictor(UsageReporter):
    def __init__(self, public: PublicScenario, model: ChatModel, seed: int) -> None:
        self.public = public
        self.model = model
        self.seed = seed
        names = [p.name for p in public.parties]
        self.by_name = {p.name.casefold(): p.id for p in public.parties}
        self.schema: dict[str, Any] = {
            "type": "object",
            "properties": {"next": {"type": "string", "enum": [*names, ANYONE]}},
            "required": ["next"],
            "additionalProperties": False,
        }
        self.system = (
            f"You follow a negotiation between {len(names)} people ({', '.join(names)}) "
            "and a mediator. From the last few utterances, predict who of them will speak "
            f"next. Answer with one of their names, or '{ANYONE}' if it could be anyone."
        )

    async def predict(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> str:
        names = {p.id: p.name for p in self.public.parties}
        recent = [f"{speaker_label(names, t)}: {t.text}" for t in dialogue[-WINDOW:]]
        if not recent:
            return ANYONE
        request = ChatRequest(
            (Message("system", self.system), Message("user", "\n".join(recent))),
            temperature=0.0,
            max_tokens=30,
            schema=self.schema,
            schema_name="next_speaker",
            **turn_sampling(self.seed, ctx.party_turn)._asdict(),
        )
        try:
            reply, responses = await ask_structured(self.model, request, NextSpeaker.model_validate)
        except ModelReplyError as exc:
            # A prediction that never fits leaves the floor open, as one naming nobody at
            # the table does; its calls are still charged.
            self.report_usage(usage_of(exc.responses))
            return ANYONE
        self.report_usage(usage_of(responses))
        return self.by_name.get(reply.next.strip().casefold(), ANYONE)
