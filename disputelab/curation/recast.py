"""Recast a seed into a Scenario with an LLM (SoCRATES step 2, with the weights of §2.4).

The model fills a flat draft that is easy to write: topics with options in order (lettered
A, B, ... here, not by the model), and per party one stance per topic that carries its
ranking, its unacceptable options and a weight. Code then assigns ids, turns the weights
into integers summing to 100 and maps plain-word levels to numbers. A draft that does not
make a valid Scenario goes back to the model with every problem listed, a bounded number
of times.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from disputelab.curation.sources import DOMAINS, Seed, slug
from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse, Message, ModelError
from disputelab.llm.structured import ask_structured
from disputelab.scenario.io import describe_validation_error
from disputelab.scenario.schema import STRATEGIES, Scenario

LETTERS = "ABCD"
# Plain-word levels the model picks from, and the numbers the rule policy needs. A
# fallback is what walking away is worth on the 0-1 utility scale of a package.
FALLBACK_UTILITY = {"weak": 0.25, "moderate": 0.4, "strong": 0.55}
REACTIVITY = {"composed": 0.2, "sensitive": 0.5, "reactive": 0.8}


class DraftStance(BaseModel):
    model_config = ConfigDict(extra="ignore")
    topic: str = Field(min_length=1)
    ranking: list[str]
    unacceptable: list[str] = Field(default_factory=list)
    weight: int = Field(ge=1, le=100)


class DraftParty(BaseModel):
    model_config = ConfigDict(extra="ignore")
    name: str = Field(min_length=1)
    role: str = ""
    objective: str = Field(min_length=1)
    fallback: str = ""
    fallback_strength: Literal["weak", "moderate", "strong"] = "moderate"
    strategy: Literal["competing", "collaborating", "compromising", "avoiding", "accommodating"] = (
        "compromising"
    )
    reactivity: Literal["composed", "sensitive", "reactive"] = "sensitive"
    traits: list[str] = Field(default_factory=list)
    private_notes: str = ""
    stances: list[DraftStance]


class DraftTopic(BaseModel):
    model_config = ConfigDict(extra="ignore")
    code: str = Field(min_length=1)
    name: str = Field(min_length=1)
    description: str = ""
    options: list[str] = Field(min_length=2, max_length=len(LETTERS))


class Draft(BaseModel):
    """What the recasting model returns."""

    model_config = ConfigDict(extra="ignore")
    title: str = Field(min_length=1)
    domain: str = ""
    background: str = Field(min_length=1)
    history: str = ""
    topics: list[DraftTopic] = Field(min_length=2, max_length=4)
    parties: list[DraftParty] = Field(min_length=2, max_length=4)


def draft_schema() -> dict[str, Any]:
    """The JSON schema sent with the request; enums keep grammar-constrained models honest."""
    text = {"type": "string"}
    letters = {"type": "array", "items": {"type": "string", "enum": list(LETTERS)}}

    def obj(props: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": props,
            "required": list(props),
            "additionalProperties": False,
        }

    stance = obj(
        {
            "topic": text,
            "ranking": letters,
            "unacceptable": letters,
            "weight": {"type": "integer", "minimum": 1, "maximum": 100},
        }
    )
    party = obj(
        {
            "name": text,
            "role": text,
            "objective": text,
            "fallback": text,
            "fallback_strength": {"type": "string", "enum": list(FALLBACK_UTILITY)},
            "strategy": {"type": "string", "enum": list(STRATEGIES)},
            "reactivity": {"type": "string", "enum": list(REACTIVITY)},
            "traits": {"type": "array", "items": text, "maxItems": 3},
            "private_notes": text,
            "stances": {"type": "array", "items": stance, "minItems": 2, "maxItems": 4},
        }
    )
    topic = obj(
        {
            "code": text,
            "name": text,
            "description": text,
            "options": {"type": "array", "items": text, "minItems": 2, "maxItems": len(LETTERS)},
        }
    )
    return obj(
        {
            "title": text,
            "domain": {"type": "string", "enum": list(DOMAINS)},
            "background": text,
            "history": text,
            "topics": {"type": "array", "items": topic, "minItems": 2, "maxItems": 4},
            "parties": {"type": "array", "items": party, "minItems": 2, "maxItems": 4},
        }
    )


SYSTEM = """\
You are a scenario writer for research on mediation. You turn an account of a real \
dispute into a fictional negotiation exercise that a mediator can be tested on.

