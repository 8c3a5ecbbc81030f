"""What the cells of every experiment table share, whatever the protocol's layout:

- a mean with the half-width of its 95% CI, clustered by scenario (the cluster t
  interval), or "n/a (k clusters)" where there are too few scenarios for that interval
  to reach its stated coverage (`inference.MIN_CLUSTERS`, chosen from the simulation in
  `tables.coverage`): never "± 0.0" for that;
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

from disputelab.evaluation.inference import MIN_CLUSTERS, Key, cluster_ci
from disputelab.evaluation.stats import ADJUSTMENTS, Estimate, TestResult, adjust

MARKER_METHOD = "holm"
LETTERS = "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"  # superscript a-z (Unicode has no superscript q)
NOT_SCORED = "not scored"
CI_NOTE = (
    "mean ± half-width of the 95% cluster-robust t interval over scenarios (Student's t "
    f"with k - 1 degrees of freedom for k scenarios; n/a below {MIN_CLUSTERS} scenarios, "
    "where a coverage simulation shows no interval reaching 95%)"
)
"""How every table's caption describes its cells' intervals."""


def estimate(values: Mapping[Key, float]) -> Estimate:
    """Mean and 95% CI of values keyed by (scenario, replicate), clustered by scenario."""
    return cluster_ci(list(values.values()), [k[0] for k in values])


def _clusters(k: int) -> str:
    return f"{k} cluster{'s' if k != 1 else ''}"


def estimate_text(est: Estimate, mean_format: str = ".1f", half_format: str = "") -> str:
    """ "mean ± half-width"; "mean ± n/a (k clusters)" without an interval; "-" without a
    mean."""
    if math.isnan(est.mean):
        return "-"
    mean = format(est.mean, mean_format)
    if not est.has_interval:
        return f"{mean} ± n/a ({_clusters(est.clusters)})"
    return f"{mean} ± {format((est.high - est.low) / 2, half_format or mean_format)}"


def difference_text(est: Estimate, number_format: str = "+.3f") -> str:
    """A difference with its CI: "+0.120 [+0.050, +0.190]", the bracket saying n/a with
    too few clusters for an interval; "-" without a difference."""
    if math.isnan(est.mean):
        return "-"
    mean = format(est.mean, number_format)
    if not est.has_interval:
        return f"{mean} [n/a ({_clusters(est.clusters)})]"
    return f"{mean} [{format(est.low, number_format)}, {format(est.high, number_format)}]"


def marker(p: float, symbol: str = "†") -> str:
    return "" if math.isnan(p) else 2 * symbol if p < 0.01 else symbol if p < 0.05 else ""


AGAINST_REFERENCE, AGAINST_UNMEDIATED = "†", "‡"
"""Marker symbols: a cell against the table's reference row, a mediated cell against the
same condition without a mediator."""


class Markers:
    """The significance tests of one table, adjusted together.

    `mark` registers a cell's test and returns a placeholder for its marker; once every
    cell is drawn, `resolve` adjusts the p-values as one family and puts the markers in.
    A test that could not run (NaN p) gets no marker and is not counted.
    """

    def __init__(self, method: str = MARKER_METHOD) -> None:
        self.method = method
        self.tests: list[TestResult] = []
        self.symbols: list[str] = []

    def mark(self, test: TestResult, symbol: str = AGAINST_REFERENCE) -> str:
        if math.isnan(test.p_value):
            return ""
        self.tests.append(test)
        self.symbols.append(symbol)
        return f"\x00{len(self.tests) - 1}\x00"

    def adjusted(self) -> list[float]:
        return adjust([t.p_value for t in self.tests], self.method)

    def resolve(self, lines: Iterable[str]) -> list[str]:
        marks = [marker(p, s) for p, s in zip(self.adjusted(), self.symbols, strict=True)]
        return [re.sub(r"\x00(\d+)\x00", lambda m: marks[int(m.group(1))], x) for x in lines]

    def footnote(self) -> str:
        """Names the adjustment, the size of the family and the tests in it."""
        if not self.tests:
            return "No significance test could be run in this table."
        kinds = Counter(t.test for t in self.tests)
        used = "; ".join(f"{name}: {n}" for name, n in sorted(kinds.items()))
        n = len(self.tests)
        symbols = "† against the reference row"
        if AGAINST_UNMEDIATED in self.symbols:
            symbols += ", ‡ mediated against the same condition without a mediator"
        return (
            f"{symbols}: one mark p < 0.05, two p < 0.01, after "
            f"{ADJUSTMENTS[self.method]}'s adjustment across the {n} "
            f"test{'s' if n != 1 else ''} of this table, one family ({used})."
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
