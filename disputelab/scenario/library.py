"""The built-in scenario library shipped inside the package, and scenario lookup."""

from __future__ import annotations

import difflib
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from disputelab.scenario.import_record import ImportRecord
from disputelab.scenario.inputs import path_kind
from disputelab.scenario.io import ScenarioError, load_scenario, parse_scenario_text
from disputelab.scenario.schema import Scenario


@cache
def _library_files() -> dict[str, Traversable]:
    """The library's files by scenario id, listed once per process."""
    root = resources.files("disputelab.scenarios")
    return {
        entry.name.rsplit(".", 1)[0]: entry
        for entry in root.iterdir()
        if entry.name.endswith(".yaml")
    }


@cache
def builtin_ids() -> tuple[str, ...]:
    """The built-in scenarios' ids, sorted (each file is named after its scenario's id)."""
    return tuple(sorted(_library_files()))


@cache
def builtin_scenario(sid: str) -> Scenario:
    """One built-in scenario, parsed once per process, and only when asked for: parsing
    all of them was a quarter of a second of every command that named one. KeyError for
    an id that is not built in."""
    if sid not in builtin_ids():
        raise KeyError(sid)
    text = _library_files()[sid].read_text(encoding="utf-8")
    scenario = parse_scenario_text(text, f"builtin:{sid}", "yaml")
    if scenario.id != sid:  # the library's own test keeps this from shipping
        raise ValueError(f"built-in scenario file {sid}.yaml holds id {scenario.id}")
    return scenario


def builtin_scenarios() -> dict[str, Scenario]:
    """All built-in scenarios by id."""
    return {sid: builtin_scenario(sid) for sid in builtin_ids()}


def imported_file(ref: str, library_dir: Path | None) -> Path | None:
    """The scenario file imported into `library_dir` as `ref`, or under the id the import
    record says a case once imported as `ref` has now (AgentMediation's old line-number
    ids); None when there is none."""
    if library_dir is None:
        return None
    for sid in (ref, ImportRecord(library_dir).current_id(ref)):
        if sid and path_kind(library_dir / f"{sid}.yaml") == "file":
            return library_dir / f"{sid}.yaml"
    return None


def resolve_scenario(ref: str, library_dir: Path | None = None) -> Scenario:
    """A built-in id, an id imported into `library_dir` (the store's library), or a path
    to a scenario file."""
    if not ref.strip():
        raise ScenarioError("scenario", ["empty; give a built-in id, an imported one or a file"])
    if ref in builtin_ids():
        return builtin_scenario(ref).model_copy(deep=True)
    imported = imported_file(ref, library_dir) if "/" not in ref else None
    if imported is not None:
        return load_scenario(imported)
    path = Path(ref)
    # Whatever is at the path (a device or a name too long included), loading says what.
    if path_kind(path) != "missing" or path.suffix.lower() in (".yaml", ".yml", ".json"):
        return load_scenario(path)
    kinds = (
        f"a built-in scenario, a scenario imported into {library_dir}, or a file"
        if library_dir is not None
        else "a built-in scenario or a file"
    )
    known = list(builtin_ids())
    if library_dir is not None and path_kind(library_dir) == "dir":
        known += [p.stem for p in library_dir.glob("*.yaml")]
    near = difflib.get_close_matches(ref, known, n=1)
    hint = f"did you mean {near[0]}? " if near else ""
    # Too many to read on one line: the nearest id, and where the whole list is.
    listed = f"`disputelab scenarios list` shows the {len(builtin_ids())} built-ins"
    raise ScenarioError(ref, [f"not {kinds}; {hint}{listed}"])
