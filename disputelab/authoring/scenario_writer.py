"""LLM scenario writers for the two conditions that need new content: `parties:+1` and
`history:x5` (SoCRATES's Scenario Writer, SoCRATES paper).

The writer is the experimenter's tool, not a party, so it may read the whole scenario.
It lives in the agents layer because disputelab/scenario/ must not import the model
layer; `apply_condition_with_model` falls back to the rule transforms for everything else.
Calls run at temperature 0 with a fixed sample and seed, so a cached model replays them.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from disputelab.agents.base import PublicScenario
from disputelab.agents.prompts import topics_block
from disputelab.llm.base import ChatModel, ChatRequest, Message, ModelReplyError
from disputelab.llm.structured import ask_structured
from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR, Behaviour
from disputelab.scenario.conditions import (
    ConditionError,
    apply_condition,
    parse_cause,
    written_problem,
)
from disputelab.scenario.schema import (
    STRATEGIES,
    Fallback,
    Party,
    Persona,
    Scenario,
    Strategy,
    TopicPreference,
)

SAMPLE = 0
SEED = 0
PARTY_REASKS = 2
HISTORY_REASKS = 1  # a history reply is long: one re-ask is worth it, more rarely is
MIN_HISTORY_RATIO = 3  # the new history is at least this many times the old one
MAX_HISTORY_TOKENS = 8192


class TopicReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    ranking: list[str] = Field(default_factory=list)
    unacceptable: list[str] = Field(default_factory=list)
    weight: float = Field(ge=0)


class FallbackReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    description: str = ""
    utility: float = Field(ge=0.0, lt=1.0)


class PartyReply(BaseModel):
    """The new party as the model describes it; `to_party` turns it into a `Party`."""

    model_config = ConfigDict(extra="ignore")
    name: str = Field(min_length=1)
    role: str = ""
    relation: str = ""
    objective: str = Field(min_length=1)
    fallback: FallbackReply
    strategy: Strategy
    reactivity: float = Field(ge=0.0, le=1.0)
    traits: list[str] = Field(default_factory=list)
    topics: dict[str, TopicReply]


class EntryReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    date: str
    text: str


class HistoryReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    entries: list[EntryReply] = Field(min_length=1)


def _zh(s: Scenario) -> bool:
    return s.language.startswith("zh")


def _topics_text(s: Scenario) -> str:
    return topics_block(PublicScenario.of(s))


def _context(s: Scenario) -> str:
    zh = _zh(s)
    parts = [
        ("纠纷：" if zh else "Dispute: ") + s.title,
        ("背景：" if zh else "Background:"),
        s.background,
    ]
    if s.history:
        parts += ["历史：" if zh else "History so far:", s.history]
    parts += ["议题及选项（编号与名称）：" if zh else "Topics and their options (id and label):"]
    parts.append(_topics_text(s))
    return "\n".join(parts)


def _parties_text(s: Scenario) -> str:
    # Roles, objectives and first choices are enough to make the newcomer distinct; the
    # parties' private notes are not needed for that, so they stay out of the prompt.
    lines = []
    for p in s.parties:
        firsts = ", ".join(f"{t.id}={p.preferences[t.id].ranking[0]}" for t in s.topics)
        lines.append(f"- {p.name} ({p.role or '-'}): {p.objective} [{firsts}]")
    return "\n".join(lines)


_PARTY_EN = (
    "Parties already at the table, with their first choice per topic:\n{parties}\n\n"
    "Add exactly one more party with a real stake in the outcome. Make it structurally "
    "distinct from the parties above: a different role and relation to the dispute, and "
    "priorities of its own, so that it sides with each existing party on some topics and "
    "parts from it on others. Give its name, role, relation (how it is tied to the others "
    "and why it cares), objective, fallback (what it will do if the talks fail, and how good "
    "that is for it as a utility from 0 up to but not including 1), strategy (one of "
    "{strategies}), reactivity (0 calm to 1 volatile), at most four traits, and for every "
    "topic: the option ids it accepts, best first (ranking), the option ids it refuses "
    "(unacceptable), and an integer weight for how much that topic matters to it, the "
    "weights adding up to 100. Use only the option ids listed above; each option goes in "
    "exactly one of the two lists, and at least one option per topic must be acceptable."
)
_PARTY_ZH = (
    "已在谈判桌上的各方，以及他们在各议题上的首选：\n{parties}\n\n"
    "请再加入恰好一方，它与结果有切实的利害关系，并且在结构上与上述各方不同：角色不同，与纠纷的"
    "关系不同，有自己的优先事项，在某些议题上与某一方立场一致，在另一些议题上则与之分歧。请给出："
    "姓名（name）、角色（role）、与其他各方的关系及其关心此事的原因（relation）、目标（objective）、"
    "退路（fallback：谈判破裂时会怎么做，以及这对它有多好，用0到1之间、不含1的效用值表示）、"
    "策略（strategy，取 {strategies} 之一）、情绪反应强度（reactivity，0平静，1易激动）、"
    "至多四个性格特点（traits），以及每个议题的：可接受的选项编号，按偏好从高到低排列（ranking）；"
    "拒绝的选项编号（unacceptable）；该议题对它有多重要的整数权重（weight），所有权重之和为100。"
    "只能使用上面列出的选项编号；每个选项只能出现在两个列表中的一个，每个议题至少要有一个可接受的选项。"
    "文字内容请用中文。"
)


def party_schema(s: Scenario) -> dict[str, Any]:
    """JSON schema for the new party, each topic's option ids as enums."""
    topic_props = {}
    for t in s.topics:
        ids = {"type": "array", "items": {"type": "string", "enum": t.option_ids()}}
        topic_props[t.id] = {
            "type": "object",
            "properties": {
                "ranking": ids,
                "unacceptable": ids,
                "weight": {"type": "integer", "minimum": 1, "maximum": 100},
            },
            "required": ["ranking", "unacceptable", "weight"],
            "additionalProperties": False,
        }
    text = {"type": "string", "maxLength": 400}
    trait = {"type": "string", "maxLength": 60}
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 80},
            "role": {"type": "string", "maxLength": 120},
            "relation": text,
            "objective": text,
            "fallback": {
                "type": "object",
                "properties": {
                    "description": text,
                    "utility": {"type": "number", "minimum": 0, "maximum": 0.95},
                },
                "required": ["description", "utility"],
                "additionalProperties": False,
            },
            "strategy": {"type": "string", "enum": list(STRATEGIES)},
            "reactivity": {"type": "number", "minimum": 0, "maximum": 1},
            "traits": {"type": "array", "items": trait, "maxItems": 4},
            "topics": {
                "type": "object",
                "properties": topic_props,
                "required": [t.id for t in s.topics],
                "additionalProperties": False,
            },
        },
        "required": [
            "name", "role", "relation", "objective", "fallback",
            "strategy", "reactivity", "traits", "topics",
        ],
        "additionalProperties": False,
    }  # fmt: skip


