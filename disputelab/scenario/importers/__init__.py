"""Importers: external case formats into Scenarios.

`read_cases` is the one entry point `scenarios import` and the experiment spec's
`agentmediation:`, `promediate:`, `socrates:` and `sadas:` sources share: it reads one case file
and says, line by line, what could not be read and what was assumed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from disputelab.scenario.inputs import path_kind
from disputelab.scenario.io import describe_validation_error
from disputelab.scenario.schema import Scenario

# Format name -> the glob of its case files inside a folder.
FORMATS = {
    "promediate": "*.json",
    "agentmediation": "*.jsonl",
    "socrates": "*.json",
    "sadas": "*.json",
}
# Formats whose files each hold one case (the others hold one case per line).
ONE_CASE_PER_FILE = ("promediate", "socrates")


@dataclass
class CaseFile:
    """What one case file gave: scenarios, problems (`where`, reason) and warnings."""

    scenarios: list[Scenario] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    failed: bool = False  # the file as a whole could not be read
    # ProMediate opinions the rules could not read (`UnreadPreference`), for a model.
    unread: list[Any] = field(default_factory=list)
    # AgentMediation: the line-number id each case had before ids came from the case ->
    # (its id now, its title).
    positional: dict[str, tuple[str, str]] = field(default_factory=dict)


def read_cases(
    source: str,
    path: Path,
    many: bool = False,
    lenient: bool = False,
    readings: Mapping[tuple[str, str], Any] | None = None,
    model_name: str = "",
) -> CaseFile:
    """Scenarios from one case file of format `source`. With `many` AgentMediation files in
    play, ids carry the file's name (am-FILE-1a2b3c4d) so they cannot clash. For ProMediate,
    `lenient` imports a preference the rules cannot read with an assumed ranking, and
    `readings` holds a model's readings of those (see `promediate.import_promediate`)."""
    if source not in FORMATS:
        raise ValueError(f"unknown format {source!r}; available: {', '.join(FORMATS)}")
    if source == "agentmediation":
        from disputelab.scenario.importers.agentmediation import (
            AgentMediationError,
            id_prefix,
            import_agentmediation,
        )

        try:
            result = import_agentmediation(path, id_prefix(path, many))
        except AgentMediationError as exc:
            return CaseFile(problems=[(str(path), str(exc))], failed=True)
        titles = {s.id: s.title for s in result.scenarios}
        return CaseFile(
            list(result.scenarios),
            [(f"{path}:{line}", why) for line, why in result.problems],
            list(result.warnings),
            positional={old: (new, titles[new]) for old, new in result.positional.items()},
        )
    if source == "socrates":
        return _read_socrates(path)
    if source == "sadas":
        return _read_sadas(path, many)
    from disputelab.scenario.importers.promediate import import_promediate_file

    try:
        found = import_promediate_file(path, lenient, readings, model_name)
    except ValidationError as exc:  # a party or topic the schema refuses (a name too long)
        problem = f"{exc.title}: {describe_validation_error(exc)[0]}"
        return CaseFile(problems=[(str(path), problem)], failed=True)
    except (OSError, ValueError) as exc:  # JSONDecodeError and UserFileError included
        return CaseFile(problems=[(str(path), str(exc).splitlines()[0])], failed=True)
    return CaseFile([found.scenario], [], list(found.warnings), unread=list(found.unread))


def case_files(source: str, path: Path) -> list[Path]:
    """The case files of `source` at `path`: the file itself, or those in the folder. A
    clone of ProMediate's repository keeps its cases in `cases/`: its root will do."""
    if path_kind(path) != "dir":
        return [path]
    if source == "agentmediation":  # also a clone of its repository: data/case_back.json
        from disputelab.scenario.importers.agentmediation import case_files as agentmediation

        return agentmediation(path)
    if source == "sadas":
        return _sadas_files(path)
    if source == "promediate" and (path / "cases").is_dir():
        path = path / "cases"
    # ProMediate keeps its topic names in a topics.json beside the cases: not a case.
    return sorted(p for p in path.glob(FORMATS[source]) if p.name != "topics.json")


def _read_socrates(path: Path) -> CaseFile:
    """One released SoCRATES scenario file (see `importers.socrates`)."""
    from disputelab.scenario.importers.socrates import import_socrates_file

    try:
        found = import_socrates_file(path)
    except ValidationError as exc:
        problem = f"{exc.title}: {describe_validation_error(exc)[0]}"
        return CaseFile(problems=[(str(path), problem)], failed=True)
    except (OSError, ValueError) as exc:  # SocratesError and JSONDecodeError included
        return CaseFile(problems=[(str(path), str(exc).splitlines()[0])], failed=True)
    return CaseFile([found], [], [])


def _sadas_files(folder: Path) -> list[Path]:
    """The SADAS files of a folder, or of a clone's `data/` folder: its JSON lists and
    CSVs."""
    if (folder / "data").is_dir():
        folder = folder / "data"
    return sorted(p for p in folder.iterdir() if p.suffix in (".json", ".csv") and p.is_file())


def _read_sadas(path: Path, many: bool) -> CaseFile:
    """The negotiation settings of one SADAS file (see `importers.sadas_scenarios`); with
    several files in one import, ids carry the file's name."""
    from disputelab.scenario.importers.sadas import read_sadas
    from disputelab.scenario.importers.sadas_scenarios import group_settings, scenario_of

    try:
        found = read_sadas(path)
    except (OSError, ValueError) as exc:  # SadasError and UserFileError included
        return CaseFile(problems=[(str(path), str(exc).splitlines()[0])], failed=True)
    settings, skipped = group_settings(found.records)
    prefix = "sadas-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", path.stem)[:80] if many else "sadas"
    out = CaseFile()
    out.problems = [(f"{path}: record {n}", why) for n, why in found.problems]
    for s in settings:
        try:
            out.scenarios.append(scenario_of(s, path.name, prefix))
        except ValidationError as exc:  # a value the schema refuses (a name too long)
            first = s.records[0].number
            out.problems.append((f"{path}: record {first}", describe_validation_error(exc)[0]))
    out.warnings = [f"record {n}: {note}" for r in found.records for n, note in _notes(r)]
    out.warnings += [f"record {n}: {why}; no scenario from it" for n, why in skipped]
    return out


def _notes(record: Any) -> list[tuple[int, str]]:
    return [(record.number, note) for note in record.notes]
