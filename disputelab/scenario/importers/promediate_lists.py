"""A party's restated option list against the case's shared one.

A profile often restates a topic's options before saying how it stands on each ("(b) $100
million is third choice"). Where the restated list disagrees with the shared `options`
(Flagship's upgrade values run $150M/$100M/$80M/$60M in the profiles and
$150M/$120M/$100M/$80M in the shared list), the letter and the words name two different
options. The rule chosen here:

- **Amounts decide.** When the party's words carry amounts ($, million, billion, %) and
  its letter's shared option does not have them, the statement is moved to the one
  shared option that has them; when none has them, the statement names no shared option
  and is dropped; when several have them, the letter is kept. Amounts are what a
  negotiation over money is about, and a letter is only a position in a list.
- **Words are reported, the letter is kept.** When the party's words point to another
  shared option rather than their letter's (they share no word with the letter's label
  but some with another's, or fit wholly in another's label and not in the letter's),
  it is reported and the letter kept: the cases paraphrase labels freely ("All four"
  for "Full kit", "Not a priority" for "Ignore the environment for now"), so words alone
  never move a choice.
- A shared option the party's list left out because of an amount disagreement is ranked
  among the party's ranked options by its amount, when those run monotonically in
  amount (best first, either way); else it is ranked last, as any option never mentioned.

Every disagreement is one note per party and topic, which the importer warns about and
records in the scenario's `assumptions`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise

_AMOUNT = re.compile(
    r"\$\s?(?P<usd>\d+(?:[.,]\d+)*)\s*(?P<scale>million|billion|bn\b|m\b|k\b)?"
    r"|(?P<pct>\d+(?:\.\d+)?)\s?%",
    re.I,
)
_SCALE = {"million": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9, "k": 1e3}
# Counting words the cases prefix restated labels with ('Two – fan and LT').
_COUNTS = frozenset({"one", "two", "three", "four", "five", "six"})

Amount = tuple[str, float]


def amounts(text: str) -> set[Amount]:
    """The amounts written in `text`: ('$', 120000000.0) for "$120 million", ('%', 4.0)."""
    found: set[Amount] = set()
    for m in _AMOUNT.finditer(text):
        if m.group("pct"):
            found.add(("%", float(m.group("pct"))))
            continue
        value = float(m.group("usd").replace(",", ""))
        found.add(("$", value * _SCALE.get((m.group("scale") or "").lower(), 1.0)))
    return found


@dataclass
class Restatement:
    """One option as the party's list restates it: the marker it wrote, the shared option
    that marker names, and the words it gave."""

    marker: str
    letter: str
    said: str


@dataclass
class ListCheck:
    """What comparing one party's restated list with the shared one found: the shared
    option each restated marker is taken as (None: none, dropped), and the notes."""

    moved: dict[str, str | None] = field(default_factory=dict)  # letter -> chosen
    notes: list[str] = field(default_factory=list)
    by_amount: bool = False  # some statement was moved or dropped by its amount

    def note(self) -> str:
        """The whole finding in one line, or '' when the lists agree."""
        return "; ".join(self.notes)


def quoted(text: str) -> str:
    short = " ".join(text.split())
    return f'"{short[:60]}"'


@dataclass(frozen=True)
class SharedList:
    """A topic's shared options as the comparison needs them: labels by id, and the
    words a label is made of (the importer's own reading of words)."""

    labels: dict[str, str]
    words: Callable[[str], set[str]]


def check_restatements(items: list[Restatement], shared: SharedList) -> ListCheck:
    """Compare each restated option with the shared option its marker names (the rule in
    the module docstring)."""
    out = ListCheck()
    labels = shared.labels
    for r in items:
        said = amounts(r.said)
        if said and not said <= amounts(labels[r.letter]):
            _by_amount(r, said, labels, out)
        elif not said and _words_disagree(r, shared):
            out.notes.append(
                f"its ({r.marker}) {quoted(r.said)} reads unlike shared {r.letter} "
                f"{quoted(labels[r.letter])}; kept as {r.letter} by letter"
            )
    return out


def _by_amount(r: Restatement, said: set[Amount], labels: dict[str, str], out: ListCheck) -> None:
    hits = [o for o, label in labels.items() if said <= amounts(label)]
    shared = f"shared {r.letter} is {quoted(labels[r.letter])}"
    if len(hits) == 1:
        out.moved[r.letter] = hits[0]
        out.by_amount = True
        out.notes.append(
            f"its ({r.marker}) {quoted(r.said)} is taken as {hits[0]} by amount ({shared})"
        )
    elif not hits:
        out.moved[r.letter] = None
        out.by_amount = True
        out.notes.append(
            f"its ({r.marker}) {quoted(r.said)} matches no shared option by amount "
            f"({shared}); what it says of it is dropped"
        )
    else:
        out.notes.append(
            f"its ({r.marker}) {quoted(r.said)} disagrees with {shared} and the amount "
            f"fits {', '.join(hits)}; kept as {r.letter} by letter"
        )


def _words_disagree(r: Restatement, shared: SharedList) -> bool:
    """The restated words point to another option rather than their letter's: they share
    no word with the letter's label but some with another's, or all of them are in
    another option's label and not all in the letter's. (Paraphrases that share nothing
    with any label, "Not a priority", are not reported: nothing says which they mean.)"""
    mine = _stems(shared.words(r.said))
    if not mine:
        return False
    bags = {o: _stems(shared.words(label)) for o, label in shared.labels.items()}
    own = bags.pop(r.letter)
    if not mine & own and any(mine & bag for bag in bags.values()):
        return True
    return not mine <= own and any(mine <= bag for bag in bags.values())


def _stems(words: set[str]) -> set[str]:
    """Words cut to their first six letters, so that "auction" meets "auctioning" and
    "environmental" meets "environment"; counting words left out."""
    return {w[:6] for w in words - _COUNTS}


def rank_left_out(
    ranking: list[str], left_out: list[str], labels: dict[str, str]
) -> tuple[list[str], list[str]]:
    """`ranking` with each option of `left_out` placed by its amount, where the ranked
    options' amounts run monotonically (best first, rising or falling), and the options
    that could not be placed so (no single amount, or no monotonic ranking)."""
    ranked = [_single(labels[o]) for o in ranking]
    values = [v for v in ranked if v is not None]
    if len(values) < 2 or len(values) != len(ranked):
        return ranking, left_out
    pairs = list(pairwise(values))
    rising, falling = all(a < b for a, b in pairs), all(a > b for a, b in pairs)
    if not (rising or falling):
        return ranking, left_out
    out, value = list(ranking), dict(zip(ranking, values, strict=True))
    unplaced = []
    for o in left_out:
        v = _single(labels[o])
        if v is None:
            unplaced.append(o)
            continue
        worse = [i for i, x in enumerate(out) if (value[x] > v if rising else value[x] < v)]
        out.insert(worse[0] if worse else len(out), o)
        value[o] = v
    return out, unplaced


def _single(label: str) -> float | None:
    """The one money amount of a label, or None."""
    found = [v for unit, v in amounts(label) if unit == "$"]
    return found[0] if len(found) == 1 else None