Rules:
1. Invent names for every person, organisation and place, and change every money figure \
and date to a plausible invented one. Nothing in the exercise may identify the real case.
2. Keep the heart of the dispute: who is at odds, over what, and why it matters to them.
3. Choose two to four topics. Give each its own short code in capitals, made from its name, and \
two to four concrete options, written as specific terms with numbers where they help. \
Options are lettered A, B, C, D in the order you list them.
4. Make at least one topic emotionally charged: an apology, blame, recognition, safety \
or someone's reputation.
5. Make the parties want different things: their first choices should differ on most \
topics, so the dispute is hard to settle on its own. Still leave at least one package of \
options that every party could live with, so a good mediator could settle it.
6. For each party, give one stance per topic. "ranking" lists the options the party \
could accept, best first; "unacceptable" lists the rest. Every option of the topic must \
appear in exactly one of the two lists. "weight" says how much the topic matters to the \
party; the weights of one party must not all be equal.
7. "fallback" is what the party does if the talks fail; "fallback_strength" says how \
good that is for them. "private_notes" is something only that party knows.
8. "background" tells the public facts in the third person; "history" tells how the \
relationship went wrong. Write in plain English."""


def seed_prompt(seed: Seed) -> str:
    """The user message: the seed report and, if known, the domain to use."""
    domain = (
        f'Use the domain "{seed.domain}".'
        if seed.domain
        else f"Pick the domain that fits best from: {', '.join(DOMAINS)}."
    )
    return (
        f"Recast this dispute as a negotiation exercise. {domain}\n\n"
        f"Title of the account: {seed.title}\n\nAccount:\n{seed.text}"
    )


class DraftProblems(ValueError):
    """A draft that does not make a valid Scenario; one line per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


def integer_weights(raw: list[int]) -> list[int]:
    """Scale positive weights to integers of at least 1 that sum to exactly 100."""
    total = sum(raw)
    exact = [100 * w / total for w in raw]
    out = [max(1, int(x)) for x in exact]
    # Largest remainder first, then take any excess back from the largest weights.
    by_remainder = sorted(range(len(raw)), key=lambda i: out[i] - exact[i])
    i = 0
    while sum(out) < 100:
        out[by_remainder[i % len(out)]] += 1
        i += 1
    while sum(out) > 100:
        out[max(range(len(out)), key=lambda j: out[j])] -= 1
    return out


def to_scenario(draft: Draft, seed: Seed) -> Scenario:
    """Build the Scenario a draft describes, or raise DraftProblems listing every fault."""
    problems: list[str] = []
    codes = _topic_codes(draft.topics, problems)
    party_ids: list[str] = []
    parties: list[dict[str, Any]] = []
    for i, p in enumerate(draft.parties):
        pid = _party_id(p.name, i, party_ids)
        party_ids.append(pid)
        prefs, weights = _stances(i, p, codes, problems)
        parties.append(_party(pid, p, prefs, weights))
    if problems:
        raise DraftProblems(problems)
    data = {
        "id": seed.id,
        "title": draft.title,
        "domain": seed.domain or draft.domain or "general",
        "language": "en",
        "background": draft.background,
        "history": draft.history,
        "parties": parties,
        "topics": [_topic(t) for t in draft.topics],
    }
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise DraftProblems(describe_validation_error(exc)) from None


def _topic_codes(topics: list[DraftTopic], problems: list[str]) -> dict[str, int]:
    """Each usable topic code, mended (`_code`), with the index of its topic; a code that
    is empty once mended, or taken, goes to `problems` instead."""
    codes: dict[str, int] = {}
    for i, t in enumerate(topics):
        code = _code(t.code)
        if not code:
            problems.append(f"topics[{i}].code: {t.code!r} has no letters or digits")
        elif code in codes:
            problems.append(f"topics[{i}].code: {t.code!r} is used by two topics")
        else:
            codes[code] = i
    return codes


def _party_id(name: str, i: int, taken: list[str]) -> str:
    """The id of party `i`: its name's slug (`party-N` for a name with none), suffixed with
    `-N` until no earlier party has it."""
    pid = slug(name) or f"party-{i + 1}"
    while pid in taken:
        pid += f"-{i + 1}"
    return pid


