"""Social-norm violations: the five categories of the remediator paper's Table 4, the
phrases rule agents speak them with, and the reader that hears them again in a text.

Every phrase below is ours. Offline, a violation is a phrase from one category's bank;
its severity is a named assumption (`SEVERITY`), not a measurement. A rule listener
reads offence and warmth off the words it actually receives (`read_tone`), never off a
label, so a remediation only helps when it changes the words.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Literal

Category = Literal["dismissive", "self-serving", "insulting", "culture", "dishonest"]
CATEGORIES: tuple[Category, ...] = (
    "dismissive",
    "self-serving",
    "insulting",
    "culture",
    "dishonest",
)

# What each category is, in the words a prompt and a report use (paper Table 4, ours).
DESCRIPTIONS: dict[Category, str] = {
    "dismissive": "brushing aside the other side's goals and needs",
    "self-serving": "putting one's own gain first and ignoring what the other side needs",
    "insulting": "insulting, belittling or discriminatory language",
    "culture": "disregarding the other side's culture, customs and values",
    "dishonest": "lying, bluffing about facts, or pressure through deceit",
}

# ASSUMPTION: how much one harsh phrase of each category offends a rule listener of
# sensitivity 1 (0-1). Insults hurt most; self-serving talk least.
SEVERITY: dict[Category, float] = {
    "insulting": 1.0,
    "dismissive": 0.7,
    "culture": 0.7,
    "dishonest": 0.6,
    "self-serving": 0.5,
}

Intensity = Literal["harsh", "mild", "curt"]
# ASSUMPTION: a softened phrase keeps this share of the category's severity.
INTENSITY_SHARE: dict[Intensity, float] = {"harsh": 1.0, "mild": 0.5, "curt": 0.2}

PHRASES: dict[Category, dict[Intensity, tuple[str, ...]]] = {
    "dismissive": {
        "harsh": (
            "Frankly, what you need is not my problem.",
            "Your targets mean nothing to me.",
        ),
        "mild": ("That is really your concern, not ours.",),
        "curt": ("Let us stick to our side of it.",),
    },
    "self-serving": {
        "harsh": (
            "All I care about is what this deal puts in my pocket.",
            "My profit is the only thing on the table here.",
        ),
        "mild": ("Our margin has to come first here.",),
        "curt": ("We have our margin to protect.",),
    },
    "insulting": {
        "harsh": (
            "Only an amateur would make an offer that feeble.",
            "Are you serious, or simply clueless about prices?",
        ),
        "mild": ("That offer is a little naive.",),
        "curt": ("That offer misses the mark.",),
    },
    "culture": {
        "harsh": (
            "Spare me your polite customs; we do business my way.",
            "Your way of doing business is a waste of my time.",
        ),
        "mild": ("I have little patience for your way of doing things.",),
        "curt": ("Let us do this the direct way.",),
    },
    "dishonest": {
        "harsh": (
            "Three other buyers are begging me for it at twice that, believe me.",
            "Everyone else already pays far more, and that is a fact.",
        ),
        "mild": ("Others would surely pay more, trust me.",),
        "curt": ("There is other interest in this.",),
    },
}

Warmth = Literal["apology", "respect", "empathy", "partnership"]
# ASSUMPTION: how much each relational phrase warms a rule listener (0-1).
WARMTH: dict[Warmth, float] = {
    "apology": 0.3,
    "respect": 0.3,
    "empathy": 0.6,
    "partnership": 0.9,
}
WARM_PHRASES: dict[Warmth, str] = {
    "apology": "I am sorry, I put that badly.",
    "respect": "I appreciate you being straight with me.",
    "empathy": "I understand you have a budget to keep to, and I respect that.",
    "partnership": (
        "We would value a long-term partnership with you, and we are open to other ways "
        "of working together."
    ),
}


@dataclass(frozen=True)
class Tone:
    """What a listener hears in a text: offence per category and relational warmth."""

    offence: dict[str, float]
    warmth: float

    @property
    def total_offence(self) -> float:
        return sum(self.offence.values())

    @property
    def worst(self) -> str | None:
        """The category that offends most, if any does."""
        return max(self.offence, key=lambda c: self.offence[c]) if self.offence else None


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower())


_OFFENCE_LEXICON: dict[str, tuple[Category, float]] = {
    _normal(p): (c, SEVERITY[c] * INTENSITY_SHARE[i])
    for c, banks in PHRASES.items()
    for i, bank in banks.items()
    for p in bank
}
_WARM_LEXICON: dict[str, float] = {_normal(p): WARMTH[w] for w, p in WARM_PHRASES.items()}


def read_tone(text: str) -> Tone:
    """Offence and warmth of the phrases of our banks found in `text`."""
    low = _normal(text)
    offence: dict[str, float] = {}
    for phrase, (category, weight) in _OFFENCE_LEXICON.items():
        if phrase in low:
            offence[category] = offence.get(category, 0.0) + weight
    warmth = sum(w for phrase, w in _WARM_LEXICON.items() if phrase in low)
    return Tone(offence, warmth)


def violation_phrase(category: Category, rng: random.Random, intensity: Intensity = "harsh") -> str:
    """One phrase that breaks the norm of `category` at `intensity`."""
    return rng.choice(PHRASES[category][intensity])


def strip_phrases(text: str) -> str:
    """`text` without any offending phrase of our banks (case-insensitive)."""
    out = text
    for banks in PHRASES.values():
        for bank in banks.values():
            for phrase in bank:
                out = re.sub(re.escape(phrase), "", out, flags=re.IGNORECASE)
    return re.sub(r"\s{2,}", " ", out).strip()
