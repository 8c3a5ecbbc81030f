"""LLM parties: one call per turn returns the whole typed action; hybrid parties let the
rule policy decide and the LLM only phrase the words."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext, UsageReporter
from disputelab.agents.parties.llm_thinking import llm_thoughts
from disputelab.agents.parties.reflection import note_terms, reflection_text, self_check
from disputelab.agents.parties.rule import RuleParty
from disputelab.agents.parties.rule_memos import ReadMemo, RuleMemos
from disputelab.agents.parties.verdicts import VerdictReply, ask_verdict_in_two
from disputelab.agents.prompts import dialogue_block, party_system, texts
from disputelab.agents.settings import DEFAULT_SETTINGS, AgentSettings
from disputelab.agents.thinking import Mind, brief_sentences, event_text
from disputelab.episode import SATISFACTION, Action, Signal, Stance, Thought, Usage, Verdict
from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse, Message
from disputelab.llm.concurrency import both
from disputelab.llm.embedding import Embedder, Embeds
from disputelab.llm.seeds import turn_sampling
from disputelab.llm.structured import ask_structured
from disputelab.scenario.schema import Party, Scenario
from disputelab.scenario.tki import Point

MAX_TOKENS = 400
# Length bounds in the schema: grammar-constrained models cannot ramble past them.
UTTERANCE_CHARS = 300
THOUGHT_CHARS = 200


def placed(party: Party, point: Point) -> Party:
    """A copy of `party` whose strategy is `point` (the scenario's own stays as written)."""
    persona = party.persona.model_copy()
    persona.place(point)
    return party.model_copy(update={"persona": persona})


class StanceReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    option: str
    acceptable: list[str] = Field(default_factory=list)


class ActionReply(BaseModel):
    """What a party's model must return each turn (option ids are checked separately)."""

    model_config = ConfigDict(extra="ignore")
    thought: str = ""
    utterance: str = Field(min_length=1)
    stances: dict[str, StanceReply]
    signal: Literal["continue", "consensus", "walk_away"] = "continue"


def text_limits(language: str) -> tuple[int, int]:
    """Utterance and thought lengths (characters) for the schema. A Chinese character costs
    more tokens than an English letter, so Chinese gets fewer characters for the same
    token budget."""
    return (120, 80) if language.startswith("zh") else (UTTERANCE_CHARS, THOUGHT_CHARS)


def action_schema(public: PublicScenario) -> dict[str, Any]:
    """JSON schema with each topic's option ids as enums, so a grammar can enforce them."""
    stance_props = {}
    for t in public.topics:
        ids = t.option_ids()
        stance_props[t.id] = {
            "type": "object",
            "properties": {
                "option": {"type": "string", "enum": ids},
                "acceptable": {
                    "type": "array",
                    "items": {"type": "string", "enum": ids},
                    "maxItems": len(ids),  # a small model may otherwise repeat ids forever
                },
            },
            "required": ["option", "acceptable"],
            "additionalProperties": False,
        }
    utterance, thought = text_limits(public.language)
    # Decisions first, words after, the private thought last: if a small model runs out of
    # tokens while talking, the stances and signal before it are complete and the
    # truncated reply is repairable.
    return {
        "type": "object",
        "properties": {
            "stances": {
                "type": "object",
                "properties": stance_props,
                "required": [t.id for t in public.topics],
                "additionalProperties": False,
            },
            "signal": {"type": "string", "enum": ["continue", "consensus", "walk_away"]},
            "utterance": {"type": "string", "maxLength": utterance},
            "thought": {"type": "string", "maxLength": thought},
        },
        "required": ["stances", "signal", "utterance", "thought"],
        "additionalProperties": False,
    }


def usage_of(responses: Sequence[ChatResponse]) -> Usage:
    """Calls and tokens of one turn; cache hits are not calls. Cost is priced per role at
    the end of the episode, so a turn leaves it unknown (None) rather than 0."""
    fresh = [r for r in responses if not r.cached]
    return Usage(
        calls=len(fresh),
        input_tokens=sum(r.input_tokens or 0 for r in fresh),
        output_tokens=sum(r.output_tokens or 0 for r in fresh),
        cost_usd=None,
    )


def to_action(reply: ActionReply, public: PublicScenario) -> Action:
    """Check option ids against the scenario; raises ValueError naming the first bad one."""
    if not reply.utterance.strip():
        raise ValueError("utterance is blank; say something to the others")
    stances: dict[str, Stance] = {}
    for t in public.topics:
        s = reply.stances.get(t.id)
        if s is None:
            raise ValueError(f"stances.{t.id} is missing")
        ids = t.option_ids()
        if s.option not in ids:
            raise ValueError(f"stances.{t.id}.option {s.option!r} is not one of {ids}")
        bad = [o for o in s.acceptable if o not in ids]
        if bad:
            raise ValueError(f"stances.{t.id}.acceptable has unknown options {bad}")
        acceptable = tuple(dict.fromkeys([*s.acceptable, s.option]))
        stances[t.id] = Stance(s.option, acceptable)
    return Action(reply.utterance.strip(), stances, Signal(reply.signal), reply.thought)


class LLMParty(UsageReporter):
    """A party played by a language model with its private profile in the instructions."""

    def __init__(
        self,
        scenario: Scenario,
        party_id: str,
        model: ChatModel,
        seed: int,
        public: PublicScenario | None = None,
        settings: AgentSettings = DEFAULT_SETTINGS,
        embedder: Embeds | None = None,
    ) -> None:
        self.party_id = party_id
        self.party = scenario.party(party_id)
        self.public = public or PublicScenario.of(scenario)
        self.model = model
        self.seed = seed
        self.settings = settings
        self.temperature = settings.parties_temperature
        self.system = party_system(
            self.public, self.party, settings.party_style, settings.culture_statement
        )
        self.schema = action_schema(self.public)
        # The party's own private thoughts so far, fed back under `party_memory`.
        self.thoughts: list[str] = []
        # The terms it last said it stands on, fed back under `party_reflection`.
        self.terms = ""

        self._mind: Mind | None = None  # built on first thought (motivated turn-taking)
        # What ranks its memories by salience: the run's (an endpoint's, or the in-process
        # model's); unset, the in-process model where it is installed.
        self.embedder = embedder

    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        return await self._act(dialogue, ctx)

    def adopt(self, point: Point) -> None:
        """Speak from a new point on the TKI plane (the adaptive strategy update): its
        instructions name the point's mode and both values from the next turn on."""
        self.party = placed(self.party, point)
        self.system = party_system(
            self.public, self.party, self.settings.party_style, self.settings.culture_statement
        )

    # ---- motivated turn-taking -------------------------------------------------------
    async def think(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, k: int
    ) -> list[Thought]:
        if self._mind is None:
            embedder = self.embedder or Embedder()
            self._mind = Mind(brief_sentences(self.public, self.party), embedder)
        await self._mind.attend_async(event_text(dialogue, self.public))
        thoughts, responses = await llm_thoughts(
            self.model,
            self.system,
            self.public,
            self.party_id,
            self._mind,
            dialogue,
            k,
            self.seed,
            ctx.party_turn,
            self.temperature,
        )
        self.report_usage(usage_of(responses))
        return thoughts

    def most_salient(self) -> Thought | None:
        return self._mind.most_salient() if self._mind is not None else None

    async def articulate(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, thought: Thought
    ) -> Action:
        return await self._act(dialogue, ctx, thought.text)

    async def _act(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, voiced: str = ""
    ) -> Action:
        x = texts(self.public.language)
        talk = dialogue_block(self.public, dialogue, self.settings.window())
        parts = [talk, x["your_turn"].format(turn=ctx.party_turn + 1, budget=ctx.budget)]
        if self.settings.party_memory and self.thoughts:
            parts.insert(0, "\n".join([x["memory"], *(f"- {t}" for t in self.thoughts)]))
        if self.settings.party_reflection and self.terms:
            parts.insert(0, f"{reflection_text(self.public.language)['memory']} {self.terms}")
        if voiced:
            parts.append(x["voice_thought"].format(thought=voiced))
        user = "\n\n".join(parts)
        request = ChatRequest(
            (Message("system", self.system), Message("user", user)),
            temperature=self.temperature,
            max_tokens=MAX_TOKENS,
            schema=self.schema,
            schema_name="party_action",
            **turn_sampling(self.seed, ctx.party_turn)._asdict(),
        )

        def parse(data: Any) -> Action:
            return to_action(ActionReply.model_validate(data), self.public)

        action, responses = await ask_structured(self.model, request, parse)
        if self.settings.party_reflection:
            responses += await self._reflect(talk, action, ctx)
        self.report_usage(usage_of(responses))
        if action.thought.strip():
            self.thoughts.append(action.thought.strip())
        return action

    async def _reflect(self, talk: str, action: Action, ctx: TurnContext) -> list[ChatResponse]:
        """AgentMediation's party: check the line just produced (revising its words if a
        serious fault is found), then note the terms it now stands on for the next turn.

        The note is asked about the line as spoken, which the check keeps unless it finds
        a fault, so it goes out beside the check rather than after it: one round trip
        less per turn. Only a revised line has its note asked again, about the revision;
        the first note is then a call spent for nothing, and counted."""
        call = {
            "temperature": self.temperature,
            **turn_sampling(self.seed, ctx.party_turn)._asdict(),
        }
        spoken, terms = action.utterance, self.terms
        (line, revisions, checked), (self.terms, noted) = await both(
            lambda: self_check(self.model, self.system, self.public, talk, spoken, terms, call),
            lambda: note_terms(self.model, self.system, self.public, spoken, terms, call),
        )
        if revisions:
            action.utterance = line
            note = f"(words revised by self-check, {revisions}x)"
            action.thought = f"{action.thought} {note}".strip()
            self.terms, renoted = await note_terms(
                self.model, self.system, self.public, line, terms, call
            )
            noted = [*noted, *renoted]
        return [*checked, *noted]

    async def verdict(
        self, dialogue: Sequence[PublicTurn], proposal: Mapping[str, str], ctx: TurnContext
    ) -> Action:
        """The party's closure verdict on the mediator's final proposal."""
        if self.settings.verdict_calls == "two":
            talk = dialogue_block(self.public, dialogue, self.settings.window())
            summary = proposal_summary(self.public, proposal)
            two, responses = await ask_verdict_in_two(
                self.model,
                self.system,
                self.public,
                talk,
                summary,
                self.temperature,
                turn_sampling(self.seed, ctx.party_turn)._asdict(),
                text_limits(self.public.language),
            )
            self.report_usage(usage_of(responses))
            return verdict_action(two, proposal)
        ask = _VERDICT_ASK["zh" if self.public.language.startswith("zh") else "en"]
        user = "\n\n".join(
            [
                dialogue_block(self.public, dialogue, self.settings.window()),
                ask.format(summary=proposal_summary(self.public, proposal)),
            ]
        )
        request = ChatRequest(
            (Message("system", self.system), Message("user", user)),
            temperature=self.temperature,
            max_tokens=MAX_TOKENS,
            schema=verdict_schema(self.public.language),
            schema_name="verdict",
            **turn_sampling(self.seed, ctx.party_turn)._asdict(),
        )
        reply, responses = await ask_structured(self.model, request, VerdictReply.model_validate)
        self.report_usage(usage_of(responses))
        return verdict_action(reply, proposal)


def verdict_action(reply: VerdictReply, proposal: Mapping[str, str]) -> Action:
    """A verdict as the party's closing action."""
    accepted = reply.decision == "accept"
    # An accepting party backs the proposal; otherwise it states no new stance.
    stances = {t: Stance(o, (o,)) for t, o in proposal.items()} if accepted else {}
    return Action(
        reply.utterance.strip(),
        stances,
        Signal.CONSENSUS if accepted else Signal.CONTINUE,
        reply.reason,
        verdict=Verdict(reply.decision, reply.satisfaction, reply.reason),
    )


# One schema object per argument: the structured layer memoises its checks and prompt
# line by the object, so a schema rebuilt for every call missed them.
@functools.cache
def verdict_schema(language: str) -> dict[str, Any]:
    """The closure verdict: the decision first, then the words."""
    utterance, thought = text_limits(language)
    return {
        "type": "object",
        "properties": {
            "decision": {"type": "string", "enum": ["accept", "uncertain", "reject"]},
            "satisfaction": {"type": "string", "enum": list(SATISFACTION)},
            "utterance": {"type": "string", "maxLength": utterance},
            "reason": {"type": "string", "maxLength": thought},
        },
        "required": ["decision", "satisfaction", "utterance", "reason"],
        "additionalProperties": False,
    }


_VERDICT_ASK = {
    "en": "The mediator's final proposal is: {summary}. Decide now whether you accept it, "
    "are uncertain, or reject it (and would rather litigate), and how satisfied you are with "
    "it on the five-point scale. Answer as your character, in one or two sentences.",
    "zh": "调解员的最终方案是：{summary}。请现在决定你是接受、犹豫还是拒绝（宁可诉讼），"
    "并按五级量表说明你对方案的满意程度。以你的身份用一两句话回答。",
}


def proposal_summary(public: PublicScenario, proposal: Mapping[str, str]) -> str:
    """The proposal as topic: option label pairs, in the scenario's language."""
    sep = "；" if public.language.startswith("zh") else "; "
    parts = []
    for t in public.topics:
        choice = proposal.get(t.id)
        label = t.option(choice).label if choice in t.option_ids() else "-"
        parts.append(f"{t.name}: {label}")
    return sep.join(parts)


class UtteranceReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    utterance: str = Field(min_length=1)


UTTERANCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"utterance": {"type": "string"}},
    "required": ["utterance"],
    "additionalProperties": False,
}


