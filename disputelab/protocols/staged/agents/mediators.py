"""Mediators for the staged protocol: they open, propose, guide and close.

Both read the public scenario only. For a legal case that includes the dispute type, the
brief and the established facts (what the mediator's fact-finding would turn up), but
never the case's gold points of contention or legal bases. Retrieved legal bases, when
the expertise condition grants them, are handed over *before* the mediator proposes, so
they can shape the proposal. AgentMediation's released code instead added them to the
output afterwards, which measures the retriever rather than the mediator; the setting
`expertise_use: append` does that, for a comparison with its Table 7 (`append_bases`).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext, UsageReporter
from disputelab.agents.parties.llm import usage_of
from disputelab.agents.prompts import dialogue_block, mediator_system
from disputelab.agents.settings import RECENT_TURNS
from disputelab.episode import Intervention, Stance
from disputelab.legal.citations import normalize_legal_basis
from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse, Message
from disputelab.llm.seeds import turn_sampling
from disputelab.llm.structured import ask_structured

# A statute named in a text: 《Law》, optionally followed closely by 第N条.
_CITATION = re.compile(
    r"《[^《》]{2,60}》(?:[^《》。；，]{0,16}?第[一二三四五六七八九十百千零〇两\d]+条)?"
)

_EN = {
    "open": "I am the mediator for this case. Each of you will first state your position; "
    "then I will put a proposal on the table and we will work on it together.",
    "points": "The main points of contention are: {core}, and how {topics} should be settled.",
    "propose": "Having heard everyone, here is my proposal: {summary}.",
    "final": "We are out of time. My final proposal: {summary}. Please tell me whether you "
    "accept it.",
    "guide": "Let us look at where we stand. The package with the most support is: {summary}.",
    "bases": "It rests on: {bases}.",
}
_ZH = {
    "open": "我是本案的调解员。请各方先陈述自己的诉求，之后我会提出一个方案，大家一起商量。",
    "points": "本案的主要争议焦点为{core}，以及{topics}如何确定。",
    "propose": "听取各方意见后，我的调解方案是：{summary}。",
    "final": "调解时间已到。我的最终方案是：{summary}。请各方表明是否接受。",
    "guide": "我们看看现在的情况。目前支持最多的方案是：{summary}。",
    "bases": "依据为：{bases}。",
}


def cited_statutes(texts: Sequence[str]) -> list[str]:
    """Statutes named in the given texts, in order of first mention, without repeats."""
    seen: dict[str, None] = {}
    for text in texts:
        for m in _CITATION.finditer(text):
            seen.setdefault(m.group(0), None)
    return list(seen)


def append_bases(move: Intervention, appended: Sequence[str]) -> Intervention:
    """`move` with the `appended` bases it did not cite already (compared in canonical
    form) added after its own, and a note in its thought naming them: the mediator never
    saw them, so its words do not mention them."""
    own = {normalize_legal_basis(b) for b in move.bases}
    extra = [b for b in dict.fromkeys(appended) if normalize_legal_basis(b) not in own]
    if not extra:
        return move
    note = f"{move.thought}; appended afterwards, not cited by the mediator: {', '.join(extra)}"
    return dataclasses.replace(move, thought=note.lstrip("; "), bases=(*move.bases, *extra))


def midpoint_package(public: PublicScenario, dialogue: Sequence[PublicTurn]) -> dict[str, str]:
    """Per topic, an option every party said it would accept if there is one; otherwise
    the option nearest the middle of what the parties back, which on a settlement ladder
    is the split-the-difference rung (more acceptances break ties)."""
    latest: dict[str, Mapping[str, Stance]] = {}
    for turn in dialogue:
        if turn.role == "party" and turn.stances:
            latest[turn.speaker] = turn.stances
    out: dict[str, str] = {}
    for topic in public.topics:
        ids = topic.option_ids()
        backed = [ids.index(o) for o in _backed(latest, topic.id) if o in ids]
        centre = sum(backed) / len(backed) if backed else (len(ids) - 1) / 2
        accepts = [
            sum(1 for s in latest.values() if topic.id in s and o in s[topic.id].acceptable)
            for o in ids
        ]
        best = max(
            range(len(ids)),
            key=lambda i: (
                bool(latest) and accepts[i] == len(latest),
                -abs(i - centre),
                accepts[i],
            ),
        )
        out[topic.id] = ids[best]
    return out


def _backed(latest: Mapping[str, Mapping[str, Stance]], topic_id: str) -> list[str]:
    """The option each party backs on `topic_id`, where it said one."""
    return [o for s in latest.values() if topic_id in s and (o := s[topic_id].option) is not None]


def _summary(public: PublicScenario, package: Mapping[str, str], zh: bool) -> str:
    sep = "；" if zh else "; "
    return sep.join(f"{t.name}: {t.option(package[t.id]).label}" for t in public.topics)


class RuleStagedMediator(UsageReporter):
    """Proposes the split-the-difference package and cites what it knows.

    Without expertise it cites only the statutes named in the brief and facts; with it,
    those plus every retrieved basis. Its points of contention restate the brief's first
    sentence and the topics at issue.
    """

    name = "rule"

    def __init__(
        self,
        public: PublicScenario,
        retrieved: Sequence[str] = (),
        appended: Sequence[str] = (),
        cite_share: float = 1.0,
    ) -> None:
        self.public = public
        # Behaviour parameter legal.cite_retrieved: how many retrieved bases it cites.
        retrieved = tuple(retrieved)[: round(min(1.0, max(0.0, cite_share)) * len(retrieved))]
        self.appended = tuple(appended)  # added to each proposal's bases afterwards
        self.zh = public.language.startswith("zh")
        self.t = _ZH if self.zh else _EN
        case = public.case
        texts = [public.background] + ([f.content for f in case.facts] if case else [])
        self.bases = tuple(dict.fromkeys([*cited_statutes(texts), *retrieved]))

    def _points(self) -> str:
        brief = self.public.case.brief if self.public.case else self.public.background
        core = re.split(r"[。！？]|[.!?](?:\s|$)", brief.strip(), maxsplit=1)[0]
        if len(core) > 120:  # keep whole words: cut at the last space before the limit
            core = core[:120].rsplit(" ", 1)[0] if " " in core[:120] else core[:120]
        sep = "、" if self.zh else ", "
        topics = sep.join(t.name for t in self.public.topics)
        return self.t["points"].format(core=core, topics=topics)

    async def open(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Intervention:
        return Intervention(self.t["open"])

    async def propose(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, final: bool
    ) -> Intervention:
        package = midpoint_package(self.public, dialogue)
        summary = _summary(self.public, package, self.zh)
        words = [self.t["final" if final else "propose"].format(summary=summary)]
        if self.bases:
            words.append(self.t["bases"].format(bases="、".join(self.bases)))
        move = Intervention(
            ("" if self.zh else " ").join(words),
            package,
            "final proposal" if final else "initial proposal",
            self._points(),
            self.bases,
        )
        return append_bases(move, self.appended)

    async def guide(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Intervention:
        package = midpoint_package(self.public, dialogue)
        summary = _summary(self.public, package, self.zh)
        return Intervention(self.t["guide"].format(summary=summary), package, "round guidance")


# ---- LLM mediator ----------------------------------------------------------------------
_ASK_EN = {
    "case": "Case file (dispute type, brief, facts established by your inquiries):",
    "retrieved": "Legal provisions retrieved for this case (cite the ones that apply):",
    "open": "Open the mediation: introduce yourself and invite each party to state its "
    "position, in at most three sentences.",
    "propose": "Propose a settlement. Name the points of contention in one sentence, list the "
    "legal bases you rely on (statute and article), pick one option per topic, and explain "
    "the proposal to the parties in at most three sentences.",
    "final": "Time is up. Make your final, balanced and concrete proposal in the same form; "
    "the parties will accept or reject it.",
    "guide": "Lead this bargaining round: respond to what was said, in at most three "
    "sentences, and state the package you now suggest (one option per topic).",
}
_ASK_ZH = {
    "case": "案件材料（纠纷类型、案情简介、经调查核实的事实）：",
    "retrieved": "为本案检索到的法律条文（请引用适用的条文）：",
    "open": "请开始调解：介绍你自己，并请各方依次陈述诉求，不超过三句话。",
    "propose": "请提出调解方案：用一句话概括争议焦点，列出所依据的法律条文（法律名称和条款），"
    "为每个议题选择一个选项，并用不超过三句话向当事人说明。",
    "final": "调解时间已到。请按同样的格式给出最终的、公平而具体的方案，当事人将表示接受或拒绝。",
    "guide": "请主持这一轮协商：回应各方的发言（不超过三句话），"
    "并给出你现在建议的方案（每个议题一个选项）。",
}


def opening_turns(dialogue: Sequence[PublicTurn]) -> int:
    """How many turns run up to and including the mediator's first proposal (the
    statements before it, the case brief before them); 0 when none was made."""
    for i, t in enumerate(dialogue):
        if t.role == "mediator" and t.proposal:
            return i + 1
    return 0


class _Say(BaseModel):
    model_config = ConfigDict(extra="ignore")
    utterance: str = Field(min_length=1)


class _Guide(_Say):
    package: dict[str, str]


class _Proposal(BaseModel):
    model_config = ConfigDict(extra="ignore")
    points: str = Field(min_length=1)
    bases: list[str] = Field(default_factory=list)
    package: dict[str, str]
    utterance: str = Field(min_length=1)


class LLMStagedMediator(UsageReporter):
    """A language model in the mediator's chair, one structured call per move."""

    name = "llm"

    def __init__(
        self,
        public: PublicScenario,
        model: ChatModel,
        seed: int,
        retrieved: Sequence[str] = (),
        temperature: float = 0.0,
        window: int | None = RECENT_TURNS,
        appended: Sequence[str] = (),
    ) -> None:
        self.public = public
        self.model = model
        self.appended = tuple(appended)  # added to each proposal's bases afterwards
        self.seed = seed
        self.temperature = temperature
        self.window = window
        zh = public.language.startswith("zh")
        self.ask = _ASK_ZH if zh else _ASK_EN
        self.limit = 150 if zh else 400  # characters; a Chinese one costs more tokens
        parts = [mediator_system(public)]
        case = public.case
        if case is not None:
            facts = "\n".join(f"- [{f.source}] {f.content}" for f in case.facts)
            parts += [self.ask["case"], case.dispute_type, case.brief, facts]
        if retrieved:
            parts += [self.ask["retrieved"], *(f"- {b}" for b in retrieved)]
        self.system = "\n".join(p for p in parts if p)

    # Built once per mediator: the structured layer memoises by the schema object.
    @functools.cached_property
    def _say_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"utterance": {"type": "string", "maxLength": self.limit}},
            "required": ["utterance"],
            "additionalProperties": False,
        }

    @functools.cached_property
    def _package_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {
                t.id: {"type": "string", "enum": t.option_ids()} for t in self.public.topics
            },
            "required": [t.id for t in self.public.topics],
            "additionalProperties": False,
        }

    def _check(self, package: Mapping[str, str]) -> dict[str, str]:
        out = {}
        for t in self.public.topics:
            choice = package.get(t.id)
            if choice not in t.option_ids():
                raise ValueError(f"package.{t.id} must be one of {t.option_ids()}")
            out[t.id] = choice
        return out

    async def _call(
        self,
        dialogue: Sequence[PublicTurn],
        ctx: TurnContext,
        task: str,
        schema: dict[str, Any],
        parse: Any,
        name: str,
        keep_first: int = 0,
    ) -> Any:
        talk = dialogue_block(self.public, dialogue, self.window, keep_first)
        request = ChatRequest(
            (
                Message("system", self.system),
                Message("user", f"{talk}\n\n{task}"),
            ),
            temperature=self.temperature,
            max_tokens=600,
            schema=schema,
            schema_name=name,
            **turn_sampling(self.seed, ctx.party_turn)._asdict(),
        )
        calls: list[ChatResponse] = []
        try:
            parsed, responses = await ask_structured(self.model, request, parse)
            calls.extend(responses)
        finally:
            self.report_usage(usage_of(calls))
        return parsed

    async def open(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Intervention:
        say: _Say = await self._call(
            dialogue, ctx, self.ask["open"], self._say_schema, _Say.model_validate, "open"
        )
        return Intervention(say.utterance.strip())

    async def propose(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, final: bool
    ) -> Intervention:
        # The package first: a reply cut short while explaining keeps the decision.
        schema = {
            "type": "object",
            "properties": {
                "package": self._package_schema,
                "points": {"type": "string", "maxLength": self.limit},
                "bases": {
                    "type": "array",
                    "items": {"type": "string", "maxLength": 60},
                    "maxItems": 10,
                },
                "utterance": {"type": "string", "maxLength": self.limit},
            },
            "required": ["package", "points", "bases", "utterance"],
            "additionalProperties": False,
        }

        def parse(data: Any) -> Intervention:
            p = _Proposal.model_validate(data)
            return Intervention(
                p.utterance.strip(),
                self._check(p.package),
                "final proposal" if final else "initial proposal",
                p.points.strip(),
                tuple(b.strip() for b in p.bases if b.strip()),
            )

        task = self.ask["final" if final else "propose"]
        # The closing proposal keeps the statements and the first proposal in view, however
        # many bargaining turns the window has let go of since.
        keep = opening_turns(dialogue) if final else 0
        move: Intervention = await self._call(
            dialogue, ctx, task, schema, parse, "final" if final else "proposal", keep
        )
        return append_bases(move, self.appended)

    async def guide(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Intervention:
        schema = {
            "type": "object",
            "properties": {
                "package": self._package_schema,
                "utterance": {"type": "string", "maxLength": self.limit},
            },
            "required": ["package", "utterance"],
            "additionalProperties": False,
        }

        def parse(data: Any) -> Intervention:
            g = _Guide.model_validate(data)
            return Intervention(g.utterance.strip(), self._check(g.package), "round guidance")

        move: Intervention = await self._call(
            dialogue, ctx, self.ask["guide"], schema, parse, "guide"
        )
        return move
