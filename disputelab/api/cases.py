"""Scenario files: check one, and import external cases (ProMediate, AgentMediation,
SoCRATES) into scenario files.

    from disputelab.api import cases

    checked = cases.validate_scenario_file("my-case.yaml")   # ScenarioError if invalid
    files = cases.case_files("agentmediation", Path("cases.jsonl"))
    for imported in cases.import_cases("agentmediation", files, Path("library")):
        print(imported.saved, imported.problems)

An import never overwrites a scenario file edited since an import wrote it (unless told
to), and says per file what it saved, kept, skipped and assumed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from disputelab import atomic
from disputelab.errors import DisputelabError
from disputelab.scenario.checks import unsettlable
from disputelab.scenario.import_record import RECORD_NAME, ImportRecord
from disputelab.scenario.importers import FORMATS, ONE_CASE_PER_FILE, read_cases
from disputelab.scenario.importers import case_files as files_of
from disputelab.scenario.inputs import path_kind, read_user_file
from disputelab.scenario.io import dump_scenario, load_scenario, load_yaml
from disputelab.scenario.schema import Scenario

if TYPE_CHECKING:
    from disputelab.llm.models import ModelHub
    from disputelab.scenario.importers.promediate import ModelReading, UnreadPreference

__all__ = [
    "IMPORT_FORMATS",
    "RECORD_NAME",
    "CaseImportError",
    "CheckedScenario",
    "ImportedFile",
    "NotAScenarioError",
    "case_files",
    "import_cases",
    "read_opinions",
    "reads_with_model",
    "unread_opinions",
    "validate_scenario_file",
]

IMPORT_FORMATS = tuple(FORMATS)
# Formats whose opinions a model may read where the rules cannot (ProMediate's briefs).
_MODEL_READ = ("promediate",)
Readings = dict[tuple[str, str], "ModelReading"]


class CaseImportError(DisputelabError, ValueError):
    """External cases that cannot be imported at all: an unknown format, a path that is
    not there, a folder without case files."""


class NotAScenarioError(DisputelabError, ValueError):
    """A file given as a scenario that is an experiment spec (a `scenarios` list, no
    `parties`): the spec's own check is the one to run on it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"{path}: an experiment spec, not a scenario")


@dataclass(frozen=True)
class CheckedScenario:
    """A scenario file that loads, with why no run of it could settle (if any reason)."""

    path: Path
    scenario: Scenario
    warnings: list[str]


def _looks_like_a_spec(path: Path) -> bool:
    """A YAML mapping with a spec's `scenarios` list and no scenario `parties`."""
    import yaml

    try:
        data = load_yaml(read_user_file(path))
    except (ValueError, yaml.YAMLError):
        return False  # load_scenario will say what is wrong
    return isinstance(data, dict) and "scenarios" in data and "parties" not in data


def validate_scenario_file(path: str | Path) -> CheckedScenario:
    """Check one scenario file. ScenarioError lists every problem of a file that does not
    load; NotAScenarioError when the file is an experiment spec."""
    path = Path(path)
    if _looks_like_a_spec(path):
        raise NotAScenarioError(path)
    scenario = load_scenario(path)
    return CheckedScenario(path, scenario, unsettlable(scenario))


# ---- import -----------------------------------------------------------------------------


def reads_with_model(source: str) -> bool:
    """Whether a model can read what the rules cannot in cases of format `source`."""
    return source in _MODEL_READ


def case_files(source: str, path: str | Path) -> list[Path]:
    """The case files of format `source` at `path`: the file itself, or those in the
    folder (a clone of the dataset's repository will do). CaseImportError for an unknown
    format, a path that is not there, or a folder with no case files."""
    path = Path(path)
    if source not in FORMATS:
        raise CaseImportError(f"unknown format {source!r}; available: {', '.join(FORMATS)}")
    if path_kind(path) == "missing":
        raise CaseImportError(f"{path}: no such file or folder")
    files = files_of(source, path)
    if not files:
        raise CaseImportError(f"{path}: no {source} case files in this folder")
    return files