def normalise_weights(raw: dict[str, float], total: int = 100) -> dict[str, int]:
    """Positive integers summing to `total`, proportional to `raw` (largest remainder)."""
    mass = sum(raw.values())
    if mass <= 0:
        raise ValueError("every topic weight is 0; give each topic a positive weight")
    exact = {k: v * total / mass for k, v in raw.items()}
    out = {k: max(1, math.floor(x)) for k, x in exact.items()}
    by_remainder = sorted(raw, key=lambda k: exact[k] - math.floor(exact[k]), reverse=True)
    for k in by_remainder[: max(0, total - sum(out.values()))]:
        out[k] += 1
    # Lifting near-zero weights to 1 can overshoot; take the excess from the heaviest.
    while sum(out.values()) > total:
        heaviest = max(out, key=lambda k: out[k])
        out[heaviest] -= 1
    return out


def _preference(reply: TopicReply, topic_id: str, ids: list[str]) -> TopicPreference:
    for field in ("ranking", "unacceptable"):
        unknown = [o for o in getattr(reply, field) if o not in ids]
        if unknown:
            raise ValueError(
                f"topics.{topic_id}.{field} names unknown option {', '.join(map(repr, unknown))};"
                f" options are {', '.join(ids)}"
            )
    ranking = list(dict.fromkeys(reply.ranking))
    # An option in both lists counts as acceptable: the model ranked it on purpose.
    refused = [o for o in dict.fromkeys(reply.unacceptable) if o not in ranking]
    # An option the model left out is one it did not refuse: acceptable, but ranked last.
    ranking += [o for o in ids if o not in ranking and o not in refused]
    if not ranking:
        raise ValueError(f"topics.{topic_id}: every option is unacceptable; accept at least one")
    return TopicPreference(ranking=ranking, unacceptable=refused)


