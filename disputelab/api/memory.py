"""The settlement counsel's reflection memory (the settlement protocol's own tool): rules,
experience and case cards that persist in the store's folder across episodes and
experiments, under the protocol parameter `memory: store`.

    from disputelab.api import memory

    snapshot = memory.reflection_memory("disputelab-runs", last=3)
    print(snapshot.counts)          # {"R/claimant": 4, "E/respondent": 2, ...}
    memory.reset_memory("disputelab-runs")
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from disputelab.errors import DisputelabError
from disputelab.protocols import settlement

__all__ = [
    "MEMORY_KINDS",
    "MemorySnapshot",
    "ReflectionMemoryError",
    "memory_path",
    "reflection_memory",
    "reset_memory",
]

# An entry's kind as stored, and what it is.
MEMORY_KINDS = {"R": "rules", "E": "experience", "C": "case cards"}


class ReflectionMemoryError(DisputelabError):
    """The memory's database cannot be read or changed."""


@dataclass(frozen=True)
class MemorySnapshot:
    """The memory as it stands: entries counted per `KIND/side`, and the latest ones."""

    path: Path
    counts: dict[str, int]
    latest: list[settlement.MemoryEntry]


def _file(store: str | os.PathLike[str] | None) -> settlement.MemoryFile:
    from disputelab.api import store_path

    return settlement.MemoryFile(store_path(store))


def memory_path(store: str | os.PathLike[str] | None = None) -> Path:
    """The memory's own SQLite file, beside the store's database."""
    return _file(store).path


def reflection_memory(store: str | os.PathLike[str] | None = None, last: int = 5) -> MemorySnapshot:
    """The entries per kind (R rules, E experience, C case cards) and side, and the
    `last` entries written."""
    memory = _file(store)
    try:
        counts = memory.counts()
        latest = memory.load()[-last:] if last else []
    except sqlite3.DatabaseError as exc:
        raise ReflectionMemoryError(f"cannot read the memory at {memory.path}: {exc}") from None
    return MemorySnapshot(memory.path, counts, latest)


def reset_memory(store: str | os.PathLike[str] | None = None) -> int:
    """Forget every entry; returns how many there were."""
    memory = _file(store)
    try:
        return memory.reset()
    except sqlite3.DatabaseError as exc:
        raise ReflectionMemoryError(f"cannot reset the memory at {memory.path}: {exc}") from None
