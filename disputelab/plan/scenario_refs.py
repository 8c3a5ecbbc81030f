"""An experiment's scenario refs resolved to scenarios: built-in ids and patterns, ids
imported into the store's library, importer sources, files and globs."""

from __future__ import annotations

import fnmatch
import glob
from pathlib import Path

from disputelab.scenario.datasets import DatasetError, case_files
from disputelab.scenario.importers import FORMATS, read_cases
from disputelab.scenario.importers import case_files as importer_files
from disputelab.scenario.inputs import InputLimitError, glob_paths, path_kind
from disputelab.scenario.io import ScenarioError
from disputelab.scenario.library import (
    builtin_ids,
    builtin_scenario,
    imported_file,
    resolve_scenario,
)
from disputelab.scenario.schema import Scenario

IMPORT_SOURCES = tuple(FORMATS)


def find_scenarios(refs: list[str], base: Path, library_dir: Path | None = None) -> Found:
    """Scenario refs -> scenarios: built-in ids, `builtin:PATTERN`, ids imported into the
    store's library, importer sources (`agentmediation:PATH`, `promediate:PATH`), then
    files and globs (relative to the spec's folder). What cannot be found or read is in
    `problems`, one line each, all of them at once."""
    found = Found()
    case_paths: list[str] = []
    for ref in refs:
        if ref.startswith("agentmediation:") and ref.partition(":")[2].strip():
            try:
                case_paths += _paths(ref.partition(":")[2], base, ("file", "dir"))
            except ValueError:
                continue  # the ref's own resolution reports it
    many = len(set(case_paths)) > 1  # then ids carry the file's name, as on import
    for i, ref in enumerate(refs):
        _resolve_ref(found, i, ref, base, library_dir, many)
    return found


class Found:
    """Scenarios found so far, where each came from, and the problems met."""

    def __init__(self) -> None:
        self.scenarios: dict[str, Scenario] = {}
        self.problems: list[str] = []
        self.origin: dict[str, str] = {}  # scenario id -> where it came from

    def add(self, i: int, origin: str, found: list[Scenario]) -> None:
        for s in found:
            if s.id in self.scenarios and self.scenarios[s.id] == s:
                continue  # the same scenario named twice is harmless
            if s.id in self.origin:
                self.problems.append(
                    f"scenarios[{i}]: scenario id {s.id} also comes from {self.origin[s.id]}; "
                    "ids must be unique across an experiment"
                )
                continue
            self.origin[s.id] = origin
            self.scenarios[s.id] = s


def _resolve_ref(
    found: Found, i: int, ref: str, base: Path, library_dir: Path | None, many: bool
) -> None:
    if ref in builtin_ids():
        found.add(i, ref, [resolve_scenario(ref)])
        return
    if ref.startswith("builtin:"):
        matched = fnmatch.filter(builtin_ids(), ref.removeprefix("builtin:"))
        if not matched:
            found.problems.append(f"scenarios[{i}]: {ref} matches no built-in scenario")
        found.add(i, ref, [builtin_scenario(sid) for sid in matched])
        return
    if "/" not in ref and imported_file(ref, library_dir) is not None:
        found.add(i, ref, [resolve_scenario(ref, library_dir)])
        return
    source, sep, rest = ref.partition(":")
    try:
        if sep and source in IMPORT_SOURCES:
            _resolve_source(found, i, source, rest, base, many)
            return
        paths = _paths(ref, base)
    except (DatasetError, InputLimitError, _NoFiles) as exc:
        found.problems.append(f"scenarios[{i}]: {ref}: {exc}")
        return
    for path in paths:
        try:
            s = resolve_scenario(path)
        except ScenarioError as exc:
            found.problems += [f"scenarios[{i}]: {exc.source}: {x}" for x in exc.problems]
            continue
        found.add(i, path, [s])


def _resolve_source(found: Found, i: int, source: str, rest: str, base: Path, many: bool) -> None:
    """An importer source: `agentmediation:` alone names the fetched dataset (`disputelab
    datasets get`), else files, folders or globs of case files."""
    paths = (
        _paths(rest, base, ("file", "dir"))
        if rest.strip()
        else [str(p) for p in case_files(source)]
    )
    # A folder stands for the case files in it (not ProMediate's topics.json).
    files = [
        str(f)
        for p in paths
        for f in (importer_files(source, Path(p)) if path_kind(p) == "dir" else [Path(p)])
    ]
    for path in files:
        cases, bad = import_source(source, path, many)
        found.add(i, path, cases)
        found.problems += [f"scenarios[{i}]: {b}" for b in bad]


class _NoFiles(ValueError):
    """A glob that matched only what is not a file (devices, FIFOs, folders)."""


def _paths(ref: str, base: Path, kinds: tuple[str, ...] = ("file",)) -> list[str]:
    """The paths a file ref or a glob names, relative to the spec's folder. A glob keeps
    only the paths of `kinds` (regular files; also folders for an importer source), so a
    device or FIFO it reaches (`/dev/*`) is never opened; one that matches nothing stands
    for itself, to be reported as missing. Raises InputLimitError for a glob too broad."""
    pattern = ref if Path(ref).is_absolute() else str(base / ref)
    if not glob.has_magic(pattern):
        return [pattern]  # named outright: reading it says what it is
    matches = glob_paths(pattern)
    kept = [m for m in matches if path_kind(m) in kinds]
    if matches and not kept:
        raise _NoFiles(
            f"matches {len(matches)} path(s) but no regular file (devices, FIFOs and "
            "folders are skipped); point it at scenario files"
        )
    return kept or [pattern]


def import_source(source: str, path: str, many: bool = False) -> tuple[list[Scenario], list[str]]:
    """Scenarios from an importer's file, and one line per record that could not be read.
    With `many` case files in play, AgentMediation ids carry the file's name."""
    found = read_cases(source, Path(path), many)
    return found.scenarios, [
        why if found.failed and source == "agentmediation" else f"{where}: {why}"
        for where, why in found.problems
    ]