def _new_id(reply: PartyReply, taken: set[str], n: int) -> str:
    for source in (reply.name, reply.role):
        slug = re.sub(r"[^a-z0-9]+", "-", source.lower()).strip("-")[:40].strip("-")
        if slug:
            break
    else:
        slug = f"party-{n + 1}"
    out, k = slug, 2
    while out in taken:
        out, k = f"{slug}-{k}", k + 1
    return out


def to_party(reply: PartyReply, s: Scenario) -> Party:
    """Turn the model's party into a `Party`; ValueError names the first problem."""
    missing = [t.id for t in s.topics if t.id not in reply.topics]
    if missing:
        raise ValueError(f"topics.{', '.join(missing)} missing; cover every topic")
    name = reply.name.strip()
    if name.casefold() in {p.name.casefold() for p in s.parties}:
        raise ValueError(f"name {name!r} is already taken; the new party needs its own name")
    prefs = {t.id: _preference(reply.topics[t.id], t.id, t.option_ids()) for t in s.topics}
    for p in s.parties:
        if all(p.preferences[t] == prefs[t] for t in prefs):
            raise ValueError(
                f"its rankings copy {p.name}'s on every topic; give it priorities of its own"
            )
    weights = normalise_weights({t.id: reply.topics[t.id].weight for t in s.topics})
    traits = [x.strip() for x in reply.traits if x.strip()][:4]
    return Party(
        id=_new_id(reply, {p.id for p in s.parties}, len(s.parties)),
        name=name,
        role=reply.role.strip(),
        objective=reply.objective.strip(),
        fallback=Fallback(
            description=reply.fallback.description.strip(), utility=reply.fallback.utility
        ),
        preferences=prefs,
        weights=weights,
        persona=Persona(strategy=reply.strategy, reactivity=reply.reactivity, traits=traits),
        private_notes=reply.relation.strip(),
    )


def _one_line(condition: str, exc: ModelReplyError) -> ModelReplyError:
    return ModelReplyError(f"{condition}: " + " ".join(str(exc).split()))


async def write_extra_party(scenario: Scenario, model: ChatModel) -> Scenario:
    """A copy of `scenario` with one model-written, structurally distinct party appended."""
    zh = _zh(scenario)
    system = (
        "你为调解实验编写纠纷情景。你要为一个已有的纠纷补充一方当事人。"
        if zh
        else "You write dispute scenarios for mediation experiments. You are adding one "
        "party to an existing dispute."
    )
    ask = (_PARTY_ZH if zh else _PARTY_EN).format(
        parties=_parties_text(scenario), strategies=", ".join(STRATEGIES)
    )
    request = ChatRequest(
        (Message("system", system), Message("user", f"{_context(scenario)}\n\n{ask}")),
        temperature=0.0,
        max_tokens=1200,
        schema=party_schema(scenario),
        schema_name="extra_party",
        sample=SAMPLE,
        seed=SEED,
    )

    def parse(data: Any) -> Scenario:
        out = scenario.model_copy(deep=True)
        out.parties.append(to_party(PartyReply.model_validate(data), scenario))
        return Scenario.model_validate(out.model_dump())

    try:
        result, _ = await ask_structured(model, request, parse, reasks=PARTY_REASKS)
    except ModelReplyError as exc:
        raise _one_line("parties:+1", exc) from None
    return result


_HISTORY_EN = (
    "Write the earlier history of this dispute as dated entries, oldest first, leading up to "
    "the situation described above. Keep every fact, name, place and amount already given, "
    "and contradict none of them. Tell how the relationship developed, what each side did and "
    "said, and which earlier attempts to settle failed and why. Write at least four entries, "
    "together about {size} words, in English. Each entry has a date (such as 'March 2021' or "
    "'two years before the talks') and a paragraph of text."
)
_HISTORY_ZH = (
    "请把这场纠纷更早的经过写成带日期的条目，按时间先后排列，一直写到上文描述的现状为止。"
    "保留上文已有的全部事实、人名、地点和金额，不得与之矛盾。写出双方关系如何演变、各方做过什么"
    "说过什么，以及此前哪些解决尝试失败了、为什么失败。至少写四条，合计约{size}字，用中文。"
    "每条包括日期（例如“2021年3月”或“谈判前两年”）和一段文字。"
)


