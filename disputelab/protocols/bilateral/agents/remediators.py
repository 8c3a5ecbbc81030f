"""The remediator: it rewrites a violating utterance before the listener hears it.

Every remediator picks its in-context exemplars the same way, by its `method`:
`zero-shot` (none), `random` (k drawn once per episode from the pool: a static set, as
the paper describes), `retrieval` (per violation, the k pool items nearest the current
dialogue by embedding cosine) or `set` (a saved set, such as one chosen by value impact).
Two writers use them: the template remediator (offline) imitates the repair style of a
matching exemplar; the LLM remediator is prompted with the exemplars as text.

Offline mechanism (an assumption, stated): an exemplar teaches the template remediator how
to repair its own violation category only, in its own repair style. Both are the
exemplar's labels or, for one written by people or a model (the remediator paper's own
pool), what its text shows (`labels`). With no exemplar of the category at hand it falls
back to the generic zero-shot softening, which leaves half the offence in.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from disputelab.agents.base import Agent, PublicTurn, TurnContext, UsageReporter
from disputelab.agents.parties.llm import usage_of
from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse, Message
from disputelab.llm.embedding import Embedder
from disputelab.llm.seeds import turn_sampling
from disputelab.llm.structured import ask_structured, model_schema
from disputelab.protocols.bilateral.agents.exemplars import (
    ZERO_SHOT,
    Exemplar,
    RepairStyle,
    render,
    repairs_category,
    style_of,
)
from disputelab.protocols.bilateral.agents.market import Market, last_amount
from disputelab.protocols.bilateral.agents.norms import (
    CATEGORIES,
    WARM_PHRASES,
    Category,
    read_tone,
    strip_phrases,
    violation_phrase,
)
from disputelab.protocols.bilateral.seeding import task_stream
from disputelab.scenario.schema import Scenario

METHODS = ("zero-shot", "random", "retrieval", "set")


class Remediation(NamedTuple):
    text: str
    exemplar_ids: tuple[str, ...]
    how: str  # what produced it, for the transcript and the report


@runtime_checkable
class Remediator(Agent, Protocol):
    name: str
    method: str  # in use: zero-shot, random, retrieval or set
    fixed: str | None  # the kind's own method, or None to follow the parameters
    ready: bool  # prepared already (handed its exemplars directly): keep as it is

    def prepare(
        self,
        method: str,
        pool: Sequence[Exemplar],
        chosen: Sequence[Exemplar],
        k: int,
        semantic: bool,
    ) -> None:
        """Before the episode: the method the protocol's parameters name (a kind with a
        method of its own keeps it), the candidate pool, the saved set, k, and whether
        retrieval embeds semantically."""
        ...

    async def remediate(
        self,
        dialogue: Sequence[PublicTurn],
        text: str,
        category: str | None,
        ctx: TurnContext,
    ) -> Remediation:
        """Rewrite `text`, the last (violating) utterance of `dialogue`."""
        ...


@lru_cache(maxsize=8)
def _pool_vectors(texts: tuple[str, ...], semantic: bool) -> tuple[np.ndarray, str]:
    embedder = Embedder(semantic)
    return embedder.vectors(list(texts)), embedder.kind


def nearest(
    query: str, pool: Sequence[Exemplar], k: int, semantic: bool
) -> tuple[tuple[Exemplar, ...], str]:
    """The `k` pool items most similar to `query` (cosine), and the embedding used."""
    if not pool or k <= 0:
        return (), "none"
    embedder = Embedder(semantic)  # keyed by what it uses: the model may be missing
    vectors, kind = _pool_vectors(tuple(e.query_text() for e in pool), embedder.semantic)
    q = embedder.vectors([query])[0]
    scores = vectors @ q
    order = sorted(range(len(pool)), key=lambda i: (-float(scores[i]), pool[i].id))
    return tuple(pool[i] for i in order[:k]), kind


def dialogue_lines(dialogue: Sequence[PublicTurn], names: dict[str, str]) -> list[str]:
    return [f"{names.get(t.speaker, t.speaker)}: {t.text}" for t in dialogue if t.role == "party"]


class _Chooser(UsageReporter):
    """Exemplar choice shared by both writers."""

    name = "remediator"

    def __init__(self, scenario: Scenario, seed: int, method: str | None) -> None:
        if method is not None and method not in METHODS:
            raise ValueError(f"unknown exemplar method {method!r}; use {', '.join(METHODS)}")
        self.fixed = method  # None: the method comes from the protocol's parameters
        self.method = method or "zero-shot"
        self.seed = seed
        self.task = scenario.id
        self.market = Market.of(scenario)
        self.names = {p.id: p.role or p.id for p in scenario.parties}
        self.pool: tuple[Exemplar, ...] = ()
        self.static: tuple[Exemplar, ...] = ()
        self.k = 8
        self.semantic = True
        self.embedding = "none"
        self.ready = False

    def prepare(
        self,
        method: str,
        pool: Sequence[Exemplar],
        chosen: Sequence[Exemplar],
        k: int,
        semantic: bool,
    ) -> None:
        self.method = self.fixed or method
        self.pool, self.k, self.semantic = tuple(pool), k, semantic
        self.ready = True
        if self.method == "random":
            rng = task_stream("random-icl", self.task, self.seed)
            self.static = tuple(rng.sample(self.pool, min(k, len(self.pool))))
        elif self.method == "set":
            self.static = tuple(chosen)[:k]

    def exemplars_for(self, dialogue: Sequence[PublicTurn], text: str) -> tuple[Exemplar, ...]:
        if self.method != "retrieval":
            return self.static
        lines = dialogue_lines(dialogue, self.names)
        query = "\n".join([*lines[-5:-1], text])
        found, self.embedding = nearest(query, self.pool, self.k, self.semantic)
        return found

    def retrieved_by(self) -> str:
        """Which embedding retrieval used (semantic, or the lexical fallback), if any."""
        return f" (retrieved by {self.embedding})" if self.method == "retrieval" else ""


def template_rewrite(
    text: str,
    category: str | None,
    style: RepairStyle,
    market: Market,
    listener_offer: float | None,
    rng: random.Random,
) -> str:
    """`text` without its offending phrases, repaired in `style`: a softened phrase of
    the category where some offence remains, the style's warm phrases, and the price,
    moved towards the listener's last offer when the style concedes."""
    base = strip_phrases(text)
    price = last_amount(base)
    parts = [WARM_PHRASES[w] for w in style.warmth]
    if category in CATEGORIES and style.residual >= 0.1:
        intensity = "mild" if style.residual >= 0.35 else "curt"
        parts.append(violation_phrase(category, rng, intensity))  # type: ignore[arg-type]
    if price is None:
        parts.append(base or "Let us keep talking.")
    elif style.concession and listener_offer is not None and listener_offer < price:
        moved = market.rounded(price - style.concession * (price - listener_offer))
        parts.append(f"We could meet you at {market.money(moved)}.")
    else:
        parts.append(f"Our price is {market.money(price)}.")
    return " ".join(parts)


