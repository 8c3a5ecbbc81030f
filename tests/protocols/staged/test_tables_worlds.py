"""The paper-layout tables of a staged run on a worlds axis: one per world, never an
empty one for a bare mediator the cells do not hold."""

from __future__ import annotations

from disputelab.protocols.staged.tables import cell_mediators


def test_each_mediator_has_a_column_per_world() -> None:
    config = {"mediators": ["rule"], "worlds": ["shipped", "mirrored"]}
    assert cell_mediators(config) == ["rule~shipped", "rule~mirrored"]
    assert cell_mediators({"mediators": ["rule", "llm"]}) == ["rule", "llm"]
    assert cell_mediators({}) == ["rule"]
