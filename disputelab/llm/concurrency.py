"""Concurrency inside an episode: a step's independent calls go out together.

A protocol step often makes calls that do not depend on each other: each party's verdict
on the same final proposal, each party's thoughts on the same event, a judge's call per
topic. `together` starts them all at once and hands back their results in the order they
were given, so that everything built from them (turns, seeds, scores) is the same as if
they had been awaited one after another. How many are in flight at once is the
endpoint's business: every call still passes its `Limited` wrapper.

`sequential()` switches this off for the code run inside it (and the tasks it starts):
the same calls are then awaited one after another, in the same order. The episode is the
same either way; the switch exists to show that (tests/llm/test_in_episode_concurrency.py)
and to time the difference (benchmarks/in_episode_concurrency.py).

A failure is the one the sequential path would have met: the first, in the given order,
among the calls that fail. When a call fails, the calls after it are cancelled (the
sequential path would never have made them); the ones before it are awaited, since one of
them may fail too and its failure comes first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast

T = TypeVar("T")
A = TypeVar("A")
B = TypeVar("B")
Item = TypeVar("Item")

_SEQUENTIAL: ContextVar[bool] = ContextVar("disputelab_sequential_calls", default=False)


@contextmanager
def sequential() -> Iterator[None]:
    """Inside this block, `together` awaits its calls one after another."""
    token = _SEQUENTIAL.set(True)
    try:
        yield
    finally:
        _SEQUENTIAL.reset(token)


def is_sequential() -> bool:
    return _SEQUENTIAL.get()


async def together(*calls: Callable[[], Awaitable[T]]) -> list[T]:
    """Each call's result, in the order given; the calls run concurrently unless
    `sequential()` is on. Calls are factories, so none is started that the sequential
    path would not have started."""
    if is_sequential() or len(calls) < 2:
        return [await call() for call in calls]
    tasks = [asyncio.ensure_future(call()) for call in calls]
    try:
        await _settle(tasks)
    finally:
        # Cancelled from outside: none of the calls may outlive the step that made them.
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            raise cast(BaseException, task.exception())
    return [task.result() for task in tasks]


async def _settle(tasks: Sequence[asyncio.Future[Any]]) -> None:
    """Wait until every task is done, or every task before the first failing one is:
    the tasks after a failure are cancelled at once."""
    index = {id(task): i for i, task in enumerate(tasks)}
    failed = len(tasks)  # the position of the first failing task seen so far
    pending = set(tasks)
    while pending:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                failed = min(failed, index[id(task)])
        for task in tasks[failed + 1 :]:
            task.cancel()
        pending = {task for task in pending if index[id(task)] < failed}


async def each(call: Callable[[Item], Awaitable[T]], items: Iterable[Item]) -> list[T]:
    """`call(item)` for every item, together, the results in the items' order."""
    return await together(*(_bound(call, item) for item in items))


def _bound(call: Callable[[Item], Awaitable[T]], item: Item) -> Callable[[], Awaitable[T]]:
    # A function of its own binds `item` now; a lambda in a loop would see the last one.
    return lambda: call(item)


async def both(
    first: Callable[[], Awaitable[A]], second: Callable[[], Awaitable[B]]
) -> tuple[A, B]:
    """Two calls of different kinds, together (`first` first when sequential)."""
    a, b = await together(cast(Callable[[], Awaitable[Any]], first), second)
    return cast(A, a), cast(B, b)