def _stances(
    i: int, p: DraftParty, codes: dict[str, int], problems: list[str]
) -> tuple[dict[str, dict[str, list[str]]], dict[str, int]]:
    """Party `i`'s preferences and integer weights by topic code, read from its stances;
    every fault (an unknown or repeated topic, a topic with no stance, weights that are
    all equal) goes to `problems`."""
    prefs: dict[str, dict[str, list[str]]] = {}
    raw_weights: dict[str, int] = {}
    for j, st in enumerate(p.stances):
        code = _code(st.topic)
        where = f"parties[{i}].stances[{j}].topic"
        if code not in codes:
            known = ", ".join(codes) or "none"
            problems.append(f"{where}: {st.topic!r} is not a topic code; codes are {known}")
        elif code in prefs:
            problems.append(f"{where}: a second stance on {code}; give one per topic")
        else:
            prefs[code] = {
                "ranking": [o.strip().upper() for o in st.ranking],
                "unacceptable": [o.strip().upper() for o in st.unacceptable],
            }
            raw_weights[code] = st.weight
    missing = [c for c in codes if c not in prefs]
    if missing:
        problems.append(f"parties[{i}].stances: no stance on {', '.join(missing)}")
    if len(raw_weights) > 1 and len(set(raw_weights.values())) == 1:
        problems.append(
            f"parties[{i}].stances: every weight is {next(iter(raw_weights.values()))}; "
            "give the topics a clear order of importance"
        )
    if not raw_weights:  # no stance at all: the problem above says so; nothing to scale
        return prefs, {}
    weights = dict(zip(raw_weights, integer_weights(list(raw_weights.values())), strict=True))
    return prefs, weights


def _topic(t: DraftTopic) -> dict[str, Any]:
    """A draft topic as Scenario data: its mended code, and options lettered A, B, ... by
    us (a label's own letter prefix is dropped, unless nothing else is left)."""
    return {
        "id": _code(t.code),
        "name": t.name,
        "description": t.description,
        "options": [
            {"id": LETTERS[k], "label": _LETTER_PREFIX.sub("", o).strip() or o}
            for k, o in enumerate(t.options)
        ],
    }


# Models often letter the options themselves ("(A) Full refund"); the letters are ours.
_LETTER_PREFIX = re.compile(r"^\s*\(?[A-D][).:]\s+")


def _code(raw: str) -> str:
    return slug(raw).upper()


def _party(
    pid: str, p: DraftParty, prefs: dict[str, dict[str, list[str]]], weights: dict[str, int]
) -> dict[str, Any]:
    return {
        "id": pid,
        "name": p.name,
        "role": p.role,
        "objective": p.objective,
        "fallback": {
            "description": p.fallback,
            "utility": FALLBACK_UTILITY[p.fallback_strength],
        },
        "preferences": prefs,
        "weights": weights,
        "persona": {
            "strategy": p.strategy,
            "reactivity": REACTIVITY[p.reactivity],
            "traits": p.traits[:3],
        },
        "private_notes": p.private_notes,
    }


class RecastFailed(Exception):
    """The model gave no usable scenario; `stage` is recast (no parsable draft) or validate."""

    def __init__(self, stage: Literal["recast", "validate"], reason: str) -> None:
        self.stage = stage
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True)
class RecastSettings:
    """How hard to try: tokens per reply, re-asks for unparsable and for invalid drafts."""

    max_tokens: int = 4096
    temperature: float = 0.0
    parse_reasks: int = 2
    validation_reasks: int = 2


async def recast(
    seed: Seed, model: ChatModel, settings: RecastSettings = RecastSettings()
) -> tuple[Scenario, list[ChatResponse]]:
    """Ask the model for a draft until it makes a valid Scenario, within the re-ask bounds."""
    messages: tuple[Message, ...] = (Message("system", SYSTEM), Message("user", seed_prompt(seed)))
    schema = draft_schema()
    responses: list[ChatResponse] = []
    problems: list[str] = []
    for _ in range(settings.validation_reasks + 1):
        request = ChatRequest(
            messages,
            temperature=settings.temperature,
            max_tokens=settings.max_tokens,
            schema=schema,
            schema_name="scenario_draft",
        )
        try:
            draft, got = await ask_structured(
                model, request, Draft.model_validate, settings.parse_reasks
            )
        except ModelError as exc:
            raise RecastFailed("recast", _one_line(str(exc))) from None
        responses += got
        try:
            return to_scenario(draft, seed), responses
        except DraftProblems as exc:
            problems = exc.problems
        messages = (
            *messages,
            Message("assistant", json.dumps(draft.model_dump(), ensure_ascii=False)),
            Message("user", feedback(problems)),
        )
    raise RecastFailed(
        "validate",
        _one_line(
            f"draft still invalid after {settings.validation_reasks + 1} drafts: "
            + "; ".join(problems[:5])
        ),
    )


def feedback(problems: list[str]) -> str:
    """The follow-up message that lists what was wrong with a draft."""
    listed = "\n".join(f"- {p}" for p in problems[:12])
    return (
        "That draft cannot be used yet. Fix these problems and send the whole draft "
        f"again:\n{listed}\nKeep everything else as it was."
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())
