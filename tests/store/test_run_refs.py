"""How a command names a run: its id, a unique prefix of it, its label, or `last`. A
prefix is text, compared exactly: not a pattern, and not folded to one case."""

from __future__ import annotations

from pathlib import Path

import pytest

from disputelab.store.sqlite import Store, StoreError


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store(tmp_path)
    s.create_run("experiment", run_id="grid_a")
    s.create_run("experiment", run_id="gridXa-long")
    s.create_run("run", label="pilot", run_id="20261128-101010-abcdef")
    return s


@pytest.mark.parametrize(
    ("ref", "run_id"),
    [
        ("grid_a", "grid_a"),  # an exact id
        ("grid_", "grid_a"),  # `_` is itself, not any one character (gridXa-long)
        ("gridX", "gridXa-long"),
        ("2026", "20261128-101010-abcdef"),
        ("pilot", "20261128-101010-abcdef"),  # a label
    ],
)
def test_a_run_is_found_by_id_prefix_or_label(store: Store, ref: str, run_id: str) -> None:
    assert store.resolve_run(ref) == run_id


@pytest.mark.parametrize("ref", ["GRID", "g%", "grid%"])
def test_a_prefix_is_neither_a_pattern_nor_case_folded(store: Store, ref: str) -> None:
    with pytest.raises(StoreError, match="no run"):
        store.resolve_run(ref)


def test_a_prefix_of_several_runs_is_ambiguous_and_names_them(store: Store) -> None:
    with pytest.raises(StoreError, match="ambiguous: gridXa-long, grid_a"):
        store.resolve_run("grid")
