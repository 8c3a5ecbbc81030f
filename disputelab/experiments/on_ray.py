"""Episodes played by Ray actors, on one machine or across a cluster, with every file in
the driver's hands.

A Ray actor may run on a host that has none of the driver's files, so it is handed
nothing by path. Its plan carries the scenario by value (as every plan does); its store
is a relay whose writes come back with the episode's end, to be committed by the driver;
its response cache is a `RemoteCache` that asks the driver's cache by key, through a
`CacheDesk` actor that the driver polls, and sends every new reply back to be filed
there. The desk keeps this run's new replies in memory too, so an actor on another node
asking the same question a moment later is answered without a call.

What a protocol keeps beside the store (the settlement counsel's memory of earlier
episodes, saved exemplar sets) an actor cannot reach: a plan that needs it fails with one
line saying so, before anything of it is stored.

On a cluster (an `address` given) the actors get the disputelab package through Ray's
runtime environment (`py_modules`), so the nodes need Ray and disputelab's dependencies
installed, not disputelab itself, and run the driver's version of it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import disputelab
from disputelab.agents.memos import AgentMemos
from disputelab.episode import Episode
from disputelab.experiments.episodes import EpisodePlan
from disputelab.experiments.executors import (
    HubConfig,
    ProcessExecutor,
    _play_one,
    _Reported,
)
from disputelab.llm.base import ChatResponse
from disputelab.llm.cache import CacheError, vector_of
from disputelab.llm.models import ModelHub
from disputelab.store.sqlite import Store

# How long the desk holds the driver's poll when there is nothing to hand it: the driver
# also drains the desk after each episode, so this bounds only an idle driver's wait.
POLL_S = 1.0
# How long joining a cluster waits for its head to answer at all.
PROBE_S = 10.0
# New replies the desk keeps to answer at once (a few KB each); older ones the driver
# answers from its cache, a round trip later.
KEPT = 1 << 14
# A reply filed as an embedding rather than a chat reply (the cache files them alike).
VECTOR = "vector"
REPLY = "reply"

# Exemplar parameters that name no file: the pool packaged with disputelab and the
# remediator's own methods (this package knows protocols through the registry alone, so
# it names them here; a value it does not know is refused on Ray, with the reason).
NO_FILE = frozenset({"builtin", "zero-shot", "random", "retrieval"})

# A new cache entry on its way to the driver: (kind, key, reply); an embedding's reply
# holds the vector as JSON.
Entry = tuple[str, str, ChatResponse]
# The driver's answer for a key: the reply, None for none, or why the cache failed.
Answer = ChatResponse | str | None


class CacheDesk:
    """A Ray actor standing between the episode actors and the driver's response cache.

    An actor's look-up waits here until the driver, polling with `take`, answers it from
    its cache; a new reply is kept here (answering later look-ups at once) until the
    driver takes it to file. The desk holds no file: on any node, it is the driver's."""

    def __init__(self) -> None:
        self.known: dict[str, ChatResponse] = {}
        self.waiting: dict[str, list[asyncio.Future[Answer]]] = {}
        self.asked: list[str] = []
        self.outbox: list[Entry] = []
        self.wake = asyncio.Event()

    async def get(self, key: str) -> Answer:
        if key in self.known:
            return replace(self.known[key], cached=True)
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        if key not in self.waiting:  # the same question asked twice goes to the driver once
            self.waiting[key] = []
            self.asked.append(key)
            self.wake.set()
        self.waiting[key].append(future)
        return await future

    def put(self, entries: list[Entry]) -> None:
        for entry in entries:
            self.known[entry[1]] = entry[2]
        while len(self.known) > KEPT:  # the oldest go: the driver's cache still has them
            del self.known[next(iter(self.known))]
        self.outbox.extend(entries)
        self.wake.set()

    async def take(self, wait_s: float) -> tuple[list[str], list[Entry]]:
        """The questions and the new replies since the last take, waiting up to
        `wait_s` for some when there are none."""
        if not self.asked and not self.outbox and wait_s > 0:
            self.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), wait_s)
        asked, self.asked = self.asked, []
        outbox, self.outbox = self.outbox, []
        return asked, outbox

    def answer(self, answers: dict[str, Answer]) -> None:
        for key, found in answers.items():
            for future in self.waiting.pop(key, []):
                if not future.done():
                    future.set_result(found)


