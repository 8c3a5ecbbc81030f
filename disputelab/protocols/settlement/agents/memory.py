"""Reflection on search trees (RoT, spec section 5): distil what the planner's simulations
taught into a memory K = {R: rules, E: experience, C: case cards}, and retrieve it later.

After each search the leaves are split around their mean value mu: the high set holds
leaves with V >= mu + delta, the low set those with V <= mu - delta, delta = DELTA_SHARE x
the standard deviation of the leaf values (spec's suggestion). Distillation is by template
(no model call), from each leaf's features (issue options, concession, package, BATNA
gap, compliance, stall); the memory seat's `llm` kind (`llm_memory.py`) has a model word
each entry's guidance from the same facts:

- E (both sets): "at this stage and gap, a concession of x (relative to the curve)
  settled / deadlocked", keyed by side, stage and gap bucket, with its mean value;
- R (both sets): clause rules: a clause in low leaves that triggered the auditor is to be
  avoided; the package of high leaves is a safe phrasing;
- C (high set only): a case card: cause of action, issues, the settled amount as a share of
  the expected judgment, the clause options.

Retrieval: E by side, stage and gap; C by cause of action (labour, tort, contract, from
the dispute type in either language), ranked by issue overlap, never
from the same case (no same-case leakage); R by side.
"""

from __future__ import annotations

import json
import math
import sqlite3
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from disputelab.agents.base import UsageReporter
from disputelab.protocols.settlement.agents.auditor import clause_violations

Kind = Literal["R", "E", "C"]
DELTA_SHARE = 0.5
# The buckets an experience is filed and retrieved under (assumption): progress below
# the first bound is early, below the second middle, else late; the open gap, as a share
# of the expected judgment, narrow, moderate or wide likewise.
STAGE_BOUNDS = (0.34, 0.67)
GAP_BOUNDS = (0.1, 0.3)
MEMORY_FILE = "settlement-memory.sqlite"
MAX_ENTRIES = 2000  # per bank: the oldest go first (assumption)


@dataclass(frozen=True)
class Features:
    """f(tau) of one leaf."""

    concession: float  # share of the target-to-walk-away range the first move gave (1: accept)
    settled: bool
    amount_share: float | None  # agreed amount / expected judgment
    batna_gap: float  # normalised surplus of the acting side (negative: below BATNA)
    risky_clauses: tuple[str, ...]
    stall: int  # rounds without movement in the trajectory
    value: float


@dataclass(frozen=True)
class Entry:
    kind: Kind
    side: str
    key: str  # E: "stage/gap"; C: dispute type; R: "avoid" or "safe"
    text: str
    payload: dict[str, float | str | list[str]]
    value: float
    scenario: str  # the case it came from
    issues: tuple[str, ...] = ()

    def to_row(self) -> tuple[str, str, str, str, str, float, str, str, float]:
        return (
            self.kind,
            self.side,
            self.key,
            self.text,
            json.dumps(self.payload, ensure_ascii=False),
            self.value,
            self.scenario,
            json.dumps(list(self.issues), ensure_ascii=False),
            time.time(),
        )


def split_leaves(
    values: Sequence[float], delta_share: float = DELTA_SHARE
) -> tuple[list[int], list[int]]:
    """Indices of the high and low leaves: V >= mu + delta and V <= mu - delta."""
    if len(values) < 2:
        return [], []
    mu = statistics.fmean(values)
    delta = delta_share * statistics.pstdev(values)
    if delta == 0:
        return [], []  # every leaf alike: nothing to tell apart
    high = [i for i, v in enumerate(values) if v >= mu + delta]
    low = [i for i, v in enumerate(values) if v <= mu - delta]
    return high, low


_CAUSES = (
    ("labour", ("labour", "labor", "employment", "劳动", "工资")),
    ("tort", ("tort", "injury", "accident", "侵权", "损害")),
    ("contract", ("contract", "sale", "lease", "合同", "买卖", "租赁")),
)


