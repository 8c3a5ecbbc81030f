"""Exemplar pools from the remediator paper's released data (`scenario.importers.sadas`).

Each readable record becomes one exemplar: the dialogue before the violating line as its
history, the violating sentence, and the rewrite as its remediation; its category and
style are inferred from its text (`labels`) and marked so. Records repeated word for word
(the released rewrite-pair file repeats most) become one exemplar that names every
record it came from. Nothing is left out unsaid: a record that cannot be read fails the
import, naming it, unless `lenient`, which skips it with a warning and records it in the
pool's `meta`; what a readable record's import read past is a warning and a note on its
exemplar.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from disputelab.protocols.bilateral.agents.exemplars import Exemplar, ExemplarFile
from disputelab.protocols.bilateral.agents.labels import RULE, infer
from disputelab.scenario.importers.sadas import SadasError, SadasFile, SadasRecord, read_sadas
from disputelab.scenario.importers.sadas_scenarios import setting_of

SOURCES = ("sadas",)


@dataclass
class ImportedPool:
    """A pool made from a file, what the import warned about, and the labels' counts."""

    pool: ExemplarFile
    warnings: list[str] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (record, why)

    def label_counts(self) -> dict[str, dict[str, int]]:
        """How many exemplars got each inferred category and style ("" is none)."""
        return {
            "category": dict(Counter(e.category or "(none)" for e in self.pool.exemplars)),
            "style": dict(Counter(e.style for e in self.pool.exemplars)),
        }


def import_pool(source: str, path: Path, name: str, lenient: bool = False) -> ImportedPool:
    """The pool `name` from the file at `path` in format `source` (only `sadas`).
    ValueError with one line for a file that cannot be read, or, unless `lenient`, for
    the first record that cannot be (naming it)."""
    if source not in SOURCES:
        raise ValueError(f"unknown exemplar format {source!r}; available: {', '.join(SOURCES)}")
    try:
        found = read_sadas(path)
    except SadasError as exc:
        raise ValueError(f"{path}: {exc}") from None
    if found.problems and not lenient:
        number, why = found.problems[0]
        more = len(found.problems) - 1
        raise ValueError(
            f"{path}: record {number}: {why}"
            + (f" ({more} more records cannot be read)" if more else "")
            + "; give `lenient` to skip such records (each is warned and recorded)"
        )
    if not found.records:
        raise ValueError(f"{path}: no record could be read")
    out = ImportedPool(ExemplarFile(name, "pool", ()), skipped=list(found.problems))
    out.warnings += [f"record {n}: cannot be read ({why}); skipped" for n, why in found.problems]
    exemplars, merged = _exemplars(found.records, path.name, out.warnings)
    out.pool = ExemplarFile(name, "pool", tuple(exemplars), _meta(found, exemplars, merged))
    return out


def _key(r: SadasRecord) -> tuple[object, ...]:
    return (tuple((ln.speaker, ln.text) for ln in r.history), r.violation, r.remediation)


def _exemplars(
    records: list[SadasRecord], file: str, warnings: list[str]
) -> tuple[list[Exemplar], int]:
    """One exemplar per distinct record, in file order, and how many repeats merged."""
    first: dict[tuple[object, ...], list[SadasRecord]] = {}
    for r in records:
        first.setdefault(_key(r), []).append(r)
        warnings += [f"record {r.number}: {note}" for note in r.notes]
    out = []
    for same in first.values():
        r = same[0]
        numbers = ", ".join(str(x.number) for x in same[:20]) + (" ..." if len(same) > 20 else "")
        labels = infer(r.violation, r.remediation)
        setting, _ = setting_of(r)
        out.append(
            Exemplar(
                id=f"sadas-{r.number:05d}",
                scenario_id=setting.scenario_id() if setting else "",
                category=labels.category,
                history=tuple(f"{ln.speaker}: {ln.text}" for ln in r.history),
                violation=r.violation,
                remediation=r.remediation,
                style=labels.style,
                inferred=True,
                label_source=labels.source,
                origin=f"{file} record{'s' if len(same) > 1 else ''} {numbers}",
                notes=tuple(r.notes),
            )
        )
    merged = len(records) - len(out)
    if merged:
        warnings.append(
            f"{merged} record(s) repeat an earlier one word for word: one exemplar each, "
            "naming every record it came from"
        )
    return out, merged


def _meta(found: SadasFile, exemplars: list[Exemplar], merged: int) -> dict[str, object]:
    return {
        "source": "sadas",
        "file": str(found.path),
        "format": found.kind,
        "records": len(found.records) + len(found.problems),
        "exemplars": len(exemplars),
        "repeats_merged": merged,
        "skipped_records": [n for n, _ in found.problems],
        "silver": "the released rewrites",
        "labels": f"inferred by rule {RULE} (category from the violation, style from "
        "what the remediation adds)",
    }
