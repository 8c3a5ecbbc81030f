"""The compliance auditor played by a model: a verdict on every clause of the draft.

The model reads the draft (the amount and its numbered clauses) and returns, for each
clause, `ok`, `revise` with the revised text, or `unverifiable` (it cannot be checked or
enforced as written), with a short reason. The reply must give exactly one verdict per
clause, and a revision must keep the clause's field (`deadline: ...` stays a deadline).

What is structural stays a rule: a draft without an amount or a deadline is vetoed and a
missing payment method, liability or enforcement clause is a warning (the EL rules of
`auditor.py`), since there is no clause to give a verdict on. The verdicts make the
rest: a revision or an unverifiable clause is a warning. The revised clause list (Delta o)
takes each revision, drops each unverifiable clause and fills each missing essential
field as the rule auditor does, so the protocol applies it the same way: a veto sends the
table back to BARG, a warning applies the revisions and asks the auditor once more.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from disputelab.llm.base import ChatModel, ChatRequest, Message
from disputelab.llm.seeds import turn_sampling
from disputelab.protocols.settlement.agents.auditor import (
    Audit,
    RuleAuditor,
    Violation,
    clause_field,
    essential_violations,
    with_essentials,
    worst,
)
from disputelab.protocols.settlement.agents.llm_staff import ModelSeat, lang

Verdict = Literal["ok", "revise", "unverifiable"]
CLAUSE_CHARS = 160


class ClauseVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")
    clause: int
    verdict: Verdict
    revised: str = ""
    reason: str = ""


class AuditReply(BaseModel):
    model_config = ConfigDict(extra="ignore")
    verdicts: list[ClauseVerdict] = Field(min_length=1)


def audit_schema(n: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "verdicts": {
                "type": "array",
                "minItems": n,
                "maxItems": n,
                "items": {
                    "type": "object",
                    "properties": {
                        "clause": {"type": "integer", "minimum": 1, "maximum": n},
                        "verdict": {"type": "string", "enum": ["ok", "revise", "unverifiable"]},
                        "revised": {"type": "string", "maxLength": CLAUSE_CHARS},
                        "reason": {"type": "string", "maxLength": CLAUSE_CHARS},
                    },
                    "required": ["clause", "verdict", "revised", "reason"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["verdicts"],
        "additionalProperties": False,
    }


def checked_verdicts(reply: AuditReply, clauses: tuple[str, ...]) -> list[ClauseVerdict]:
    """The verdicts in clause order, or ValueError naming what is wrong with them."""
    by_clause: dict[int, ClauseVerdict] = {}
    for v in reply.verdicts:
        if not 1 <= v.clause <= len(clauses):
            raise ValueError(f"clause {v.clause} is not one of the draft's 1-{len(clauses)}")
        if v.clause in by_clause:
            raise ValueError(f"clause {v.clause} has two verdicts")
        by_clause[v.clause] = v
    missing = [i for i in range(1, len(clauses) + 1) if i not in by_clause]
    if missing:
        raise ValueError(f"no verdict for clause {', '.join(map(str, missing))}")
    for i, clause in enumerate(clauses, 1):
        v = by_clause[i]
        if v.verdict != "revise":
            continue
        revised = v.revised.strip()
        if not revised or revised == clause.strip():
            raise ValueError(f"clause {i}: a revise verdict needs a revised text that differs")
        if clause_field(clause) and clause_field(revised) != clause_field(clause):
            raise ValueError(
                f"clause {i}: the revised text must keep the field "
                f"'{clause_field(clause)}: ...' of the clause it revises"
            )
    return [by_clause[i] for i in range(1, len(clauses) + 1)]


def judged_audit(
    amount: float | None,
    clauses: tuple[str, ...],
    verdicts: list[ClauseVerdict],
    language: str,
) -> Audit:
    """The audit the verdicts make, with the EL rules on what the draft leaves out."""
    violations = essential_violations(amount, clauses)
    kept: list[str] = []
    notes: list[str] = []
    for i, (clause, v) in enumerate(zip(clauses, verdicts, strict=True), 1):
        reason = v.reason.strip()
        if v.verdict == "ok":
            kept.append(clause)
            notes.append(f"clause {i} ok")
        elif v.verdict == "revise":
            kept.append(v.revised.strip())
            violations.append(Violation("LLM-REVISE", reason or "revised", "warn", clause))
            notes.append(
                f"clause {i} revise -> {v.revised.strip()}" + (f" ({reason})" if reason else "")
            )
        else:
            violations.append(
                Violation("LLM-UNVERIFIABLE", reason or "unverifiable", "warn", clause)
            )
            notes.append(f"clause {i} unverifiable, struck" + (f" ({reason})" if reason else ""))
    flag = worst([v.flag for v in violations])
    return Audit(flag, tuple(violations), with_essentials(kept, language), tuple(notes))


_ASK = {
    "en": {
        "system": "You are a compliance auditor of settlement agreements in a civil dispute. "
        "For each clause decide: ok; revise (it is vague, unlawful, waives a right that cannot "
        "be waived, is coercive or grossly one-sided: give the clause rewritten so that it is "
        "lawful, concrete and enforceable, keeping its 'field:' prefix); or unverifiable (its "
        "condition or obligation cannot be checked or enforced, e.g. it binds someone who is "
        "not a party). Give a short reason for each verdict.",
        "draft": "Draft agreement: {amount} {unit}.\nClauses:\n{clauses}",
    },
    "zh": {
        "system": "您是民事纠纷和解协议的合规审查员。请逐条判断：ok（合规）；"
        "revise（含糊、违法、放弃不可放弃的权利、胁迫或显失公平：给出改写后的条款，"
        "须合法、具体、可执行，并保留“字段:”前缀）；unverifiable（其条件或义务无法核实或执行，"
        "如约束协议以外的人）。每条附简短理由。",
        "draft": "协议草案：{amount}{unit}。\n条款：\n{clauses}",
    },
}


class LLMAuditor(RuleAuditor, ModelSeat):
    """Per-clause verdicts from the model; a draft without clauses is not sent (the EL
    rules alone judge it)."""

    name = "llm"
    role = "compliance auditor"

    def __init__(self, model: ChatModel, seed: int, temperature: float = 0.0) -> None:
        ModelSeat.__init__(self, model, seed, temperature)
        self.asked = 0

    async def review(
        self, amount: float | None, clauses: tuple[str, ...], language: str, unit: str = ""
    ) -> Audit:
        if not clauses:
            return judged_audit(amount, clauses, [], language)
        x = _ASK[lang(language)]
        draft = x["draft"].format(
            amount="-" if amount is None else f"{amount:,.2f}",
            unit=unit,
            clauses="\n".join(f"{i}. {c}" for i, c in enumerate(clauses, 1)),
        )
        request = ChatRequest(
            (Message("system", x["system"]), Message("user", draft)),
            temperature=self.temperature,
            max_tokens=120 + 120 * len(clauses),
            schema=audit_schema(len(clauses)),
            schema_name="settlement_audit",
            **turn_sampling(self.seed, 0, self.asked)._asdict(),
        )
        self.asked += 1

        def parse(data: Any) -> list[ClauseVerdict]:
            return checked_verdicts(AuditReply.model_validate(data), clauses)

        return judged_audit(amount, clauses, await self.ask(request, parse), language)
