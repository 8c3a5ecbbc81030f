"""The remediator's exemplars (the bilateral protocol's own tools): a candidate pool of
violations with silver remediations, sets chosen from it by value impact, and the
comparison of selection methods on held-out dialogues. Pools and sets are JSON files
under `<store>/exemplars/`.

    from disputelab.api import exemplars, open_models

    hub = open_models([])
    pool = await exemplars.generate_pool_async("pool", 40, 0, hub=hub)
    exemplars.save_exemplars(pool, exemplars.new_exemplar_file("pool"))
    chosen = await exemplars.select_exemplars_async(pool, "vi", 0, hub=hub)
    real = exemplars.import_exemplars("sadas", "all_icl_example.json", "sadas").pool
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from disputelab.errors import DisputelabError
from disputelab.plan.cast import RULE
from disputelab.protocols import bilateral

if TYPE_CHECKING:
    from disputelab.llm.models import ModelHub

__all__ = [
    "BUILTIN",
    "IMPORT_SOURCES",
    "ExemplarError",
    "ExemplarFile",
    "ExemplarSummary",
    "ExemplarsExistError",
    "ImportedPool",
    "check_exemplar_name",
    "compare_async",
    "comparison_markdown",
    "exemplar_folder",
    "generate_pool_async",
    "import_exemplars",
    "load_exemplars",
    "new_exemplar_file",
    "retrieval_vectors",
    "save_exemplars",
    "saved_exemplars",
    "select_exemplars_async",
]

BUILTIN = bilateral.BUILTIN  # the offline pool shipped with the package
ExemplarFile = bilateral.ExemplarFile
ImportedPool = bilateral.ImportedPool
IMPORT_SOURCES = bilateral.IMPORT_SOURCES  # formats `import_exemplars` reads
StoreLike = str | os.PathLike[str] | None
# The arms the value-impact set is tested against, in the comparison's notes.
BASELINES = ("random ICL", "retrieval ICL", "zero-shot")


class ExemplarError(DisputelabError, ValueError):
    """A pool or set that cannot be found, read or named so."""


class ExemplarsExistError(ExemplarError):
    """A set or pool saved already under the name a new one would take."""

    def __init__(self, name: str, path: Path) -> None:
        self.name, self.path = name, path
        super().__init__(f"exemplars {name!r} are saved already ({path})")


def exemplar_folder(store: StoreLike = None) -> Path:
    """The folder of a store's saved pools and sets."""
    from disputelab.api import store_path

    return bilateral.exemplar_dir(store_path(store))


def check_exemplar_name(name: str) -> str:
    """`name`, when a pool or set may be saved under it."""
    if not bilateral.NAME.match(name) or name == BUILTIN:
        raise ExemplarError(
            f"name {name[:80]!r}: use letters, digits, '.', '_' or '-' (and not {BUILTIN!r})"
        )
    return name


def new_exemplar_file(name: str, overwrite: bool = False, store: StoreLike = None) -> Path:
    """Where a set or pool saved as `name` goes; ExemplarsExistError (before anything is
    simulated) when one is saved there already and `overwrite` is not set."""
    path = exemplar_folder(store) / f"{check_exemplar_name(name)}.json"
    if path.exists() and not overwrite:
        raise ExemplarsExistError(name, path)
    return path


def load_exemplars(ref: str, store: StoreLike = None) -> bilateral.ExemplarFile:
    """The pool or set `ref` names: `builtin`, a name saved in the store, or a .json
    file; ExemplarError with one line when there is none."""
    from disputelab.api import store_path

    local = exemplar_folder(store) / f"{ref}.json"
    named = str(local) if bilateral.NAME.match(ref) and local.is_file() else ref
    try:
        return bilateral.resolve_exemplars(named, store_path(store))
    except ValueError as exc:
        raise ExemplarError(str(exc)) from None


def import_exemplars(
    source: str, path: str | os.PathLike[str], name: str, *, lenient: bool = False
) -> bilateral.ImportedPool:
    """A pool named `name` from an external file of format `source` (`sadas`: the
    remediator paper's released exemplar list or rewrite-pair CSV), each exemplar's
    category and style inferred from its text and marked so. ExemplarError with one line
    for a file that cannot be read, or, unless `lenient`, a record that cannot (named);
    `lenient` skips such records, each in the result's warnings and the pool's meta.
    Saving it is the caller's (`new_exemplar_file`, `save_exemplars`)."""
    from disputelab.scenario.inputs import UserFileError

    check_exemplar_name(name)
    try:
        return bilateral.import_pool(source, Path(path), name, lenient)
    except UserFileError as exc:  # says what is wrong without the path
        raise ExemplarError(f"{exc.path}: {exc}") from None
    except (OSError, ValueError) as exc:  # SadasError included
        raise ExemplarError(str(exc).splitlines()[0]) from None


