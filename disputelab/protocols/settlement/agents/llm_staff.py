"""Model-backed neutral roles of a settlement: the outcome analyst and the mediator (the
auditor is in `llm_auditor.py`, the memory's distiller in `llm_memory.py`).

Every one asks for a JSON reply that fits a schema and checks it against ranges the
protocol can defend. A reply that does not fit is asked again under the policy of
`llm.structured.ask_structured` (two re-asks), as the model counsel's are; one that still
does not fit fails the episode with a `ModelReplyError` that names the role. None of them
falls back to a default: a BATNA or a proposal nobody gave would be an invented result.

- Outcome analyst (SettleAgent's Outcome agent: the litigation baseline). It reads its
  own view of the case only (`staff.CaseView`: the clerk's digest, the facts, each side's
  public opening) and returns the expected award J, the plaintiff's chance of winning and
  each side's remaining cost of litigating. The one BATNA model (`model.Batna`) turns that
  into reservation values and the zone of agreement, exactly as for the rule analyst, so
  surplus stays in [0, 1] under `walk_away: batna`. J must lie between the admitted amount
  and the claim, p_win in (0, 1], each cost in [0, J].
- Mediator (the paper's Mediator on a stall). It hears the talks as the mediator seat
  hears them and proposes a figure between the two standing offers, with a sentence for
  the table; the opening issue list stays the rule mediator's template.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from disputelab.agents.base import PublicTurn, UsageReporter
from disputelab.agents.parties.llm import usage_of
from disputelab.episode import Intervention, Usage
from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse, Message, ModelReplyError
from disputelab.llm.seeds import turn_sampling
from disputelab.llm.structured import ask_structured
from disputelab.protocols.settlement.agents.model import Batna
from disputelab.protocols.settlement.agents.staff import (
    AnalystSettings,
    CaseView,
    OutcomeAnalyst,
    RuleMediator,
)

T = TypeVar("T")
HISTORY_TURNS = 12  # the latest turns the mediator is shown


def lang(language: str) -> str:
    return "zh" if language.startswith("zh") else "en"


class ModelSeat(UsageReporter):
    """A neutral seat played by a model: its calls, metered until the session takes them,
    and the one way it asks (structured, re-asked, failing with the role named)."""

    role = "model seat"

    def __init__(self, model: ChatModel, seed: int, temperature: float = 0.0) -> None:
        self.model = model
        self.seed = seed
        self.temperature = temperature
        self._responses: list[ChatResponse] = []

    async def ask(self, request: ChatRequest, parse: Callable[[Any], T]) -> T:
        try:
            value, responses = await ask_structured(self.model, request, parse)
        except ModelReplyError as exc:
            self._responses += exc.responses  # they were calls all the same
            raise type(exc)(f"{self.role}: {exc}", exc.responses) from None
        self._responses += responses
        return value

    def take_usage(self) -> Usage | None:
        """Every call since the session last asked (None when there was none)."""
        if not self._responses:
            return None
        used, self._responses = usage_of(self._responses), []
        return used


# ---- the outcome analyst ------------------------------------------------------------
class BatnaReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    expected_award: float
    p_win: float
    cost_plaintiff: float
    cost_defendant: float
    reasoning: str = ""


def batna_schema() -> dict[str, Any]:
    number = {"type": "number"}
    return {
        "type": "object",
        "properties": {
            "expected_award": number,
            "p_win": {"type": "number", "minimum": 0, "maximum": 1},
            "cost_plaintiff": {**number, "minimum": 0},
            "cost_defendant": {**number, "minimum": 0},
            "reasoning": {"type": "string", "maxLength": 300},
        },
        "required": ["expected_award", "p_win", "cost_plaintiff", "cost_defendant", "reasoning"],
        "additionalProperties": False,
    }


def checked_batna(reply: BatnaReply, case: CaseView) -> Batna:
    """The reply as the BATNA, or ValueError naming the first value out of its range."""
    low, high = sorted((case.admitted, case.claim))
    j = reply.expected_award
    values = (j, reply.p_win, reply.cost_plaintiff, reply.cost_defendant)
    if not all(math.isfinite(v) for v in values):
        raise ValueError("every number must be finite")
    if not low <= j <= high:
        raise ValueError(
            f"expected_award {j:,.2f} must lie between the admitted amount {low:,.2f} and "
            f"the claim {high:,.2f}"
        )
    if not 0 < reply.p_win <= 1:
        raise ValueError(f"p_win {reply.p_win} must be above 0 and at most 1")
    for name, cost in (
        ("cost_plaintiff", reply.cost_plaintiff),
        ("cost_defendant", reply.cost_defendant),
    ):
        if not 0 <= cost <= j:
            raise ValueError(f"{name} {cost:,.2f} must be from 0 to expected_award ({j:,.2f})")
    return Batna(j, reply.p_win, reply.cost_plaintiff, reply.cost_defendant, "model")


_ANALYST = {
    "en": {
        "system": "You are a neutral litigation analyst. You do not negotiate. From the case "
        "file you estimate what happens if the dispute goes to court.",
        "ask": "Case file:\n{digest}\nFacts:\n{facts}\nThe claimant claims {claim:,.0f} {unit}; "
        "the respondent admits {admitted:,.0f} {unit}.\nEstimate: expected_award, what a "
        "court would award if the claimant wins (between the two amounts); p_win, the "
        "claimant's chance of winning; cost_plaintiff and cost_defendant, what each side "
        "would still spend on litigation (fees, time), in {unit}; and one sentence of "
        "reasoning.",
    },
    "zh": {
        "system": "您是中立的诉讼结果分析员，不参与谈判。请根据案卷估计案件进入审判后的结果。",
        "ask": "案卷：\n{digest}\n事实：\n{facts}\n"
        "原告主张{claim:,.0f}{unit}；被告认可{admitted:,.0f}{unit}。\n请估计：expected_award，原告胜诉时法院预计判决的金额（介于两者之间）；p_win，"
        "原告胜诉的概率；cost_plaintiff 与 cost_defendant，双方各自仍需承担的诉讼成本（费用、"
        "时间），单位{unit}；以及一句理由（reasoning）。",
    },
}


class LLMOutcomeAnalyst(OutcomeAnalyst, ModelSeat):
    """The outcome analyst's BATNA estimated by a model from `CaseView` alone."""

    name = "llm"
    role = "outcome analyst"

    def __init__(self, model: ChatModel, seed: int, temperature: float = 0.0) -> None:
        ModelSeat.__init__(self, model, seed, temperature)
        self.reasoning = ""

    async def estimate(self, case: CaseView, s: AnalystSettings) -> Batna:
        """The model's BATNA for `case` (`s`, the rule analyst's assumptions, unused)."""
        if case.judgment is not None:
            raise ValueError(
                "batna_source: judgment takes J from the known judgment, and the llm outcome "
                "analyst estimates J itself; seat the rule analyst or use batna_source: analyst"
            )
        x = _ANALYST[lang(case.language)]
        ask = x["ask"].format(
            digest=case.digest,
            facts="\n".join(f"- {f}" for f in case.facts) or "-",
            claim=case.claim,
            admitted=case.admitted,
            unit=case.unit,
        )
        request = ChatRequest(
            (Message("system", x["system"]), Message("user", ask)),
            temperature=self.temperature,
            max_tokens=300,
            schema=batna_schema(),
            schema_name="settlement_batna",
            **turn_sampling(self.seed, 0)._asdict(),
        )

        def parse(data: Any) -> tuple[Batna, str]:
            reply = BatnaReply.model_validate(data)
            return checked_batna(reply, case), reply.reasoning.strip()

        batna, self.reasoning = await self.ask(request, parse)
        return batna


