"""The template library of the rule recaster: our own words for roles, topics and domains.

Every entry here is written for disputelab; none is taken from a paper or a dataset. The
rule recaster (`rules.py`) reads a seed with these lists and fills in from them what the
seed does not say, recording which was which in the scenario's `assumptions`.

Sides. A party is on the claimant side (the one bringing the complaint), the respondent
side (the one the complaint is against) or is an authority (a council, agency or
regulator with a say in the outcome but no stake in one side winning). A topic's options
run from what the claimant asks for (first) to what the respondent would do unprompted
(last), so the two sides' rankings are the two directions of one list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Side = Literal["claimant", "respondent", "authority"]
SIDES: tuple[Side, ...] = ("claimant", "respondent", "authority")
LIBRARY_VERSION = "1"


@dataclass(frozen=True)
class TopicTemplate:
    """One negotiable topic: the words that call it up and its options, claimant's first.

    `amount_options` replace `options` when the seed states a sum of money; `{amount}`,
    `{three_quarters}` and `{half}` are filled from the largest sum it states. `weights`
    is how much the topic matters, before the seed says more, to each side (1-5).
    """

    code: str
    name: str
    # Word beginnings, lower case ("compensat" finds "compensation"); one ending in `$`
    # is a whole word ("sue$" finds "sue", not "suede").
    keywords: tuple[str, ...]
    options: tuple[str, ...]
    weights: dict[Side, int]
    charged: bool = False  # about blame, apology or standing: no option is unacceptable
    amount_options: tuple[str, ...] | None = None


TOPICS: tuple[TopicTemplate, ...] = (
    TopicTemplate(
        "COMPENSATION",
        "Compensation for losses",
        ("compensat", "refund", "damages", "losses", "lost", "reimburs", "deposit"),
        (
            "Full compensation for the losses claimed",
            "Three quarters of the losses claimed",
            "Half of the losses claimed",
            "No compensation",
        ),
        {"claimant": 5, "respondent": 4, "authority": 2},
        amount_options=("{amount} in full", "{three_quarters}", "{half}", "Nothing"),
    ),
    TopicTemplate(
        "UNPAID",
        "Money withheld or owed",
        ("unpaid", "stopped paying", "owed", "arrears", "invoice", "fees", "overdue"),
        (
            "Written off entirely",
            "Half written off, the rest paid over six months",
            "Paid in full over six months",
            "Paid in full at once",
        ),
        {"claimant": 3, "respondent": 5, "authority": 1},
        amount_options=(
            "The {amount} written off",
            "{half} written off, the rest paid over six months",
            "The {amount} paid over six months",
            "The {amount} paid at once",
        ),
    ),
    TopicTemplate(
        "SERVICE",
        "The service under threat",
        ("clos", "replacement", "service", "withdraw", "shut", "cancel", "relocat"),
        (
            "The service kept as it is",
            "A replacement in place before any change",
            "A reduced service for a year",
            "The change goes ahead as announced",
        ),
        {"claimant": 5, "respondent": 4, "authority": 3},
    ),
    TopicTemplate(
        "REMEDY",
        "Putting the fault right",
        ("fix", "repair", "upgrade", "defect", "faulty", "failed", "promised", "treatment"),
        (
            "A full fix at the respondent's cost, on a fixed date",
            "A full fix with the cost shared",
            "A partial fix, the rest reviewed in a year",
            "No further work",
        ),
        {"claimant": 4, "respondent": 3, "authority": 2},
    ),
    TopicTemplate(
        "OVERSIGHT",
        "Independent oversight",
        ("monitor", "inspect", "audit", "oversight", "independent"),
        (
            "An independent monitor who can halt the work",
            "An independent monitor who reports in public",
            "The respondent's own reports, checked once a year",
            "No oversight",
        ),
        {"claimant": 3, "respondent": 2, "authority": 4},
    ),
    TopicTemplate(
        "JOBS",
        "Jobs and working hours",
        ("job", "shifts", "employ", "redundan", "layoff", "lay off", "staff", "workers"),
        (
            "Every job and shift kept",
            "Jobs kept by moving staff to other work",
            "Voluntary redundancies only",
            "Cuts as the employer sees fit",
        ),
        {"claimant": 3, "respondent": 3, "authority": 3},
    ),
    TopicTemplate(
        "CONTRACT",
        "The contract from here on",
        ("contract", "licence", "license", "lease", "terminat", "switch", "competitor"),
        (
            "Ended now, with no penalty",
            "Ended early after three months' notice",
            "Kept, on revised terms",
            "Kept as signed",
        ),
        {"claimant": 3, "respondent": 4, "authority": 1},
    ),
    TopicTemplate(
        "PRICE",
        "Price from now on",
        ("price", "charge", "tariff", "cost of", "rate"),
        ("Cut by 10 percent", "Unchanged", "Up 5 percent", "Up 10 percent"),
        {"claimant": 3, "respondent": 4, "authority": 1},
    ),
    TopicTemplate(
        "APOLOGY",
        "Acknowledgement and apology",
        (
            "apolog",
            "mock",
            "shout",
            "bad review",
            "insult",
            "blame",
            "accus",
            "attack",
            "misled",
            "mislead",
            "reputation",
            "humiliat",
            "died",
            "death",
        ),
        (
            "A public apology and a correction of the record",
            "A private apology",
            "A statement of regret without blame",
            "No apology",
        ),
        {"claimant": 4, "respondent": 2, "authority": 1},
        charged=True,
    ),
)


@dataclass(frozen=True)
class RoleWord:
    """A word that names a party (`word` as a whole word, its plural too) and its side;
    None when the word does not tell (a firm may complain or be complained about)."""

    word: str
    side: Side | None


ROLE_WORDS: tuple[RoleWord, ...] = (
    *(
        RoleWord(w, "respondent")
        for w in (
            "trust",
            "mill",
            "vendor",
            "supplier",
            "landlord",
            "employer",
            "factory",
            "developer",
            "contractor",
            "operator",
            "insurer",
            "manufacturer",
            "retailer",
            "seller",
            "management",
            "plant",
        )
    ),
    *(
        RoleWord(w, "claimant")
        for w in (
            "group",
            "cooperative",
            "union",
            "tenant",
            "residents",
            "customer",
            "buyer",
            "family",
            "association",
            "campaigners",
            "neighbour",
            "employees",
            "parents",
        )
    ),
    *(
        RoleWord(w, "authority")
        for w in ("council", "agency", "regulator", "ministry", "government", "ombudsman")
    ),
    *(RoleWord(w, None) for w in ("firm", "company", "business", "partner", "school")),
)


@dataclass(frozen=True)
class SideTemplate:
    """What the library assumes of a side the seed does not describe."""

    stand_in: str  # the name of a party the seed does not name
    fallback: str
    fallback_strength: Literal["weak", "moderate", "strong"]
    strategy: Literal["competing", "collaborating", "compromising", "avoiding", "accommodating"]
    reactivity: Literal["composed", "sensitive", "reactive"]


SIDE_TEMPLATES: dict[Side, SideTemplate] = {
    "claimant": SideTemplate(
        "The complaining party",
        "Take the complaint to a court or a regulator.",
        "moderate",
        "compromising",
        "sensitive",
    ),
    "respondent": SideTemplate(
        "The other party",
        "Carry on as planned and defend any claim.",
        "moderate",
        "compromising",
        "sensitive",
    ),
    "authority": SideTemplate(
        "The public authority",
        "Impose a decision of its own, which pleases no one.",
        "weak",
        "collaborating",
        "composed",
    ),
}

# Words that say a party is in open conflict when its sentence holds them: it is then
# played as competing and reactive. Words that say the sides already agree in the main,
# when no conflict word is in the seed, make every party rank the middle options first.
CONFLICT_WORDS: tuple[str, ...] = (
    "refus",
    "accus",
    "mock",
    "attack",
    "blame",
    "stopped paying",
    "warn",
    "threat",
    "pushing",
    "insist",
    "demand",
    "furious",
    "sue$",
    "court",
    "fear",
    "protest",
    "petition",
    "signatures",
    "angry",
    "anger",
)
ACCORD_WORDS: tuple[str, ...] = (
    "agree$",
    "agrees$",
    "agreed$",
    "amicabl",
    "friendly",
    "happy to",
    "willing",
    "open to",
    "good terms",
)

# Which domain a seed is in, by the words it uses most; the codes of the topics a seed
# of that domain is given when it calls up fewer than two of its own.
DOMAIN_WORDS: dict[str, tuple[str, ...]] = {
    "transactional": ("buyer", "seller", "purchase", "refund", "shop", "order", "deposit"),
    "healthcare": ("health", "clinic", "hospital", "patient", "doctor", "nurse", "ambulance"),
    "environmental": ("river", "pollut", "emission", "waste", "fish", "water", "spill"),
    "business-to-business": ("supplier", "vendor", "licence", "logistics", "software", "firm"),
    "public-policy": ("council", "residents", "policy", "public", "bus", "planning", "town"),
    "international": ("border", "treaty", "countr", "national", "quota", "embassy"),
    "legal": ("court", "lawsuit", "inherit", "boundary", "lawyer", "judge", "solicitor"),
    "intra-organisational": ("team", "department", "colleague", "workplace", "promotion"),
}
DOMAIN_TOPICS: dict[str, tuple[str, ...]] = {
    "transactional": ("COMPENSATION", "APOLOGY"),
    "healthcare": ("SERVICE", "APOLOGY"),
    "environmental": ("COMPENSATION", "OVERSIGHT"),
    "business-to-business": ("UNPAID", "CONTRACT"),
    "public-policy": ("SERVICE", "OVERSIGHT"),
    "international": ("OVERSIGHT", "COMPENSATION"),
    "legal": ("COMPENSATION", "APOLOGY"),
    "intra-organisational": ("JOBS", "APOLOGY"),
    "general": ("COMPENSATION", "APOLOGY"),
}


def topic_template(code: str) -> TopicTemplate:
    """The library's topic of this code."""
    return next(t for t in TOPICS if t.code == code)
