"""LLM mediators. Both see only the public scenario and the public dialogue.

`generic` (ProMediate's baseline): a when-call decides whether to speak, a how-call says
what. `social` (the inner-thought mediator): it drafts candidate interventions from four
mediation approaches, rates each on the four socio-cognitive factors, intervenes only when
the best overall rating passes a threshold, and then articulates it. Unlike the released
ProMediate code, it uses this scenario's topics (never a fixed case's), treats a reply it
cannot parse as an error to re-ask rather than a silent default, and by default never
speaks twice before every party has had a turn (`mediator_every_turn: true` consults it
after every party turn instead, as SoCRATES does).

Both may ask their when-call of a model of its own (`when_model`, the sub-role
`mediator.when`): the model choice per mediator call that issue 20 asks for ProMediate's
setting. Its calls are then reported apart (`take_call_usage`), so the session charges
them to that sub-role.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext, UsageReporter
from disputelab.agents.parties.llm import usage_of
from disputelab.agents.prompts import dialogue_block, mediator_system, texts
from disputelab.agents.settings import DEFAULT_SETTINGS, AgentSettings
from disputelab.episode import Intervention, Usage
from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse, Message
from disputelab.llm.seeds import turn_sampling
from disputelab.llm.structured import ask_structured, model_schema
from disputelab.protocols.roundtable.agents.state import stated_consensus

FACTORS = (
    "perception_alignment",
    "emotional_dynamics",
    "cognitive_challenges",
    "communication_breakdowns",
)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class WhenReply(_Reply):
    reason: str = ""
    should_speak: bool


class RatedWhenReply(_Reply):
    """The social mediator's separate when-call: reasons, then how needed a move is."""

    reason: str = ""
    should_speak: bool
    rating: float = Field(ge=1, le=5)


class SayReply(_Reply):
    utterance: str = Field(min_length=1)


class Candidate(_Reply):
    approach: Literal["facilitative", "evaluative", "transformative", "settlement"]
    plan: str = Field(min_length=1)


class CandidatesReply(_Reply):
    candidates: list[Candidate] = Field(min_length=1, max_length=5)


class Rating(_Reply):
    reasoning: str = ""
    perception_alignment: float = Field(ge=1, le=5)
    emotional_dynamics: float = Field(ge=1, le=5)
    cognitive_challenges: float = Field(ge=1, le=5)
    communication_breakdowns: float = Field(ge=1, le=5)

    def overall(self) -> float:
        return float(sum(getattr(self, f) for f in FACTORS)) / len(FACTORS)


class RatingsReply(_Reply):
    ratings: list[Rating] = Field(min_length=1)


class _LLMMediator(UsageReporter):
    name = "llm"

    def __init__(
        self,
        public: PublicScenario,
        model: ChatModel,
        seed: int,
        settings: AgentSettings = DEFAULT_SETTINGS,
        when_model: ChatModel | None = None,
    ) -> None:
        self.public = public
        self.model = model
        # A plain attribute, not a mapping: a session fork shares an agent's models.
        self.when_model = when_model
        self.seed = seed
        self.settings = settings
        self.x = texts(public.language)
        self.system = mediator_system(public)
        self.last_position = -1
        self._call_usage: dict[str, Usage] = {}

    def _everyone_spoke_since_last(self, dialogue: Sequence[PublicTurn]) -> bool:
        """True once every party has spoken since this mediator last did."""
        speakers: set[str] = set()
        for t in reversed(dialogue):
            if t.role == "mediator":
                break
            speakers.add(t.speaker)
        return speakers >= {p.id for p in self.public.parties}

    async def consider(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext
    ) -> Intervention | None:
        """Deliberate once every party has spoken since the last intervention, or after
        every party turn when consulted at every turn (SoCRATES)."""
        self.report_usage(None)
        self._call_usage = {}
        if not self.settings.mediator_every_turn and not self._everyone_spoke_since_last(dialogue):
            return None
        talk = dialogue_block(self.public, dialogue, self.settings.window())
        if self.settings.mediator_consensus_state:
            talk += "\n\n" + stated_consensus(self.public, dialogue)
        calls: list[ChatResponse] = []
        own: list[ChatResponse] = []  # the when-call's, when it has a model of its own
        try:
            return await self._deliberate(talk, ctx, calls, own)
        finally:
            self.report_usage(usage_of(calls))
            if own:
                self._call_usage = {"when": usage_of(own)}

    def take_call_usage(self) -> dict[str, Usage]:
        """Usage of the latest deliberation's calls that have a model of their own, by
        call (`when`), once; the session charges each to the sub-role `mediator.when`."""
        usage, self._call_usage = self._call_usage, {}
        return usage

    async def _deliberate(
        self, talk: str, ctx: TurnContext, calls: list[ChatResponse], own: list[ChatResponse]
    ) -> Intervention | None:
        raise NotImplementedError

    async def _ask_when(
        self,
        user: str,
        reply: type[_Reply],
        ctx: TurnContext,
        calls: list[ChatResponse],
        own: list[ChatResponse],
    ) -> Any:
        """The when-call: to its own model when it has one, whose usage goes to `own`."""
        if self.when_model is None:
            return await self._ask(user, reply, "when", ctx, calls)
        return await self._ask(user, reply, "when", ctx, own, model=self.when_model)

    async def _ask(
        self,
        user: str,
        reply: type[_Reply],
        name: str,
        ctx: TurnContext,
        calls: list[ChatResponse],
        temperature: float = 0.6,
        model: ChatModel | None = None,
    ) -> Any:
        chosen = self.settings.mediator_temperature
        request = ChatRequest(
            (Message("system", self.system), Message("user", user)),
            temperature=temperature if chosen is None else chosen,
            max_tokens=500,
            schema=model_schema(reply),
            schema_name=name,
            **turn_sampling(self.seed, ctx.party_turn)._asdict(),
        )
        parsed, responses = await ask_structured(model or self.model, request, reply.model_validate)
        calls.extend(responses)
        return parsed


