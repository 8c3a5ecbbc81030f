"""Scenario drafts as the recasting model would return them, for the curation tests."""

from __future__ import annotations

import copy
import json
from typing import Any

# A café owner and her bakery supplier fall out over spoiled deliveries. Each side wants
# the other's worst option on most topics, and both are stubborn: rule parties do not
# settle it alone, but some package clears both fallbacks.
HARD: dict[str, Any] = {
    "title": "Stale bread and an unpaid invoice at the Corner Table café",
    "domain": "business-to-business",
    "background": (
        "Odile Marsh runs the Corner Table café. For two years Brannock Bakery has "
        "delivered her bread each morning. Since spring, three deliveries arrived late or "
        "mouldy, and Odile has stopped paying the last two invoices."
    ),
    "history": "Odile posted a review calling the bakery careless; the owner took it badly.",
    "topics": [
        {
            "code": "REFUND",
            "name": "Spoiled deliveries",
            "description": "",
            "options": ["Full refund and a free week", "Full refund", "Half refund", "No refund"],
        },
        {
            "code": "INVOICES",
            "name": "Unpaid invoices",
            "description": "",
            "options": [
                "Paid in full now",
                "Paid over three months",
                "A quarter written off",
                "Written off entirely",
            ],
        },
        {
            "code": "PRICE",
            "name": "Price from next month",
            "description": "",
            "options": ["Unchanged", "Up 3 percent", "Up 6 percent", "Up 10 percent"],
        },
        {
            "code": "REVIEW",
            "name": "The public review",
            "description": "",
            "options": ["Taken down with an apology", "Taken down", "Left up"],
        },
    ],
    "parties": [
        {
            "name": "Odile Marsh",
            "role": "café owner",
            "objective": "Reliable fresh bread at a fair price and money back for the bad weeks.",
            "fallback": "Switch to a supermarket supplier.",
            "fallback_strength": "moderate",
            "strategy": "compromising",
            "reactivity": "sensitive",
            "traits": ["proud of her café"],
            "private_notes": "No other bakery delivers by 7am.",
            "stances": [
                {
                    "topic": "REFUND",
                    "ranking": ["A", "B", "C"],
                    "unacceptable": ["D"],
                    "weight": 40,
                },
                {
                    "topic": "INVOICES",
                    "ranking": ["D", "C", "B"],
                    "unacceptable": ["A"],
                    "weight": 25,
                },
                {"topic": "PRICE", "ranking": ["A", "B", "C"], "unacceptable": ["D"], "weight": 20},
                {"topic": "REVIEW", "ranking": ["C", "B", "A"], "unacceptable": [], "weight": 15},
            ],
        },
        {
            "name": "Brannock Bakery",
            "role": "supplier",
            "objective": "Get paid, raise prices to cover flour costs, and clear its name.",
            "fallback": "Sue for the invoices and drop the account.",
            "fallback_strength": "moderate",
            "strategy": "competing",
            "reactivity": "sensitive",
            "traits": ["family firm"],
            "private_notes": "The café is its biggest customer.",
            "stances": [
                {
                    "topic": "REFUND",
                    "ranking": ["D", "C", "B"],
                    "unacceptable": ["A"],
                    "weight": 15,
                },
                {
                    "topic": "INVOICES",
                    "ranking": ["A", "B", "C"],
                    "unacceptable": ["D"],
                    "weight": 35,
                },
                {"topic": "PRICE", "ranking": ["D", "C", "B"], "unacceptable": ["A"], "weight": 35},
                {"topic": "REVIEW", "ranking": ["A", "B", "C"], "unacceptable": [], "weight": 15},
            ],
        },
    ],
}


def hard() -> dict[str, Any]:
    return copy.deepcopy(HARD)


def easy() -> dict[str, Any]:
    """Everyone ranks the same options first on every topic, and nobody is touchy."""
    d = hard()
    for party in d["parties"]:
        party["strategy"] = "accommodating"
        party["reactivity"] = "composed"
        for stance, topic in zip(party["stances"], d["topics"], strict=True):
            letters = "ABCD"[: len(topic["options"])]
            stance["ranking"] = list(letters)
            stance["unacceptable"] = []
    return d


def with_unknown_option() -> dict[str, Any]:
    """The supplier's price stance names an option E that the topic does not have."""
    d = hard()
    d["parties"][1]["stances"][2]["ranking"] = ["E", "C", "B"]
    return d


def hopeless() -> dict[str, Any]:
    """Each side finds every option the other can accept on REFUND unacceptable."""
    d = hard()
    d["parties"][0]["stances"][0].update(ranking=["A", "B"], unacceptable=["C", "D"])
    d["parties"][1]["stances"][0].update(ranking=["D", "C"], unacceptable=["A", "B"])
    return d


def text(d: dict[str, Any]) -> str:
    return json.dumps(d)
