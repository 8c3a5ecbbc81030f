"""Three models behind three scripted endpoints on 127.0.0.1 whose parties agree more or
less often: the models the comparison tests rank."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from disputelab.llm.models import ModelHub, Profile
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema

# How often each model's parties pick the first option of a topic (else any other option
# at random): B agrees most, then A, then C, whose parties meet only by chance.
AGREEMENT = {"stub-a": 0.75, "stub-b": 0.95, "stub-c": 0.0}
# Five: the fewest scenarios at which the comparison prints intervals (MIN_CLUSTERS).
SCENARIOS = ["tenancy", "workplace", "lab-merger", "school-catchment", "herring-quota"]


def agreeing(p: float) -> Callable[[dict[str, Any]], Scripted]:
    """A party that takes the first option of each topic with probability `p`, else
    another at random, drawn from the request itself, so that a replay gets the same
    reply."""

    def answer(body: dict[str, Any]) -> Scripted:
        schema = requested_schema(body)
        reply = fill(schema)
        rng = random.Random(hashlib.sha256(json.dumps(body["messages"]).encode()).digest())
        topics = schema.get("properties", {}).get("stances", {}).get("properties", {})
        for topic, stance in topics.items():
            options = stance["properties"]["option"]["enum"]
            pick = options[0] if rng.random() < p else rng.choice(options[1:])
            reply["stances"][topic] = {"option": pick, "acceptable": [pick]}
        return Scripted(content=json.dumps(reply))

    return answer


@contextmanager
def three_models(names: Iterable[str] = AGREEMENT) -> Iterator[ModelHub]:
    """A hub that reaches the three models (or those of them named), each at its own
    endpoint, each of which is asked."""
    with ExitStack() as stack:
        servers = {n: stack.enter_context(fake_openai(agreeing(AGREEMENT[n]))) for n in names}
        profiles = {n: Profile(model=n, base_url=s.url) for n, s in servers.items()}
        yield ModelHub(None, profiles, concurrency=8)
        for name, server in servers.items():
            assert {r["model"] for r in server.requests} == {name}  # each its own endpoint