# ---- the mediator -------------------------------------------------------------------
class ProposalReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    amount: float
    utterance: str = Field(min_length=1)


def proposal_schema(language: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "amount": {"type": "number"},
            "utterance": {"type": "string", "maxLength": 160 if lang(language) == "zh" else 300},
        },
        "required": ["amount", "utterance"],
        "additionalProperties": False,
    }


_MEDIATOR = {
    "en": {
        "system": "You are a neutral mediator between two settlement counsel. You represent "
        "neither side; you help them reach an agreement they can carry out lawfully.",
        "ask": "The talks have stalled: the claimant's counsel stands at {a:,.0f} {unit} and "
        "the respondent's at {b:,.0f} {unit}. Propose one settlement figure between the two "
        "and say to both sides, in a sentence or two, why it is a fair way forward.",
    },
    "zh": {
        "system": "您是和解谈判中的中立调解员，不代表任何一方，帮助双方达成可依法履行的协议。",
        "ask": "谈判陷入僵局：原告代理人停在{a:,.0f}{unit}，被告代理人停在{b:,.0f}{unit}。"
        "请在两者之间提出一个和解金额，并用一两句话向双方说明理由。",
    },
}


class LLMMediator(RuleMediator, ModelSeat):
    """On a stall the model proposes a figure between the standing offers."""

    name = "llm"
    role = "mediator"

    def __init__(self, model: ChatModel, seed: int, temperature: float = 0.3) -> None:
        ModelSeat.__init__(self, model, seed, temperature)
        self.stalls = 0

    async def stall(
        self,
        dialogue: Sequence[PublicTurn],
        a: float,
        b: float,
        term_id: str,
        language: str,
        unit: str,
    ) -> Intervention:
        x = _MEDIATOR[lang(language)]
        heard = "\n".join(f"{t.speaker}: {t.text}" for t in dialogue[-HISTORY_TURNS:])
        request = ChatRequest(
            (
                Message("system", x["system"]),
                Message("user", f"{heard}\n\n" + x["ask"].format(a=a, b=b, unit=unit)),
            ),
            temperature=self.temperature,
            max_tokens=300,
            schema=proposal_schema(language),
            schema_name="settlement_mediation",
            **turn_sampling(
                self.seed, dialogue[-1].party_turn if dialogue else 0, self.stalls
            )._asdict(),
        )
        self.stalls += 1
        low, high = min(a, b), max(a, b)

        def parse(data: Any) -> ProposalReply:
            reply = ProposalReply.model_validate(data)
            if not (math.isfinite(reply.amount) and low <= reply.amount <= high):
                raise ValueError(
                    f"amount {reply.amount:,.2f} must lie between the standing offers "
                    f"{low:,.2f} and {high:,.2f}"
                )
            return reply

        reply = await self.ask(request, parse)
        m = min(max(round(reply.amount, 2), low), high)
        return Intervention(reply.utterance.strip(), offer={term_id: m}, thought="model mediator")
