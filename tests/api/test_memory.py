"""`disputelab.api.memory`: the settlement counsel's reflection memory in a store."""

from __future__ import annotations

from pathlib import Path

from disputelab.api import memory
from disputelab.protocols.settlement import MemoryEntry, MemoryFile

ENTRY = MemoryEntry(
    "R", "plaintiff", "early/wide", "concede little early", {}, 0.5, "case-a", ("amount",)
)


def test_a_store_without_memory_has_nothing_to_show_or_reset(tmp_path: Path) -> None:
    snapshot = memory.reflection_memory(tmp_path)
    assert snapshot.counts == {} and snapshot.latest == []
    assert snapshot.path == memory.memory_path(tmp_path)
    assert memory.reset_memory(tmp_path) == 0


def test_reflection_memory_counts_by_kind_and_side_and_lists_the_latest(tmp_path: Path) -> None:
    MemoryFile(tmp_path).add([ENTRY, ENTRY, ENTRY])
    snapshot = memory.reflection_memory(tmp_path, last=2)
    assert snapshot.counts == {"R/plaintiff": 3} and snapshot.latest == [ENTRY, ENTRY]
    assert memory.MEMORY_KINDS["R"] == "rules"
    assert memory.reflection_memory(tmp_path, last=0).latest == []


def test_reset_memory_forgets_every_entry(tmp_path: Path) -> None:
    MemoryFile(tmp_path).add([ENTRY, ENTRY])
    assert memory.reset_memory(tmp_path) == 2
    assert memory.reflection_memory(tmp_path).counts == {}


def test_a_memory_file_that_is_no_database_is_one_error(tmp_path: Path) -> None:
    memory.memory_path(tmp_path).write_text("not sqlite")
    try:
        memory.reflection_memory(tmp_path)
    except memory.ReflectionMemoryError as exc:
        assert str(exc).startswith(f"cannot read the memory at {memory.memory_path(tmp_path)}")
    else:
        raise AssertionError("a damaged memory file read as empty")
