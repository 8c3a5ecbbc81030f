"""Near-duplicate seeds: two accounts of one dispute should make one scenario, not two.

Two seeds are near-duplicates when the Jaccard similarity of their sets of word
three-grams (lower-cased runs of letters and digits, in any script) reaches a threshold.
Changing a word here and there keeps most three-grams (a copy of an example seed with
three figures changed scores 0.87); accounts of different disputes share almost none
(the example seeds score below 0.01 with one another).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SHINGLE_WORDS = 3
DEFAULT_SIMILARITY = 0.5  # a tenth of the words changed still scores about 0.6
_WORD = re.compile(r"[^\W_]+")  # letters and digits, of any script


def shingles(text: str, size: int = SHINGLE_WORDS) -> frozenset[tuple[str, ...]]:
    """The set of `size`-word runs of `text`; a text shorter than that is one run."""
    words = _WORD.findall(text.lower())
    if len(words) <= size:
        return frozenset({tuple(words)}) if words else frozenset()
    return frozenset(tuple(words[i : i + size]) for i in range(len(words) - size + 1))


def jaccard(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    """|a & b| / |a | b|, and 0 for two empty sets (nothing to call the same)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


@dataclass
class NearDuplicates:
    """The texts seen so far; `match` names the first earlier one a new text repeats."""

    threshold: float = DEFAULT_SIMILARITY
    _seen: list[tuple[str, frozenset[tuple[str, ...]]]] = field(default_factory=list)

    def match(self, key: str, text: str) -> tuple[str, float] | None:
        """The key and similarity of the first earlier text `text` nearly repeats, or
        None (and `text` is remembered under `key`)."""
        mine = shingles(text)
        for other, theirs in self._seen:
            score = jaccard(mine, theirs)
            if score >= self.threshold:
                return other, score
        self._seen.append((key, mine))
        return None
