"""Random streams of a bilateral episode, each seeded by its task and its episode seed.

A remediator comparison plays many tasks (scenario variants) with the same few seeds.
Seeded by the episode seed alone, every task met the same violation coin, the same
categories and the same buyer noise, so 24 tasks were 4 draws repeated, and a test on
24 task means counted each draw six times. Seeded by task and seed, N tasks are N
independent draws, and two arms of one task and seed still meet the same stream.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from itertools import islice

from disputelab.protocols.bilateral.agents.norms import CATEGORIES, Category


def task_stream(purpose: str, task: str, seed: int, *more: object) -> random.Random:
    """The stream for `purpose` (say "violations") of task `task` at episode `seed`."""
    return random.Random(":".join([purpose, task, str(seed), *(str(m) for m in more)]))


def violation_draws(task: str, seed: int, prob: float) -> Iterator[Category | None]:
    """The seller turns' violation draws of a task and seed, one per seller turn: the
    coin, then the category (drawn whether the coin hit or not, so one turn's outcome
    never shifts the next's); None where the coin missed."""
    coin = task_stream("violations", task, seed)
    while True:
        hit = coin.random() < prob
        category = coin.choice(CATEGORIES)
        yield category if hit else None


def violation_stream(task: str, seed: int, prob: float, turns: int) -> tuple[Category | None, ...]:
    """The first `turns` draws of `violation_draws`: what a comparison counts to show that
    its tasks are independent draws."""
    return tuple(islice(violation_draws(task, seed, prob), turns))
