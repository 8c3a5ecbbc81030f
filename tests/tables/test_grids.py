"""Grid columns: which is a mediator's unmediated twin, in a plain run and on a worlds
axis."""

from __future__ import annotations


def test_in_a_worlds_run_the_twin_is_the_unmediated_column_of_the_same_world() -> None:
    from disputelab.tables.grids import twin_of, unmediated

    assert twin_of("rule") == "none" and twin_of("rule~mirrored") == "none~mirrored"
    assert unmediated("none") and unmediated("none~neutral")
    assert not unmediated("rule~neutral") and not unmediated("nonesuch")