def history_schema() -> dict[str, Any]:
    """JSON schema for dated history entries."""
    entry = {
        "type": "object",
        "properties": {"date": {"type": "string", "maxLength": 60}, "text": {"type": "string"}},
        "required": ["date", "text"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"entries": {"type": "array", "items": entry, "minItems": 4, "maxItems": 12}},
        "required": ["entries"],
        "additionalProperties": False,
    }


async def write_history(scenario: Scenario, model: ChatModel, factor: int = 5) -> Scenario:
    """A copy of `scenario` whose history is model-written dated entries, about `factor`
    times the current history and background, ahead of the original history."""
    if factor < 2:
        raise ValueError(f"history factor {factor}: use 2 or more")
    zh = _zh(scenario)
    context = len(scenario.history) + len(scenario.background)
    target = (factor - 1) * context  # the entries plus what is there make ~factor x
    needed = max(MIN_HISTORY_RATIO * len(scenario.history), len(scenario.history) + target // 2)
    size = target if zh else max(50, round(target / 6, -1))
    system = (
        "你为调解实验编写纠纷情景。你要为一个已有的纠纷补写更早的经过。"
        if zh
        else "You write dispute scenarios for mediation experiments. You are writing the "
        "earlier history of an existing dispute."
    )
    ask = (_HISTORY_ZH if zh else _HISTORY_EN).format(size=int(size))
    tokens_per_char = 1.0 if zh else 0.34
    request = ChatRequest(
        (Message("system", system), Message("user", f"{_context(scenario)}\n\n{ask}")),
        temperature=0.0,
        max_tokens=min(MAX_HISTORY_TOKENS, int(target * tokens_per_char) + 600),
        schema=history_schema(),
        schema_name="history",
        sample=SAMPLE,
        seed=SEED,
    )

    def parse(data: Any) -> str:
        entries = HistoryReply.model_validate(data).entries
        lines = []
        for i, e in enumerate(entries):
            if not e.date.strip() or not e.text.strip():
                raise ValueError(f"entries[{i}] needs both a date and text")
            lines.append(f"{e.date.strip()}: {' '.join(e.text.split())}")
        if zh and not re.search(r"[\u4e00-\u9fff]", "".join(lines)):
            raise ValueError("the entries are not in Chinese; write them in Chinese")
        text = "\n".join([*lines, scenario.history]).strip()
        if len(text) < needed:
            raise ValueError(
                f"the history is {len(text)} characters, it needs at least {needed}; "
                "write longer, more detailed entries"
            )
        return text

    try:
        history, _ = await ask_structured(model, request, parse, reasks=HISTORY_REASKS)
    except ModelReplyError as exc:
        raise _one_line("history:x5", exc) from None
    out = scenario.model_copy(deep=True)
    out.history = history
    return out


# The conditions a model writes; every other condition is the rule transform.
WRITTEN_CONDITIONS = frozenset({"parties", "history", "cause"})


def needs_writer(spec: str) -> bool:
    """Whether any part of a composed condition spec is one a model writes."""
    return any(part.split(":")[0].strip() in WRITTEN_CONDITIONS for part in spec.split(","))


async def apply_condition_with_model(
    scenario: Scenario, spec: str, model: ChatModel | None, behaviour: Behaviour = DEFAULT_BEHAVIOUR
) -> Scenario:
    """`apply_condition`, with `parties:+1`, `history:x5` and `cause:` written by `model`
    if given (for `cause:` the model rewrites the brief on top of the persona shift)."""
    # The rule pass validates every name and argument before any model call, with the
    # very same errors; without a model it is the answer.
    ruled = apply_condition(scenario, spec, behaviour)
    if model is None:
        return ruled
    problem = written_problem(spec)
    if problem:
        raise ConditionError(problem)
    parts = [p.strip() for p in spec.split(",") if p.strip()] or ["general"]
    out = scenario
    for part in parts:
        name, _, arg = part.partition(":")
        if name == "parties":
            out = await write_extra_party(out, model)
        elif name == "history":
            out = await write_history(out, model, int(arg.removeprefix("x")))
        elif name == "cause":
            from disputelab.authoring.cause_writer import write_cause

            # The persona shift applies either way, so rule and LLM agents meet the same
            # cause; the model adds the rewritten brief that LLM agents read.
            found = parse_cause(arg)
            out = apply_condition(out, part, behaviour)
            if found.intensity > 0:
                out, _sub = await write_cause(
                    out, found.key, found.intensity, model, two_step=found.two_step
                )
        else:
            out = apply_condition(out, part, behaviour)
    return out