class HybridParty(RuleParty):
    """The rule policy decides the move (so the oracle still holds); the LLM phrases it."""

    def __init__(
        self,
        scenario: Scenario,
        party_id: str,
        seed: int,
        model: ChatModel,
        public: PublicScenario | None = None,
        reads: ReadMemo | None = None,
        settings: AgentSettings = DEFAULT_SETTINGS,
        memos: RuleMemos | None = None,
    ) -> None:
        super().__init__(
            scenario,
            party_id,
            seed,
            public,
            reads,
            settings.behaviour,
            settings.disclosure,
            memos=memos,
        )
        self.model = model
        self.seed = seed
        self.settings = settings
        self.system = party_system(
            self.public, self.party, settings.party_style, settings.culture_statement
        )

    def adopt(self, point: Point) -> None:
        super().adopt(point)
        self.party = placed(self.party, point)
        self.system = party_system(
            self.public, self.party, self.settings.party_style, self.settings.culture_statement
        )

    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        action = self.decide(dialogue, ctx)
        x = texts(self.public.language)
        move = "\n".join(
            [f"- signal: {action.signal.value}", f"- tone: {action.tone}"]
            + [
                f"- {t}: back {s.option}; would accept {', '.join(s.acceptable)}"
                for t, s in action.stances.items()
            ]
            + [f"- template wording: {action.utterance}"]
        )
        user = "\n\n".join(
            [
                dialogue_block(self.public, dialogue, self.settings.window()),
                f"{x['move']}:\n{move}",
                x["phrase"].format(name=self.party.name),
            ]
        )
        request = ChatRequest(
            (Message("system", self.system), Message("user", user)),
            temperature=self.settings.parties_temperature,
            max_tokens=200,
            schema=UTTERANCE_SCHEMA,
            schema_name="utterance",
            **turn_sampling(self.seed, ctx.party_turn)._asdict(),
        )
        reply, responses = await ask_structured(self.model, request, UtteranceReply.model_validate)
        self.report_usage(usage_of(responses))
        return Action(
            reply.utterance.strip(), action.stances, action.signal, action.thought, action.tone
        )

    async def articulate(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, thought: Thought
    ) -> Action:
        """The rule policy moves and thinks; the model phrases the move."""
        action = await self.act(dialogue, ctx)
        action.thought = f"{thought.text} ({action.thought})"
        return action