class GenericMediator(_LLMMediator):
    name = "generic"

    async def _deliberate(
        self, talk: str, ctx: TurnContext, calls: list[ChatResponse], own: list[ChatResponse]
    ) -> Intervention | None:
        when: WhenReply = await self._ask_when(
            f"{talk}\n\n{self.x['when']}", WhenReply, ctx, calls, own
        )
        move = None
        if when.should_speak:
            say: SayReply = await self._ask(
                f"{talk}\n\n{self.x['how']}", SayReply, "how", ctx, calls
            )
            move = Intervention(say.utterance.strip(), {}, when.reason)
        return move


class SocialMediator(_LLMMediator):
    name = "social"

    def __init__(
        self,
        public: PublicScenario,
        model: ChatModel,
        seed: int,
        threshold: float = 3.5,
        settings: AgentSettings = DEFAULT_SETTINGS,
        when_model: ChatModel | None = None,
    ) -> None:
        super().__init__(public, model, seed, settings, when_model)
        self.threshold = threshold

    async def _deliberate(
        self, talk: str, ctx: TurnContext, calls: list[ChatResponse], own: list[ChatResponse]
    ) -> Intervention | None:
        if self.settings.social_when_call:
            # ProMediate's mediator first asks whether to step in at all; only the
            # rating counts, against the same threshold as the strategies' ratings.
            when: RatedWhenReply = await self._ask_when(
                f"{talk}\n\n{self.x['social_when']}", RatedWhenReply, ctx, calls, own
            )
            if when.rating <= self.threshold:
                return None
        drafts: CandidatesReply = await self._ask(
            f"{talk}\n\n{self.x['candidates']}", CandidatesReply, "candidates", ctx, calls
        )
        listing = "\n".join(
            f"{i + 1}. [{c.approach}] {c.plan}" for i, c in enumerate(drafts.candidates)
        )
        rated: RatingsReply = await self._ask(
            f"{talk}\n\n{listing}\n\n{self.x['rate']}",
            RatingsReply,
            "ratings",
            ctx,
            calls,
            temperature=0.0,
        )
        scored = list(zip(drafts.candidates, rated.ratings, strict=False))
        best, rating = max(scored, key=lambda cr: cr[1].overall())
        thought = (
            f"best [{best.approach}] {best.plan} rated {rating.overall():.2f} "
            f"(threshold {self.threshold}): "
            + ", ".join(f"{f}={getattr(rating, f):.1f}" for f in FACTORS)
        )
        move = None
        if rating.overall() >= self.threshold:
            say: SayReply = await self._ask(
                f"{talk}\n\n{self.x['articulate'].format(plan=best.plan)}",
                SayReply,
                "articulate",
                ctx,
                calls,
            )
            move = Intervention(say.utterance.strip(), {}, thought)
        return move
