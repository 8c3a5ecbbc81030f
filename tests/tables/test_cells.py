"""What every report table's cells share: n/a for a cell without an interval, markers
adjusted across the table's tests, and undefined episodes counted with their reason."""

from __future__ import annotations

import math

from disputelab.evaluation.averaging import reason_of
from disputelab.evaluation.stats import Estimate
from disputelab.evaluation.stats import TestResult as Result
from disputelab.tables.cells import Markers, Undefined, estimate, estimate_text


def _test(p: float) -> Result:
    return Result(0.0, p, "Wilcoxon signed-rank on scenario means", 10)


def test_a_cell_of_one_value_shows_n_a_not_a_zero_width_interval() -> None:
    text = estimate_text(estimate({("tenancy", 0): 42.0}))
    assert text == "42.0 ± n/a (1 cluster)"


def test_a_cell_of_one_scenario_shows_n_a_however_many_replicates() -> None:
    text = estimate_text(estimate({("tenancy", r): float(r) for r in range(7)}))
    assert text == "3.0 ± n/a (1 cluster)"


def test_a_cell_with_an_interval_shows_its_half_width_and_an_empty_cell_a_dash() -> None:
    assert estimate_text(Estimate(10.0, 8.0, 13.0, 5, "x", 5)) == "10.0 ± 2.5"
    assert estimate_text(Estimate(0.5, 0.4, 0.6, 5, "x", 5), ".4f") == "0.5000 ± 0.1000"
    assert estimate_text(estimate({("a", 0): math.nan})) == "-"


def test_markers_come_from_holm_adjusted_p_values_across_the_table() -> None:
    marks = Markers()
    # Raw p 0.01, 0.04, 0.03: each < 0.05 alone; Holm makes them 0.03, 0.06, 0.06.
    cells = [f"cell {i}{marks.mark(_test(p))}" for i, p in enumerate((0.01, 0.04, 0.03))]
    assert marks.resolve(cells) == ["cell 0†", "cell 1", "cell 2"]
    note = marks.footnote()
    assert "Holm's adjustment across the 3 tests of this table" in note
    assert "Wilcoxon signed-rank on scenario means: 3" in note


def test_a_double_dagger_needs_an_adjusted_p_below_one_percent() -> None:
    marks = Markers()
    cells = [marks.mark(_test(0.004)), marks.mark(_test(0.001))]
    # Holm: 0.001 x 2 = 0.002 and max(0.004 x 1, 0.002) = 0.004, both below 0.01.
    assert marks.resolve(cells) == ["††", "††"]
    marks = Markers()
    cells = [marks.mark(_test(0.006)), marks.mark(_test(0.001)), marks.mark(_test(0.9))]
    # Holm: 0.001 x 3 = 0.003, 0.006 x 2 = 0.012, 0.9: so one †† and one †.
    assert marks.resolve(cells) == ["†", "††", ""]


def test_a_test_that_could_not_run_gets_no_marker_and_is_not_counted() -> None:
    marks = Markers()
    assert marks.mark(_test(math.nan)) == ""
    assert marks.footnote() == "No significance test could be run in this table."
    marks.mark(_test(0.01))
    assert "the 1 test of this table" in marks.footnote()


def test_the_benjamini_hochberg_footnote_names_its_method() -> None:
    marks = Markers("fdr_bh")
    cells = [marks.mark(_test(p)) for p in (0.01, 0.04, 0.03)]
    assert marks.resolve(cells) == ["†", "†", "†"]  # BH: 0.03, 0.04, 0.04
    assert "Benjamini-Hochberg's adjustment" in marks.footnote()


def test_undefined_episodes_are_counted_per_cell_and_explained_once() -> None:
    undefined = Undefined()
    a = undefined.note(["no drop events of at least tau = 0.1"] * 3 + ["no interventions"])
    b = undefined.note(["no interventions"])
    assert a == " (3ᵃ+1ᵇ undef.)" and b == " (1ᵇ undef.)" and undefined.note([]) == ""
    assert undefined.footnote() == (
        "Undefined episodes, left out of their cell's mean, CI and test: "
        "ᵃ no drop events of at least tau = 0.1; ᵇ no interventions."
    )


def test_the_reason_drops_the_prefix_and_the_numbers_that_vary_by_episode() -> None:
    assert (
        reason_of(
            "undefined: no drop events of at least tau = 0.1, so there was nothing to respond to."
        )
        == "no drop events of at least tau = 0.1"
    )
    assert reason_of(
        "undefined: all 3 intervention(s) were skipped because the base consensus was already 1"
    ) == reason_of(
        "undefined: all 5 intervention(s) were skipped because the base consensus was already 1"
    )