def unread_opinions(files: Sequence[Path]) -> list[tuple[Path, UnreadPreference]]:
    """Every ProMediate opinion in `files` that the rules cannot read, with its file:
    what `read_opinions` asks a model."""
    unread = {f: read_cases("promediate", f, lenient=True).unread for f in files}
    return [(f, u) for f, us in unread.items() for u in us]


async def read_opinions(
    unread: Sequence[tuple[Path, UnreadPreference]], hub: ModelHub, model: str
) -> dict[Path, Readings]:
    """A model's readings of `unread` (see `unread_opinions`), asked at once within the
    model's limits; per file, keyed by (party, topic id), for `import_cases`."""
    from disputelab.authoring.preference_reader import read_all

    if not unread:
        return {}
    results = await read_all(hub.model(model, "reader"), [u for _, u in unread])
    out: dict[Path, Readings] = {}
    for (f, _), r in zip(unread, results, strict=True):
        out.setdefault(f, {})[(r.party, r.topic_id)] = r
    return out


@dataclass
class ImportedFile:
    """What importing one case file did.

    `saved` are the scenario files written; `kept` those left as they were because they
    were edited since an import wrote them (or no import wrote them); `clashes` the
    scenario ids already imported from another file in this import, with that file;
    `problems` the records that could not be read, as (where, why); `failed` says the
    file as a whole could not be read. `stale` are files an earlier import wrote under
    line-number ids and someone edited since: kept, with the import record mapping each
    old id to the case's id now.
    """

    path: Path
    one_case_per_file: bool
    saved: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    clashes: list[tuple[str, Path]] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    stale: list[Path] = field(default_factory=list)
    failed: bool = False

    @property
    def faults(self) -> int:
        """How many things went wrong: 1 for a file that failed, else its unread records
        and id clashes."""
        return 1 if self.failed else len(self.problems) + len(self.clashes)


def import_cases(
    source: str,
    files: Sequence[Path],
    target: Path,
    *,
    lenient: bool = False,
    readings: Mapping[Path, Mapping[tuple[str, str], Any]] | None = None,
    model: str = "",
    overwrite: bool = False,
) -> Iterator[ImportedFile]:
    """Import each of `files` (format `source`) into scenario files in the folder
    `target`, one file at a time, yielding what each did. `lenient` imports a ProMediate
    preference the rules cannot read with an assumed ranking; `readings` are a model's
    (`read_opinions`, by `model`); `overwrite` replaces files edited since."""
    written: dict[str, Path] = {}  # scenario id -> the file it came from, in this import
    for f in files:
        found = read_cases(source, f, len(files) > 1, lenient, (readings or {}).get(f), model)
        done = ImportedFile(f, source in ONE_CASE_PER_FILE)
        record = ImportRecord(target)
        for s in found.scenarios:
            if s.id in written:
                done.clashes.append((s.id, written[s.id]))
                continue
            written[s.id] = f
            _save(s, target / f"{s.id}.yaml", record, overwrite, done)
        # Map the line-number ids an earlier import used to the ids now, removing the
        # old files an import wrote and nobody edited.
        positional = found.positional.items()
        done.stale = [p for o, (n, t) in positional if (p := record.retire(o, n, t))]
        if done.saved or found.positional:
            record.save()
        done.problems, done.warnings, done.failed = found.problems, found.warnings, found.failed
        yield done


def _save(
    scenario: Scenario, path: Path, record: ImportRecord, overwrite: bool, done: ImportedFile
) -> None:
    text = dump_scenario(scenario, "yaml")
    if not overwrite and not record.may_write(path, text):
        done.kept.append(path)  # edited since it was imported, or not an import's: keep it
        return
    atomic.write_text(path, text)
    record.wrote(path, text)
    done.saved.append(path)
