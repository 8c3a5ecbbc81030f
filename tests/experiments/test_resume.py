"""Resuming compares the spec with the one the experiment started with, read back as the
version that stored it played it."""

from __future__ import annotations

from typing import Any

from disputelab.experiments.resume import changed_fields
from disputelab.plan.spec import ExperimentSpec


def _spec(**params: Any) -> ExperimentSpec:
    return ExperimentSpec.model_validate(
        {"name": "x", "scenarios": ["tenancy"], "protocol": "roundtable", "params": params}
    )


def _stored(**params: Any) -> dict[str, Any]:
    """A config as an earlier version stored it: every parameter written out."""
    stored = _spec().model_dump()
    stored["params"] = {**_spec().protocol_params().model_dump(), **params}
    return stored


def test_an_unread_count_of_thoughts_stored_with_cyclic_turns_does_not_block_resume() -> None:
    # Today such a spec is refused, as the count would change nothing; the stored one
    # still compares, and equals the same grid without it.
    old = _stored(thoughts=4, turn_taking="cyclic")
    assert changed_fields(old, _spec()) == []
    assert changed_fields(old, _spec(budget=7)) == ["budget"]


def test_a_count_of_thoughts_stored_with_motivated_turns_is_still_compared() -> None:
    old = _stored(thoughts=4, turn_taking="motivated")
    assert changed_fields(old, _spec(turn_taking="motivated", thoughts=4)) == []
    assert changed_fields(old, _spec(turn_taking="motivated")) == ["thoughts"]


def test_a_parameter_stored_at_the_top_level_is_compared_as_a_parameter() -> None:
    old = {**_spec().model_dump(), "params": {"disclosure": "negotiator"}, "budget": 30}
    assert changed_fields(old, _spec(budget=30)) == []
    assert changed_fields(old, _spec()) == ["budget"]
