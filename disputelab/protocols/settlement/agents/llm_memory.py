"""RoT distillation by a model: the `llm` kind of the memory seat.

The split of a search's leaves and the facts of each finding are the rule distiller's
(`memory.distill`: which concession settled or deadlocked at which stage and gap, the
clauses the auditor flagged, the share of J similar cases settled at), and so are the
numbers retrieval and the planner use (each entry's payload). The model writes what a
counsel reads: one piece of guidance per finding, in its own words, which replaces the
template's sentence as the entry's text (the template's stays in the payload under
`facts`). The reply must give exactly one non-empty guidance per finding; otherwise it
is asked again and then fails the episode (`llm_staff.ModelSeat`), never keeping the
template's text in silence.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from disputelab.llm.base import ChatModel, ChatRequest, Message
from disputelab.llm.seeds import turn_sampling
from disputelab.protocols.settlement.agents.llm_staff import ModelSeat, lang
from disputelab.protocols.settlement.agents.memory import Entry, RuleDistiller, Tree, distill

GUIDANCE_CHARS = 240
# Cache sample indices of distillation calls, clear of the counsel's own calls.
DISTILL_REPEAT = 2000
KIND_WORDS = {"E": "experience", "R": "clause rule", "C": "case card"}


class Guidance(BaseModel):
    model_config = ConfigDict(extra="ignore")
    finding: int
    text: str = Field(min_length=1)


class GuidanceReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    guidance: list[Guidance] = Field(min_length=1)


def guidance_schema(n: int) -> dict[str, Any]:
    item = {
        "type": "object",
        "properties": {
            "finding": {"type": "integer", "minimum": 1, "maximum": n},
            "text": {"type": "string", "maxLength": GUIDANCE_CHARS},
        },
        "required": ["finding", "text"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"guidance": {"type": "array", "items": item, "minItems": n, "maxItems": n}},
        "required": ["guidance"],
        "additionalProperties": False,
    }


def checked_guidance(reply: GuidanceReply, n: int) -> list[str]:
    """One guidance text per finding, in finding order, or ValueError saying what is off."""
    texts: dict[int, str] = {}
    for g in reply.guidance:
        if not 1 <= g.finding <= n:
            raise ValueError(f"finding {g.finding} is not one of 1-{n}")
        if g.finding in texts:
            raise ValueError(f"finding {g.finding} has two guidance texts")
        if not g.text.strip():
            raise ValueError(f"finding {g.finding}: the guidance is blank")
        texts[g.finding] = g.text.strip()
    missing = [i for i in range(1, n + 1) if i not in texts]
    if missing:
        raise ValueError(f"no guidance for finding {', '.join(map(str, missing))}")
    return [texts[i] for i in range(1, n + 1)]


_ASK = {
    "en": "You coach {side}'s counsel in a settlement negotiation ({dispute}). A look-ahead "
    "search simulated many ways the talks could go; these findings compare its best and "
    "worst outcomes:\n{findings}\nFor each finding write one piece of guidance for this "
    "counsel's next negotiations, in your own words: when it applies, what to do, and why.",
    "zh": "您在和解谈判（{dispute}）中为{side}一方的代理律师提供指导。"
    "前瞻搜索模拟了谈判的多种走向，以下发现比较了其中最好与最差的结果：\n{findings}\n"
    "请针对每条发现，用您自己的话为该律师今后的谈判写一条指导：何时适用、应当怎么做、为什么。",
}


class ModelDistiller(RuleDistiller, ModelSeat):
    """The rule distiller's findings, each worded as guidance by the model."""

    name = "llm"
    role = "memory distiller"

    def __init__(self, model: ChatModel, seed: int, temperature: float = 0.3) -> None:
        ModelSeat.__init__(self, model, seed, temperature)

    async def reflect(self, tree: Tree) -> list[Entry]:
        found = distill(
            tree.leaves,
            tree.side,
            tree.context,
            tree.scenario,
            tree.dispute_type,
            tree.issues,
            tree.options,
        )
        if not found:
            return []  # nothing told the leaves apart: nothing to word
        findings = "\n".join(
            f"{i}. ({KIND_WORDS[e.kind]}, value {e.value:.2f}) {e.text}"
            for i, e in enumerate(found, 1)
        )
        ask = _ASK[lang(tree.language)].format(
            side=tree.side, dispute=tree.dispute_type or "-", findings=findings
        )
        request = ChatRequest(
            (Message("user", ask),),
            temperature=self.temperature,
            max_tokens=80 + 100 * len(found),
            schema=guidance_schema(len(found)),
            schema_name="settlement_guidance",
            **turn_sampling(self.seed, tree.turn, DISTILL_REPEAT)._asdict(),
        )

        def parse(data: Any) -> list[str]:
            return checked_guidance(GuidanceReply.model_validate(data), len(found))

        texts = await self.ask(request, parse)
        return [
            replace(e, text=t, payload={**e.payload, "facts": e.text, "written_by": "model"})
            for e, t in zip(found, texts, strict=True)
        ]