def cause_of(dispute_type: str) -> str:
    """The cause of action case cards are filed under: labour, tort or contract when the
    dispute type names one (in English or Chinese), else the type up to its first colon."""
    text = dispute_type.lower()
    for cause, words in _CAUSES:
        if any(w in text for w in words):
            return cause
    return text.replace("：", ":").split(":")[0].strip()


def stage_of(progress: float) -> str:
    early, middle = STAGE_BOUNDS
    return "early" if progress < early else "middle" if progress < middle else "late"


def gap_bucket(gap_share: float) -> str:
    """The open gap as a share of the expected judgment."""
    narrow, moderate = GAP_BOUNDS
    return "narrow" if gap_share < narrow else "moderate" if gap_share < moderate else "wide"


def distill(
    leaves: Sequence[Features],
    side: str,
    context: tuple[str, str],
    scenario: str,
    dispute_type: str,
    issues: tuple[str, ...],
    options: dict[str, str],
) -> list[Entry]:
    """Delta+ and Delta- from one tree's leaves, as memory entries."""
    high, low = split_leaves([f.value for f in leaves])
    if not high or not low:
        return []
    stage, gap = context
    out: list[Entry] = []
    for idx, good in ((high, True), (low, False)):
        group = [leaves[i] for i in idx]
        conc = statistics.fmean(f.concession for f in group)
        v = statistics.fmean(f.value for f in group)
        verb = "tends to settle well" if good else "tends to deadlock or lose value"
        out.append(
            Entry(
                "E",
                side,
                f"{stage}/{gap}",
                f"{stage} stage, {gap} gap: conceding {conc:.0%} of the range at once {verb}",
                {"concession": conc, "good": "yes" if good else "no"},
                v,
                scenario,
            )
        )
        risky = sorted({c for f in group for c in f.risky_clauses})
        if not good and risky:
            out.append(
                Entry(
                    "R",
                    side,
                    "avoid",
                    "avoid clauses the auditor flags: " + "; ".join(risky),
                    {"clauses": risky},
                    v,
                    scenario,
                )
            )
    winners = [leaves[i] for i in high if leaves[i].settled and leaves[i].amount_share is not None]
    if winners:
        share = statistics.fmean(f.amount_share or 0.0 for f in winners)
        out.append(
            Entry(
                "C",
                side,
                cause_of(dispute_type),
                f"{dispute_type}: settled near {share:.0%} of the expected judgment",
                {"amount_share": share, "options": json.dumps(options, ensure_ascii=False)},
                statistics.fmean(f.value for f in winners),
                scenario,
                issues,
            )
        )
    return out


@dataclass(frozen=True)
class Tree:
    """One search to reflect on: its leaves and where it stood."""

    leaves: Sequence[Features]
    side: str
    context: tuple[str, str]  # (stage, gap bucket)
    scenario: str
    dispute_type: str
    issues: tuple[str, ...]
    options: dict[str, str]
    language: str = "en"
    turn: int = 0  # the counsel turn whose search this is


class RuleDistiller(UsageReporter):
    """The memory seat's rule kind: the entries `distill` writes by template."""

    name = "rule"

    async def reflect(self, tree: Tree) -> list[Entry]:
        return distill(
            tree.leaves,
            tree.side,
            tree.context,
            tree.scenario,
            tree.dispute_type,
            tree.issues,
            tree.options,
        )


def risky(clauses: Iterable[str], amount: float | None) -> tuple[str, ...]:
    return tuple(c for c in clauses if clause_violations(c, amount))


