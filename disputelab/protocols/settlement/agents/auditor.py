"""The compliance auditor's deterministic rules (Omega, spec section 7).

A draft is an amount plus clauses, each written `field: text` (`deadline: within 30 days
of signing`). The auditor returns pass, warn or veto with the violations it found and a
revised clause list (Delta o): vetoed and warned clauses are dropped, and a missing
essential field gets a neutral default a court-annexed agreement would carry.

Rules (ours; the paper lists only the categories, and any threshold needs legal review):
- EL: missing essential elements: the amount or payment deadline (veto); payment method,
  breach liability or enforcement (warn).
- AMB: vague wording ("as soon as possible", "reasonable") in an execution field: warn,
  veto when it is the deadline.
- NW: waiving non-waivable rights (statutory social insurance, future personal-injury
  claims, the right to sue over unrelated future disputes): veto.
- ILL: illegal terms (liquidated damages above LIQUIDATED_CAP of the amount, concealing an
  illegal act, requiring an unlawful act): veto.
- ENF: unverifiable conditions or obligations on someone not party to it: warn.
- VOL: coercion, "sign today or else" terms: veto.

`RuleAuditor` is the seat's rule kind; `llm_auditor.LLMAuditor` has a model judge the
clauses instead, with the essential-element checks (EL) kept as rules.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Literal

from disputelab.agents.base import UsageReporter

Flag = Literal["pass", "warn", "veto"]
ESSENTIAL_VETO = ("deadline",)
ESSENTIAL_WARN = ("payment_method", "liability", "enforcement")
EXECUTION_FIELDS = ("deadline", "payment_method", "installment", "liability", "enforcement")
# Liquidated damages above this share of the settlement amount are treated as a penalty
# grossly exceeding the loss (spec section 7 suggests flagging beyond 30 %).
LIQUIDATED_CAP = 0.3

DEFAULT_CLAUSES = {
    "en": {
        "deadline": "deadline: the full amount is paid within 30 days of signing",
        "payment_method": "payment_method: bank transfer to the account the payee names",
        "liability": "liability: a late payment carries statutory interest until paid",
        "enforcement": "enforcement: either side may apply to the court to confirm and "
        "enforce this agreement",
    },
    "zh": {
        "deadline": "deadline: 签署后30日内一次性付清",
        "payment_method": "payment_method: 银行转账至收款方指定账户",
        "liability": "liability: 逾期付款按法定利率计付利息",
        "enforcement": "enforcement: 任何一方可申请法院司法确认并强制执行",
    },
}

_VAGUE = re.compile(
    r"as soon as possible|when (?:possible|convenient)|reasonable (?:time|amount)|"
    r"in due course|at some point|to be agreed|尽快|适当时候|合理期限|方便时|另行商定|视情况",
    re.I,
)
_RULES: tuple[tuple[str, str, Flag, re.Pattern[str]], ...] = (
    (
        "NW-1",
        "waives a non-waivable right",
        "veto",
        re.compile(
            r"waives?\b.*\b(?:social insurance|statutory|future (?:personal[- ])?injury|"
            r"right to sue|any future claim)|放弃.*(?:社会保险|社保|法定|工伤|人身损害|起诉权|"
            r"今后一切)",
            re.I,
        ),
    ),
    (
        "ILL-2",
        "conceals or requires an unlawful act",
        "veto",
        re.compile(
            r"conceal|cover up|(?:not|never|neither)\b.{0,30}\breport\b.{0,40}\bauthorit|"
            r"destroy (?:the )?evidence|"
            r"隐瞒|销毁证据|不得向.*(?:举报|报告)",
            re.I,
        ),
    ),
    (
        "VOL-1",
        "coercive or not voluntary",
        "veto",
        re.compile(
            r"sign(?:ed)? today or|or else|under threat|lapses unless signed|"
            r"no longer negotiable|今天不签|否则后果|限今日签署|威胁",
            re.I,
        ),
    ),
    (
        "ENF-1",
        "unverifiable condition or a third party's obligation",
        "warn",
        re.compile(
            r"when\b.{0,40}\b(?:business|conditions|finances|circumstances) (?:permit|allow)|"
            r"if (?:the )?"
            r"(?:defendant|payer) (?:deems|considers)|a third party (?:shall|will)|"
            r"经营状况允许|视.*情况|第三方(?:应|将|负责)",
            re.I,
        ),
    ),
)
_DAMAGES = re.compile(r"(?:liquidated damages|违约金)\D{0,20}?([\d,]+(?:\.\d+)?)", re.I)


@dataclass(frozen=True)
class Violation:
    rule: str
    what: str
    flag: Flag
    clause: str = ""


@dataclass(frozen=True)
class Audit:
    flag: Flag
    violations: tuple[Violation, ...] = ()
    revised: tuple[str, ...] = ()  # Delta o: the clause list the auditor would sign off
    notes: tuple[str, ...] = field(default=())

    def summary(self) -> str:
        if not self.violations:
            return "pass: no compliance issue found"
        found = "; ".join(
            f"{v.rule} {v.what}" + (f" ({v.clause})" if v.clause else "") for v in self.violations
        )
        return f"{self.flag}: {found}"


# The planner audits the same drafts and clauses thousands of times an episode: the
# checks below are pure, so each distinct input is worked out once (bounded, since a
# model's clauses never repeat).
@functools.lru_cache(maxsize=8192)
def clause_field(clause: str) -> str:
    """The field a clause fills: the text before its first colon, or '' when none."""
    head, sep, _ = clause.partition(":")
    return head.strip().lower() if sep and re.fullmatch(r"[a-z_]+", head.strip().lower()) else ""


def worst(flags: list[Flag]) -> Flag:
    return "veto" if "veto" in flags else "warn" if "warn" in flags else "pass"


def clause_violations(clause: str, amount: float | None) -> list[Violation]:
    """Every rule one clause breaks."""
    return list(_clause_violations(clause, amount))


@functools.lru_cache(maxsize=8192)
def _clause_violations(clause: str, amount: float | None) -> tuple[Violation, ...]:
    out = [
        Violation(rule, what, flag, clause) for rule, what, flag, rx in _RULES if rx.search(clause)
    ]
    fld = clause_field(clause)
    if fld in EXECUTION_FIELDS and _VAGUE.search(clause):
        flag: Flag = "veto" if fld == "deadline" else "warn"
        out.append(Violation("AMB-1", f"vague wording in the {fld}", flag, clause))
    m = _DAMAGES.search(clause)
    if m and amount:
        damages = float(m.group(1).replace(",", ""))
        if damages > LIQUIDATED_CAP * amount:
            out.append(
                Violation("ILL-1", "liquidated damages grossly exceed the loss", "veto", clause)
            )
    return tuple(out)


def essential_violations(amount: float | None, clauses: tuple[str, ...]) -> list[Violation]:
    """The EL rules: a missing amount or deadline (veto), a missing payment method,
    liability or enforcement clause (warn)."""
    violations: list[Violation] = []
    if amount is None:
        violations.append(Violation("EL-1", "no settlement amount", "veto"))
    present = {clause_field(c) for c in clauses}
    for fld in ESSENTIAL_VETO:
        if fld not in present:
            violations.append(Violation("EL-2", f"missing {fld}", "veto"))
    for fld in ESSENTIAL_WARN:
        if fld not in present:
            violations.append(Violation("EL-3", f"missing {fld}", "warn"))
    return violations


@functools.lru_cache(maxsize=8192)
def audit(amount: float | None, clauses: tuple[str, ...], language: str = "en") -> Audit:
    """Check a draft: an amount and its clauses."""
    violations = essential_violations(amount, clauses)
    bad_clauses: set[str] = set()
    for c in clauses:
        found = clause_violations(c, amount)
        violations += found
        if found:
            bad_clauses.add(c)
    flag = worst([v.flag for v in violations])
    return Audit(flag, tuple(violations), revise(clauses, bad_clauses, language))


def revise(clauses: tuple[str, ...], bad: set[str], language: str = "en") -> tuple[str, ...]:
    """Delta o: drop the flagged clauses and fill each missing essential field."""
    return with_essentials([c for c in clauses if c not in bad], language)


def with_essentials(kept: list[str], language: str = "en") -> tuple[str, ...]:
    """`kept`, with the neutral default clause of each essential field it leaves out."""
    present = {clause_field(c) for c in kept}
    defaults = DEFAULT_CLAUSES["zh" if language.startswith("zh") else "en"]
    return tuple(kept + [text for fld, text in defaults.items() if fld not in present])


def missing_fields(clauses: tuple[str, ...]) -> list[str]:
    """Execution fields a package leaves out (the VAGUE red-team mode's target)."""
    present = {clause_field(c) for c in clauses}
    return [
        f for f in ("deadline", "payment_method", "liability", "enforcement") if f not in present
    ]


class RuleAuditor(UsageReporter):
    """The auditor seat's rule kind: `audit`, no model call."""

    name = "rule"

    async def review(
        self, amount: float | None, clauses: tuple[str, ...], language: str, unit: str = ""
    ) -> Audit:
        """The audit of a draft of `amount` (in `unit`) with `clauses`."""
        return audit(amount, clauses, language)