class RemoteCache:
    """An actor's response cache: look-ups ask the driver's through the desk, and new
    replies are sent to it as they arrive (`settled` waits until the desk has them)."""

    def __init__(self, desk: Any) -> None:
        self.desk = desk
        self._sending: set[Any] = set()

    async def lookup(self, key: str) -> ChatResponse | None:
        found: Answer = await self.desk.get.remote(key)
        if isinstance(found, str):
            raise CacheError(found)
        return found

    async def lookup_vector(self, key: str) -> list[float] | None:
        hit = await self.lookup(key)
        return None if hit is None else vector_of(hit, "the driver's response cache")

    def put(self, key: str, response: ChatResponse) -> None:
        # Only what a reply is: the call's timing and deadline are not filed.
        kept = ChatResponse(
            response.text, response.model, response.input_tokens, response.output_tokens
        )
        self._send((REPLY, key, kept))

    def put_vector(self, key: str, model: str, vector: list[float]) -> None:
        self._send((VECTOR, key, ChatResponse(json.dumps(vector), model)))

    def _send(self, entry: Entry) -> None:
        ref = self.desk.put.remote([entry])
        self._sending.add(ref)

    async def settled(self) -> None:
        sending, self._sending = list(self._sending), set()
        if sending:
            await asyncio.gather(*sending)

    def flush(self) -> None:
        return None  # sent as they came; `settled` is the wait


def answers(cache: Any, asked: list[str]) -> dict[str, Answer]:
    """The driver's answer to each key: a reply, None, or why its cache failed (the
    actor raises that as the episode's failure, as a local run would)."""
    out: dict[str, Answer] = {}
    for key in asked:
        try:
            out[key] = cache.get(key)
        except CacheError as exc:
            out[key] = str(exc)
    return out


def file_entries(cache: Any, entries: list[Entry]) -> None:
    """File what the actors sent in the driver's cache."""
    for kind, key, reply in entries:
        if kind == VECTOR:
            cache.put_vector(key, reply.model, vector_of(reply, "a reply from a Ray actor"))
        else:
            cache.put(key, reply)


def store_file_problem(plan: EpisodePlan) -> str | None:
    """Why `plan` cannot be played by an actor: it would read or write files kept in the
    store's folder, which the actor's host does not have (None when it needs none)."""
    params = plan.params
    if getattr(params, "memory", None) == "store":
        return (
            "memory: store keeps the counsel's memory in the store's folder, which Ray "
            "actors do not have; use memory: episode, or --executor processes"
        )
    for name in ("exemplars", "pool"):
        ref = getattr(params, name, None)
        if isinstance(ref, str) and ref not in NO_FILE:
            return (
                f"{name}: {ref} is read from a file, which Ray actors do not have; use the "
                "builtin pool and a method (zero-shot, random, retrieval), or --executor "
                "processes"
            )
    return None


def address_problem(address: str, timeout_s: float = PROBE_S) -> str | None:
    """Why the cluster at `address` (HOST:PORT, or ray://HOST:PORT) cannot be joined,
    found by opening a connection to it: Ray itself waits minutes on a wrong address
    before it gives up. None when it answers (or names no port: Ray finds the cluster)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return None
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            return None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return f"--address {address}: no Ray cluster answers there ({reason})"


def runtime_env() -> dict[str, Any]:
    """What ships disputelab to a cluster's nodes: the driver's package directory."""
    return {"py_modules": [str(Path(disputelab.__file__).parent)]}


class EpisodeActor:
    """A Ray actor: a model stack and an event loop that plays many episodes at once."""

    def __init__(self, config: HubConfig, desk: Any = None) -> None:
        self.cache = None if desk is None else RemoteCache(desk)
        self.hub: ModelHub = config.build(self.cache)
        self.reported = _Reported(self.hub.ledger)
        self.memos = AgentMemos()  # an actor lives as long as the run it plays for

    async def play(self, task: int, run_id: str, plan: EpisodePlan) -> list[tuple[int, str, Any]]:
        collected = _Collected()
        await _play_one(self.hub, self.reported, self.memos, collected, task, None, run_id, plan)
        if self.cache is not None:  # its replies are at the desk before its end is told
            await self.cache.settled()
        return collected.events

    def where(self) -> tuple[str, str]:
        """The node this actor runs on, and where its disputelab was imported from."""
        import ray

        return ray.get_runtime_context().get_node_id(), str(Path(disputelab.__file__).parent)


class _Collected:
    """An episode's events kept in order, to be sent back with its end."""

    def __init__(self) -> None:
        self.events: list[tuple[int, str, Any]] = []

    def put(self, event: tuple[int, str, Any]) -> None:
        self.events.append(event)


