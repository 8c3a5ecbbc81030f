"""In-context exemplars for the remediator: one violation in its dialogue and its fix.

An exemplar is `z = (h_<t, x_t, y_t)` of the paper: the dialogue before a violating turn,
the violating utterance, and a (silver) remediation. Offline, a remediation is written in
one of a few repair styles (`STYLES`); the template remediator reads an exemplar's style
label as the stand-in for "what this rewrite does". An exemplar written by people or a
model has no labels of its own: they are inferred from its text (`labels`), and marked
so (`inferred`, `label_source`). Pools and named sets are JSON files; this module reads
and writes them and knows nothing of where they live.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from disputelab import atomic
from disputelab.protocols.bilateral.agents.labels import infer_category, infer_style
from disputelab.protocols.bilateral.agents.norms import Warmth

FORMAT = "disputelab-exemplars/1"


@dataclass(frozen=True)
class RepairStyle:
    """What a rewrite in this style does to a violating turn (offline assumptions).

    `residual`: share of the violation's severity the rewrite still carries (0 none);
    `warmth`: relational phrases it adds; `concession`: the share of the gap to the
    listener's last offer the rewrite gives away (a rewrite that changes the price, as
    the paper's own example does).
    """

    name: str
    residual: float
    warmth: tuple[Warmth, ...] = ()
    concession: float = 0.0


# ASSUMPTION: the repair styles and what each does. The zero-shot remediator softens
# generically and keeps half the offence; each styled rewrite is what an exemplar of
# that style teaches for its own violation category only (no transfer across categories).
ZERO_SHOT = RepairStyle("generic", residual=0.5)
STYLES: dict[str, RepairStyle] = {
    s.name: s
    for s in (
        RepairStyle("restate", residual=0.25),
        RepairStyle("apologise", residual=0.1, warmth=("apology",)),
        RepairStyle("empathise", residual=0.0, warmth=("empathy",)),
        RepairStyle("alternatives", residual=0.0, warmth=("empathy", "partnership")),
        RepairStyle("concede", residual=0.0, warmth=("respect",), concession=0.3),
    )
}
# How often a silver (zero-shot-annotated) remediation in a generated pool comes out in
# each style: most fixes merely restate, few are skilful (ASSUMPTION).
SILVER_STYLE_WEIGHTS: dict[str, float] = {
    "restate": 0.35,
    "apologise": 0.25,
    "empathise": 0.15,
    "alternatives": 0.1,
    "concede": 0.15,
}


@dataclass(frozen=True)
class Exemplar:
    id: str
    scenario_id: str
    category: str  # the violation's label
    history: tuple[str, ...]  # "speaker: text" lines before the violation
    violation: str
    remediation: str
    style: str = ""  # a key of STYLES for template-written remediations, else ""
    inferred: bool = False  # category and style were read from the text by a rule
    label_source: str = ""  # how they were had (the rule and the words that decided)
    origin: str = ""  # where an imported exemplar came from (file and record)
    notes: tuple[str, ...] = ()  # what its import read past (warned when imported)

    def query_text(self) -> str:
        """What retrieval compares: the last lines of the dialogue and the violation."""
        return "\n".join([*self.history[-4:], self.violation])

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "scenario_id": self.scenario_id,
            "category": self.category,
            "history": list(self.history),
            "violation": self.violation,
            "remediation": self.remediation,
            "style": self.style,
        }
        # Written only when set, so that pools made before these fields read the same.
        if self.inferred:
            out["inferred"] = True
        for key, value in (("label_source", self.label_source), ("origin", self.origin)):
            if value:
                out[key] = value
        if self.notes:
            out["notes"] = list(self.notes)
        return out

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Exemplar:
        return Exemplar(
            str(d["id"]),
            str(d.get("scenario_id", "")),
            str(d.get("category", "")),
            tuple(str(x) for x in d.get("history") or ()),
            str(d["violation"]),
            str(d["remediation"]),
            str(d.get("style") or ""),
            bool(d.get("inferred", False)),
            str(d.get("label_source") or ""),
            str(d.get("origin") or ""),
            tuple(str(x) for x in d.get("notes") or ()),
        )


@dataclass(frozen=True)
class ExemplarFile:
    """A pool (`kind: pool`) or a selected set (`kind: set`), with how it was made."""

    name: str
    kind: str
    exemplars: tuple[Exemplar, ...]
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "name": self.name,
            "kind": self.kind,
            "meta": self.meta,
            "exemplars": [e.to_dict() for e in self.exemplars],
        }

    @staticmethod
    def from_dict(d: dict[str, Any]) -> ExemplarFile:
        if d.get("format") != FORMAT:
            raise ValueError(f"not an exemplar file (format is {d.get('format')!r})")
        return ExemplarFile(
            str(d["name"]),
            str(d["kind"]),
            tuple(Exemplar.from_dict(e) for e in d.get("exemplars") or ()),
            dict(d.get("meta") or {}),
        )


def save_exemplars(file: ExemplarFile, path: Path) -> Path:
    """Write `file` as JSON (atomically: a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, json.dumps(file.to_dict(), ensure_ascii=False, indent=1))
    return path


def load_exemplars(path: Path) -> ExemplarFile:
    """Read an exemplar file; ValueError with one line on anything wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("the file does not hold a JSON object")
        return ExemplarFile.from_dict(data)
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read exemplars: {exc}") from None


def style_of(exemplar: Exemplar) -> RepairStyle:
    """The repair an exemplar teaches: its style label, or for one without (written by
    people or a model), the style its text shows (`labels.infer_style`)."""
    if exemplar.style in STYLES:
        return STYLES[exemplar.style]
    return STYLES[infer_style(exemplar.violation, exemplar.remediation)[0]]


def repairs_category(exemplar: Exemplar) -> str:
    """The violation category an exemplar repairs: its label, or for one without, the
    category its violation's words show (`labels.infer_category`; "" when none)."""
    if exemplar.category:
        return exemplar.category
    return infer_category(exemplar.violation)[0]


def render(exemplars: Sequence[Exemplar]) -> str:
    """Exemplars in the prompt format: the dialogue, the tagged violation, the fix."""
    blocks = []
    for e in exemplars:
        lines = ["# Dialogue:", *e.history, f"{e.violation} [violation]", "# Remediation:"]
        blocks.append("\n".join([*lines, e.remediation]))
    return "\n\n".join(blocks)