def _listener_offer(dialogue: Sequence[PublicTurn], speaker: str) -> float | None:
    for t in reversed(dialogue):
        if t.role == "party" and t.speaker != speaker:
            said = last_amount(t.text)
            if said is not None:
                return said
    return None


class TemplateRemediator(_Chooser):
    """Offline: imitates the repair style of one exemplar of the violation's category."""

    async def remediate(
        self,
        dialogue: Sequence[PublicTurn],
        text: str,
        category: str | None,
        ctx: TurnContext,
    ) -> Remediation:
        self.report_usage(None)
        cat = category if category in CATEGORIES else read_tone(text).worst
        exemplars = self.exemplars_for(dialogue, text)
        matching = [e for e in exemplars if repairs_category(e) == cat]
        rng = task_stream("remediate", self.task, self.seed, ctx.party_turn)
        chosen = rng.choice(matching) if matching else None
        style = style_of(chosen) if chosen is not None else ZERO_SHOT
        speaker = dialogue[-1].speaker if dialogue else ""
        rewrite = template_rewrite(
            text, cat, style, self.market, _listener_offer(dialogue[:-1], speaker), rng
        )
        how = f"template {style.name}" + (f" after {chosen.id}" if chosen else " (zero-shot)")
        return Remediation(rewrite, tuple(e.id for e in exemplars), how + self.retrieved_by())


class _Rewrite(BaseModel):
    model_config = ConfigDict(extra="ignore")
    rewrite: str = Field(min_length=1)


SYSTEM = (
    "You assist a negotiator. When their last sentence breaks social norms (rude, "
    "dismissive, dishonest, self-centred, or careless of the other side's culture), you "
    "rewrite it. Your rewrite must (1) keep what the sentence means, including any price "
    "it states, as far as possible; (2) be polite and respectful, so the listener is not "
    "offended; (3) still help the speaker get a good price; (4) help build trust and a "
    "lasting working relationship. Reply with the rewritten sentence only."
)
# Added for a negotiation held in Chinese only, so English runs send what they always did.
IN_CHINESE = " Write the rewrite in Simplified Chinese, as the negotiation is held in it."


class LLMRemediator(_Chooser):
    """Prompted with the exemplars as text: the paper's in-context remediator."""

    def __init__(self, scenario: Scenario, seed: int, method: str | None, model: ChatModel) -> None:
        super().__init__(scenario, seed, method)
        self.model = model
        self.chinese = scenario.language.startswith("zh")

    async def remediate(
        self,
        dialogue: Sequence[PublicTurn],
        text: str,
        category: str | None,
        ctx: TurnContext,
    ) -> Remediation:
        exemplars = self.exemplars_for(dialogue, text)
        lines = dialogue_lines(dialogue, self.names)
        shown = render(exemplars)
        user = (
            (f"Examples of violations and their fixes:\n\n{shown}\n\n" if shown else "")
            + "The negotiation so far:\n"
            + "\n".join(lines[:-1] or ["(nothing yet)"])
            + f'\n\nIts last sentence, "{text}", breaks social norms'
            + (f" ({category})" if category else "")
            + ". Rewrite it as described."
            + (IN_CHINESE if self.chinese else "")
        )
        request = ChatRequest(
            (Message("system", SYSTEM), Message("user", user)),
            temperature=0.3,
            max_tokens=160,
            schema=model_schema(_Rewrite),
            schema_name="rewrite",
            **turn_sampling(self.seed, ctx.party_turn, repeat=7)._asdict(),
        )
        calls: list[ChatResponse] = []
        try:
            reply, calls = await ask_structured(self.model, request, _Rewrite.model_validate)
        finally:
            self.report_usage(usage_of(calls) if calls else None)
        how = f"llm with {len(exemplars)} exemplars" + self.retrieved_by()
        return Remediation(reply.rewrite.strip(), tuple(e.id for e in exemplars), how)


def category_of(label: str) -> Category | None:
    return next((c for c in CATEGORIES if c == label), None)