def save_exemplars(file: bilateral.ExemplarFile, path: Path) -> Path:
    """Write a pool or set as JSON (atomically: a reader never sees half a file)."""
    return bilateral.save_exemplars(file, path)


@dataclass(frozen=True)
class ExemplarSummary:
    """A saved pool or set and how it was made; `problem` says why one does not read."""

    name: str
    kind: str  # pool, set, or unreadable
    size: int
    method: str = ""  # how it was chosen, or who wrote the silver remediations
    value_impact: float | None = None
    problem: str = ""


def saved_exemplars(store: StoreLike = None) -> list[ExemplarSummary]:
    """The store's saved pools and sets, by file name."""
    folder = exemplar_folder(store)
    found = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            f = bilateral.resolve_exemplars(str(path))
        except ValueError as exc:
            found.append(ExemplarSummary(path.stem, "unreadable", 0, problem=str(exc)))
            continue
        how = f.meta.get("method", "") or f.meta.get("silver", "")
        vi = f.meta.get("value_impact")
        impact = vi if isinstance(vi, float) else None
        found.append(ExemplarSummary(f.name, f.kind, len(f.exemplars), str(how), impact))
    return found


def _cast(hub: ModelHub, model: str, params: dict[str, Any]) -> bilateral.Cast:
    """Parties, remediator and moderator all played by `model` (offline with `rule`)."""
    if model == RULE:
        return bilateral.Cast(None, None, None, params)
    roles = ("parties", "mediator", "moderator")
    parties, remediator, moderator = (hub.model(model, role) for role in roles)
    return bilateral.Cast(parties, remediator, moderator, params)


async def generate_pool_async(
    name: str,
    size: int = 80,
    seed: int = 0,
    *,
    hub: ModelHub,
    model: str = RULE,
    max_rounds: int = 10,
) -> bilateral.ExemplarFile:
    """Simulate dialogues of at most `max_rounds` rounds and keep `size` of their
    violations, each with a silver remediation (`model`'s zero-shot rewrite, or a
    template one offline), as the pool `name`."""
    cast = _cast(hub, model, {"max_rounds": max_rounds})
    return await bilateral.generate_pool(name, size, seed, cast)


async def select_exemplars_async(
    pool: bilateral.ExemplarFile,
    name: str,
    seed: int = 0,
    *,
    hub: ModelHub,
    model: str = RULE,
    judge_model: str | None = None,
    k: int = 8,
    candidates: int = 50,
    rollouts: int = 20,
    patience: int = 2,
    budget: int = 120,
) -> bilateral.ExemplarFile:
    """Choose `k` exemplars of `pool` by value impact: `candidates` drawn from it ranked
    alone on `rollouts` dialogues (stage 1), then sets searched with `patience` within
    `budget` set valuations (stage 2); trust and relationship are judged by `judge_model`
    (else read from the rule buyer's state). Saved as the set `name` by the caller."""
    sizes = bilateral.Budget(k, candidates, rollouts, patience, budget)
    judges = [hub.model(judge_model, "judge")] if judge_model else []
    cast = _cast(hub, model, {})
    return await bilateral.select_exemplars(pool, name, seed, cast, sizes, judges)


async def compare_async(
    chosen: bilateral.ExemplarFile,
    pool: bilateral.ExemplarFile,
    *,
    hub: ModelHub,
    tasks: int = 8,
    replicates: int = 4,
    seed: int = 0,
    lexical: bool = False,
    model: str = RULE,
    against: Sequence[bilateral.ExemplarFile] = (),
) -> bilateral.Comparison:
    """Play every selection method (no remediator, zero-shot, random and retrieval ICL
    from `pool`, the stage-1 top set, the sets `against`, and `chosen`) on the same
    `tasks` held-out dialogues per topic, `replicates` seeds each; retrieval ranks by
    lexical vectors with `lexical`, else by sentence embeddings where they are
    installed. `against` holds other saved sets, such as one selected from another pool,
    to weigh `chosen` against on the same dialogues."""
    k = len(chosen.exemplars)
    arms = bilateral.selection_methods(pool, chosen, k, not lexical, against)
    return await bilateral.compare(arms, _cast(hub, model, {}), tasks, replicates, seed)


def comparison_markdown(result: bilateral.Comparison) -> str:
    """The comparison as a markdown table (reward with its CI per method), then the value
    impact set's paired differences from the baselines and any other sets played."""
    others = [m for m in result.scores if m.startswith("set ")]
    return bilateral.comparison_markdown(result, [*others, *BASELINES])


def retrieval_vectors(lexical: bool) -> tuple[str, str | None]:
    """The vectors retrieval ICL ranks a pool by (`lexical`, or the sentence model's
    kind), and, where sentence embeddings were wanted but the pool is ranked lexically,
    why they are not there (None when nothing says)."""
    from disputelab.llm.embedding import Embedder, embedding_available

    kind = Embedder(semantic=not lexical).kind
    missing = embedding_available() if kind == "lexical" and not lexical else None
    return kind, missing
