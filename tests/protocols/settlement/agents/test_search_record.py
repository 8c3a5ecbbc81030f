"""A planning turn's search record: written into the thought, read back unchanged; a
thought without one is not a record, and a damaged one is an error."""

from __future__ import annotations

import pytest

from disputelab.protocols.settlement.agents.search_record import (
    RootStat,
    SearchRecord,
    read_record,
)

RECORD = SearchRecord(1, (RootStat("curve", 5, 0.5), RootStat("step x2", 9, 0.75)), 3, 4, 64, 1.0)


def test_a_record_survives_the_thought_it_is_written_into() -> None:
    thought = RECORD.thought()
    assert thought.splitlines()[0].startswith("plan: step x2; curve Q=0.500 n=5")
    assert read_record(thought) == RECORD


def test_the_one_line_form_marks_the_candidate_played_and_the_ties() -> None:
    line = RECORD.line()
    assert "*step x2 n=9 Q=0.750" in line and "ties broken 3" in line
    assert "depth 4, 64 simulations" in line


def test_a_thought_without_a_record_is_none_and_a_damaged_one_fails() -> None:
    assert read_record("accept-next: their offer beats ours") is None
    assert read_record('{"intent": "anchor"}') is None  # a red-team tag set
    with pytest.raises(ValueError, match="does not parse"):
        read_record('plan: curve; curve Q=0.5 n=1\nsearch: {"chosen": 0}')
