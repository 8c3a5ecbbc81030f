"""What the cells of every experiment table share, whatever the protocol's layout:

- a mean with the half-width of its 95% CI, clustered by scenario, or "n/a" where there
  is no interval (fewer than two values, or a single scenario): never "± 0.0" for that;
- significance markers from p-values adjusted across all the tests of one table, with a
  footnote naming the adjustment and how many tests it covered;
- how many of the cell's episodes were undefined for the metric, and why, lettered to a
  footnote so that the table stays readable.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping

from disputelab.evaluation.inference import Key, cluster_bootstrap_ci
from disputelab.evaluation.stats import ADJUSTMENTS, Estimate, TestResult, adjust

MARKER_METHOD = "holm"
LETTERS = "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"  # superscript a-z (Unicode has no superscript q)
NOT_SCORED = "not scored"


def estimate(values: Mapping[Key, float]) -> Estimate:
    """Mean and 95% CI of values keyed by (scenario, replicate), resampling scenarios."""
    return cluster_bootstrap_ci(list(values.values()), [k[0] for k in values])


def estimate_text(est: Estimate, mean_format: str = ".1f", half_format: str = "") -> str:
    """ "mean ± half-width"; "mean ± n/a" without an interval; "-" without a mean."""
    if math.isnan(est.mean):
        return "-"
    mean = format(est.mean, mean_format)
    if not est.has_interval:
        return f"{mean} ± n/a"
    return f"{mean} ± {format((est.high - est.low) / 2, half_format or mean_format)}"


def marker(p: float) -> str:
    return "" if math.isnan(p) else "††" if p < 0.01 else "†" if p < 0.05 else ""


class Markers:
    """The significance tests of one table, adjusted together.

    `mark` registers a cell's test and returns a placeholder for its marker; once every
    cell is drawn, `resolve` adjusts the p-values as one family and puts the markers in.
    A test that could not run (NaN p) gets no marker and is not counted.
    """

    def __init__(self, method: str = MARKER_METHOD) -> None:
        self.method = method
        self.tests: list[TestResult] = []

    def mark(self, test: TestResult) -> str:
        if math.isnan(test.p_value):
            return ""
        self.tests.append(test)
        return f"\x00{len(self.tests) - 1}\x00"

    def adjusted(self) -> list[float]:
        return adjust([t.p_value for t in self.tests], self.method)

    def resolve(self, lines: Iterable[str]) -> list[str]:
        marks = [marker(p) for p in self.adjusted()]
        return [re.sub(r"\x00(\d+)\x00", lambda m: marks[int(m.group(1))], x) for x in lines]

    def footnote(self) -> str:
        """Names the adjustment, the size of the family and the tests in it."""
        if not self.tests:
            return "No significance test could be run in this table."
        kinds = Counter(t.test for t in self.tests)
        used = "; ".join(f"{name}: {n}" for name, n in sorted(kinds.items()))
        n = len(self.tests)
        return (
            f"† p < 0.05, †† p < 0.01 after {ADJUSTMENTS[self.method]}'s adjustment across "
            f"the {n} test{'s' if n != 1 else ''} of this table ({used})."
        )


class Undefined:
    """Why episodes were left out of cells: each distinct reason gets a letter, a cell
    gets its counts per letter, and the table's footnote says what each letter means."""

    def __init__(self) -> None:
        self.letters: dict[str, str] = {}

    def _letter(self, reason: str) -> str:
        if reason not in self.letters:
            i = len(self.letters)
            self.letters[reason] = LETTERS[i] if i < len(LETTERS) else f"[{i + 1}]"
        return self.letters[reason]

    def note(self, reasons: Iterable[str]) -> str:
        """ " (3ᵃ+1ᵇ undef.)" for a cell with those undefined episodes, else ""."""
        counts = Counter(reasons)
        if not counts:
            return ""
        parts = [f"{n}{self._letter(r)}" for r, n in sorted(counts.items())]
        return f" ({'+'.join(parts)} undef.)"

    def footnote(self) -> str:
        if not self.letters:
            return ""
        reasons = "; ".join(f"{letter} {r}" for r, letter in self.letters.items())
        return f"Undefined episodes, left out of their cell's mean, CI and test: {reasons}."
