"""`together`: a step's independent calls at once, their results and failures in the order
they were given, whatever order they finish in; `sequential()` one after another."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from disputelab.llm.concurrency import both, each, is_sequential, sequential, together


class Calls:
    """Calls that finish when the test says, in any order it likes."""

    def __init__(self, n: int) -> None:
        self.release = [asyncio.Event() for _ in range(n)]
        self.started: list[int] = []
        self.finished: list[int] = []
        self.cancelled: list[int] = []
        self.running = 0
        self.most = 0

    def call(self, i: int, fail: bool = False) -> Callable[[], Awaitable[int]]:
        async def run() -> int:
            self.started.append(i)
            self.running += 1
            self.most = max(self.most, self.running)
            try:
                await self.release[i].wait()
            except asyncio.CancelledError:
                self.cancelled.append(i)
                raise
            finally:
                self.running -= 1
            self.finished.append(i)
            if fail:
                raise ValueError(f"call {i} failed")
            return 10 * i

        return run


async def _release(calls: Calls, order: list[int]) -> None:
    for i in order:
        await asyncio.sleep(0)  # let every call start before any is released
        calls.release[i].set()


def test_results_come_in_the_order_given_whatever_order_the_calls_finish_in() -> None:
    async def go() -> tuple[list[int], Calls]:
        calls = Calls(3)
        releasing = asyncio.ensure_future(_release(calls, [2, 0, 1]))
        got = await together(*(calls.call(i) for i in range(3)))
        await releasing
        return got, calls

    got, calls = asyncio.run(go())
    assert got == [0, 10, 20]
    assert calls.finished == [2, 0, 1] and calls.most == 3


def test_the_failure_raised_is_the_first_in_order_and_the_calls_after_it_are_cancelled() -> None:
    async def go() -> tuple[str, Calls]:
        calls = Calls(4)
        # Call 2 fails first; call 1, before it, fails later: the sequential path would
        # have met call 1's failure, so that is the one raised. Call 3 is never released.
        releasing = asyncio.ensure_future(_release(calls, [2, 0, 1]))
        with pytest.raises(ValueError) as caught:
            await together(calls.call(0), calls.call(1, True), calls.call(2, True), calls.call(3))
        await releasing
        return str(caught.value), calls

    message, calls = asyncio.run(go())
    assert message == "call 1 failed"
    assert calls.cancelled == [3]


def test_sequential_awaits_one_call_after_another_and_reaches_tasks_started_inside() -> None:
    async def go() -> tuple[list[int], Calls, bool]:
        calls = Calls(3)
        for event in calls.release:
            event.set()
        inner = asyncio.ensure_future(asyncio.sleep(0, is_sequential()))
        return await each(lambda i: calls.call(i)(), range(3)), calls, await inner

    with sequential():
        got, calls, seen_inside = asyncio.run(go())
    assert got == [0, 10, 20] and calls.most == 1 and seen_inside
    assert not is_sequential()  # only inside the block


def test_sequential_never_starts_a_call_after_a_failure() -> None:
    async def go() -> Calls:
        calls = Calls(3)
        for event in calls.release:
            event.set()
        with pytest.raises(ValueError):
            await together(calls.call(0), calls.call(1, True), calls.call(2))
        return calls

    with sequential():
        calls = asyncio.run(go())
    assert calls.started == [0, 1]


def test_both_pairs_two_kinds_of_result() -> None:
    async def word() -> str:
        return "a"

    async def number() -> int:
        return 1

    assert asyncio.run(both(word, number)) == ("a", 1)
