"""The reflection memory persists in the store directory across banks (episodes and
experiments), and `disputelab memory reset` forgets it."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.protocols.settlement.agents.memory import Entry, MemoryBank, MemoryFile

ENTRY = Entry(
    "E",
    "plaintiff",
    "early/wide",
    "early stage: concede little",
    {"concession": 0.05, "good": "yes"},
    0.8,
    "case-a",
    ("amount",),
)


def test_entries_flushed_by_one_bank_are_loaded_by_the_next(tmp_path: Path) -> None:
    first = MemoryBank([], MemoryFile(tmp_path))
    first.add([ENTRY])
    assert MemoryFile(tmp_path).load() == []  # nothing written before the flush
    assert first.flush() == 1
    again = MemoryBank(MemoryFile(tmp_path).load(), MemoryFile(tmp_path))
    assert again.entries == [ENTRY]
    assert MemoryFile(tmp_path).counts() == {"E/plaintiff": 1}


def test_reset_forgets_everything(tmp_path: Path) -> None:
    MemoryFile(tmp_path).add([ENTRY, ENTRY])
    assert MemoryFile(tmp_path).reset() == 2
    assert MemoryFile(tmp_path).load() == []
    assert MemoryFile(tmp_path / "nowhere").reset() == 0


def test_the_memory_command_shows_and_resets(tmp_path: Path) -> None:
    MemoryFile(tmp_path).add([ENTRY])
    runner = CliRunner()
    shown = runner.invoke(app, ["--store", str(tmp_path), "memory", "show"])
    assert shown.exit_code == 0, shown.output
    assert "experience (plaintiff): 1" in shown.output
    reset = runner.invoke(app, ["--store", str(tmp_path), "memory", "reset"])
    assert reset.exit_code == 0 and "1 entries removed" in reset.output
    empty = runner.invoke(app, ["--store", str(tmp_path), "memory", "show"])
    assert "no reflection memory" in empty.output
