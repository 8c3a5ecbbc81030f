"""docs/behaviour.md carries the behaviour table as the code has it."""

from __future__ import annotations

from pathlib import Path

from disputelab.scenario.behaviour import parameters_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs" / "behaviour.md"


def test_the_documented_table_is_the_code_s_table() -> None:
    assert parameters_markdown() in DOCS.read_text(encoding="utf-8"), (
        "docs/behaviour.md is stale: paste disputelab.scenario.behaviour.parameters_markdown()"
    )