class MemoryBank:
    """The entries one counsel can draw on; `store` (if any) persists what it learns."""

    def __init__(self, entries: Sequence[Entry] = (), store: MemoryFile | None = None) -> None:
        self.entries = list(entries)
        self.store = store
        self.new: list[Entry] = []

    def add(self, entries: Iterable[Entry]) -> None:
        for e in entries:
            self.entries.append(e)
            self.new.append(e)
        del self.entries[: max(0, len(self.entries) - MAX_ENTRIES)]

    def flush(self) -> int:
        """Write what was learnt since the last flush; returns how many entries."""
        n = len(self.new)
        if self.store is not None and self.new:
            self.store.add(self.new)
        self.new = []
        return n

    def experience(self, side: str, stage: str, gap: str) -> list[Entry]:
        return [
            e
            for e in self.entries
            if e.kind == "E" and e.side == side and e.key == f"{stage}/{gap}"
        ]

    def case_cards(
        self, side: str, dispute_type: str, issues: tuple[str, ...], scenario: str, k: int = 3
    ) -> list[Entry]:
        """C entries of the same cause of action from other cases, most shared issues
        first."""
        cause = cause_of(dispute_type)
        cards = [
            e
            for e in self.entries
            if e.kind == "C" and e.side == side and e.key == cause and e.scenario != scenario
        ]
        mine = set(issues)
        cards.sort(key=lambda e: (-len(mine & set(e.issues)), -e.value))
        return cards[:k]

    def rules(self, side: str) -> list[Entry]:
        return [e for e in self.entries if e.kind == "R" and e.side == side]

    def avoided_clauses(self, side: str) -> set[str]:
        out: set[str] = set()
        for e in self.rules(side):
            clauses = e.payload.get("clauses", [])
            if isinstance(clauses, list):
                out.update(clauses)
        return out

    def suggested_concession(self, side: str, stage: str, gap: str) -> float | None:
        """The concession multiplier of the best-valued 'good' experience, if any."""
        good = [e for e in self.experience(side, stage, gap) if e.payload.get("good") == "yes"]
        if not good:
            return None
        best = max(good, key=lambda e: e.value)
        c = best.payload.get("concession")
        return float(c) if isinstance(c, int | float) and math.isfinite(c) else None

    def lines(
        self,
        side: str,
        stage: str,
        gap: str,
        dispute_type: str,
        issues: tuple[str, ...],
        scenario: str,
    ) -> list[str]:
        """The retrieved memories as text, for a model counsel's prompt."""
        picked = (
            self.rules(side)[-3:]
            + self.experience(side, stage, gap)[-3:]
            + self.case_cards(side, dispute_type, issues, scenario)
        )
        return [f"[{e.kind}] {e.text}" for e in picked]


class MemoryFile:
    """Memory entries persisted in the store directory, in their own SQLite file."""

    def __init__(self, root: str | Path) -> None:
        self.path = Path(root) / MEMORY_FILE

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=30)
        con.execute(
            "CREATE TABLE IF NOT EXISTS memory (id INTEGER PRIMARY KEY, kind TEXT, side TEXT, "
            "key TEXT, text TEXT, payload TEXT, value REAL, scenario TEXT, issues TEXT, "
            "created REAL)"
        )
        return con

    def add(self, entries: Sequence[Entry]) -> None:
        with self._connect() as con:
            con.executemany(
                "INSERT INTO memory (kind, side, key, text, payload, value, scenario, issues, "
                "created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [e.to_row() for e in entries],
            )
        con.close()

    def load(self) -> list[Entry]:
        if not self.path.exists():
            return []
        con = self._connect()
        try:
            rows = con.execute(
                "SELECT kind, side, key, text, payload, value, scenario, issues FROM memory "
                "ORDER BY id DESC LIMIT ?",
                (MAX_ENTRIES,),
            ).fetchall()
        finally:
            con.close()
        return [
            Entry(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], tuple(json.loads(r[7])))
            for r in reversed(rows)
        ]

    def reset(self) -> int:
        """Forget everything; returns how many entries there were."""
        if not self.path.exists():
            return 0
        with self._connect() as con:
            n = int(con.execute("SELECT COUNT(*) FROM memory").fetchone()[0])
            con.execute("DELETE FROM memory")
        con.close()
        return n

    def counts(self) -> dict[str, int]:
        if not self.path.exists():
            return {}
        con = self._connect()
        try:
            rows = con.execute(
                "SELECT kind || '/' || side, COUNT(*) FROM memory GROUP BY 1"
            ).fetchall()
        finally:
            con.close()
        return {str(k): int(n) for k, n in rows}


def entry_dict(e: Entry) -> dict[str, object]:
    return asdict(e)