class RayExecutor(ProcessExecutor):
    """Episodes spread over Ray actors (one per worker, spread over the nodes, or placed
    by `placement`), on a cluster at `address` or on a local Ray instance. An episode's
    store writes come back with its end, in order, rather than as they happen: a driver
    killed mid-episode leaves it incomplete, and `--resume` plays it again, as it would
    any interrupted episode.
    `ship` sends the package in the runtime environment (by default, with an address) of
    the Ray session it starts; a caller that starts its own passes `runtime_env()`."""

    def __init__(
        self,
        workers: int,
        address: str | None = None,
        ship: bool | None = None,
        placement: Sequence[Mapping[str, Any]] = (),
    ):
        super().__init__(workers)
        self.address = address
        self.ship = address is not None if ship is None else ship
        # Ray options for each actor in turn (cycled), e.g. a node's custom resource.
        self.placement = list(placement)
        self._actors: list[Any] = []
        self._desk: Any = None
        self._poller: asyncio.Task[None] | None = None
        self._closing = False
        self._cache: Any = None
        # Each actor's node id and the directory its disputelab came from, as it closed.
        self.placed: list[tuple[str, str]] = []

    def _start(self, hub: ModelHub) -> None:
        try:
            import ray
        except ImportError:
            raise ValueError("--executor ray needs Ray: pip install 'disputelab[ray]'") from None
        if not ray.is_initialized():  # a caller's own ray.init sets its runtime env
            env = runtime_env() if self.ship else None  # Ray takes a local one only here
            ray.init(
                address=self.address,
                runtime_env=env,
                include_dashboard=False,
                log_to_driver=False,
            )
        self._cache = hub.open_cache()
        if self._cache is not None:
            desk = ray.remote(CacheDesk).options(max_concurrency=10_000)
            self._desk = desk.remote()
            self._poller = asyncio.ensure_future(self._serve_cache())
        # No path crosses to an actor: its cache is the desk, its store the relay.
        config = replace(HubConfig.of(hub, self.workers), cache_path=None)
        share = config.concurrency or 8
        actor = ray.remote(EpisodeActor)
        placement = self.placement or [{"scheduling_strategy": "SPREAD"}]
        self._actors = [
            actor.options(max_concurrency=share + 1, **placement[i % len(placement)]).remote(
                config, self._desk
            )
            for i in range(self.workers)
        ]
        self._load = [0] * self.workers
        self._loop = asyncio.get_running_loop()

    async def _serve_cache(self) -> None:
        """Answer the actors' look-ups from the driver's cache, and file their replies,
        until the executor closes. Never cancelled: a poll cut short would lose what the
        desk had handed it."""
        while not self._closing:
            try:
                await self._exchange(POLL_S)
            except Exception:  # the drain after each episode raises it, failing that one
                await asyncio.sleep(POLL_S)

    async def _exchange(self, wait_s: float) -> None:
        asked, entries = await self._desk.take.remote(wait_s)
        file_entries(self._cache, entries)
        if asked:
            await self._desk.answer.remote(answers(self._cache, asked))

    async def play(
        self,
        store: Store,
        hub: ModelHub,
        run_id: str,
        plan: EpisodePlan,
        memos: AgentMemos | None = None,  # the actors keep their own
    ) -> Episode:
        problem = store_file_problem(plan)
        if problem is not None:
            raise ValueError(problem)
        if not self._actors:
            self._start(hub)
        task = next(self._ids)
        worker = min(range(self.workers), key=self._load.__getitem__)
        future: asyncio.Future[Episode] = asyncio.get_running_loop().create_future()
        self._pending[task] = (future, store, hub, worker)
        self._load[worker] += 1
        try:
            events = await self._actors[worker].play.remote(task, run_id, plan)
            if self._desk is not None:  # its replies reach the cache file before its end
                await self._exchange(0)
            for event in events:
                self._apply(event)
            return await future
        finally:
            self._pending.pop(task, None)
            self._load[worker] -= 1

    async def aclose(self) -> None:
        # Where they ran, for a report (and a test) to tell; an actor lost says nothing.
        for actor in self._actors:
            with contextlib.suppress(Exception):
                self.placed.append(cast(tuple[str, str], await actor.where.remote()))
        if self._poller is not None:
            self._closing = True
            await self._poller
            self._poller = None
            await self._exchange(0)  # what the actors sent last
        self._actors.clear()  # the actors end with the driver's Ray session
        self._desk = None
