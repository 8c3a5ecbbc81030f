"""Every random process of a bilateral task is seeded by the task and the episode seed:
N tasks at one seed are N independent draws, and the protocol meets the violations its
stream says, so a comparison can count them."""

from __future__ import annotations

import asyncio

from disputelab.protocols.bilateral.agents.market import Market
from disputelab.protocols.bilateral.protocol import VIOLATION
from disputelab.protocols.bilateral.remediation.simulate import Cast, Method, play_once
from disputelab.protocols.bilateral.remediation.tasks import tasks
from disputelab.protocols.bilateral.seeding import task_stream, violation_stream


def test_n_tasks_at_one_seed_draw_n_distinct_violation_streams() -> None:
    held_out = tasks(8, start=500)
    streams = {violation_stream(t.id, 900_000, 0.3, 10) for t in held_out}
    assert len(held_out) == 24 and len(streams) == 24


def test_one_task_and_seed_always_draws_the_same_stream_and_other_seeds_differ() -> None:
    assert violation_stream("t", 1, 0.5, 10) == violation_stream("t", 1, 0.5, 10)
    assert len({violation_stream("t", s, 0.5, 10) for s in range(20)}) == 20
    assert task_stream("a", "t", 1).random() != task_stream("b", "t", 1).random()


def test_the_protocol_meets_the_violations_its_stream_draws() -> None:
    task = tasks(1)[0]
    seed = 7
    episode = asyncio.run(
        play_once(task, seed, Method("none", "none"), Cast(params={"violation_prob": 0.6}))
    )
    seller = Market.of(task).seller
    said = [t for t in episode.turns if t.speaker == seller]
    stream = violation_stream(task.id, seed, 0.6, len(said))
    labels = [next((x for x in t.stage.split() if x.startswith(VIOLATION)), None) for t in said]
    # The opening is exempt; after it, a seller turn is labelled exactly where the stream hit.
    assert labels[0] is None
    expected = [None if c is None else VIOLATION + c for c in stream[1:]]
    assert labels[1:] == expected
    assert any(labels)
