"""Where an experiment's episodes are played: in the runner's own event loop, or spread
over worker processes, each with an event loop of its own.

One event loop tops out at a few hundred model calls per second, and rule episodes are
pure CPU, so a grid can outgrow one process. `ProcessExecutor` plays episodes in worker
processes through the very code the local path uses (`play_episode`), with a relay in
place of the store: every store write the episode makes (its start, each group of turns,
its usage, its end or failure) travels back to the driver, which commits it to the one
store in order. Resume therefore works as it does locally: what a worker finished is in
the store, and an episode a kill interrupted is incomplete and is played again.

Each worker keeps its own model stack (limits, retries, the shared response cache on
disk), with an even share of the run's concurrency, and reports the calls it made so the
driver's ledger counts them. It keeps its own agent memos too, one set for the episodes
it plays of the run (the driver's cannot cross a process boundary, nor need to: a memo
changes no result).

Workers are forked from a server process that has imported disputelab once (the
"forkserver" start method, where the platform has it), not started afresh: a fresh
interpreter spent over a second importing before its first episode. Forked workers take
the driver's current environment as they start, as fresh ones would have (multiprocessing
sets their working directory), and report the CPU they used when they stop.

Ray actors, which may run on other hosts, are in `on_ray.py`.
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing as mp
import os
import pickle
import resource
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Protocol, cast

from disputelab.agents.memos import AgentMemos
from disputelab.episode import Episode
from disputelab.experiments.episodes import EpisodePlan, play_episode
from disputelab.llm.cache import ReplyCache
from disputelab.llm.models import ModelHub, Profile
from disputelab.llm.wrappers import Ledger, RoleUsage
from disputelab.store.sqlite import Store

# How often a driver waiting on an episode checks that its worker process is alive.
WORKER_CHECK_S = 1.0
# The store methods `play_episode` writes through; a relay forwards exactly these.
RELAYED = ("start_episode", "append_turns", "fail_episode", "record_usage", "finish_episode")


class Executor(Protocol):
    async def play(
        self,
        store: Store,
        hub: ModelHub,
        run_id: str,
        plan: EpisodePlan,
        memos: AgentMemos | None = None,
    ) -> Episode:
        """Play `plan` to the end, its writes committed to `store`; return the episode.
        `memos` are the run's, for an executor that plays in the driver's process."""
        ...

    async def aclose(self) -> None: ...


class LocalExecutor:
    """Episodes in the runner's own event loop (the default), with the run's memos."""

    async def play(
        self,
        store: Store,
        hub: ModelHub,
        run_id: str,
        plan: EpisodePlan,
        memos: AgentMemos | None = None,
    ) -> Episode:
        return await play_episode(store, hub, run_id, plan, memos=memos)

    async def aclose(self) -> None:
        return None


@dataclass(frozen=True)
class HubConfig:
    """What a worker needs to build its own model stack."""

    cache_path: Path | None
    profiles: dict[str, Profile] = field(default_factory=dict)
    timeout_s: float | None = None
    concurrency: int | None = None

    @staticmethod
    def of(hub: ModelHub, workers: int) -> HubConfig:
        share = -(-hub.concurrency // workers) if hub.concurrency else None
        return HubConfig(hub.cache_path, dict(hub.profiles), hub.timeout_s, share)

    def build(self, replies: ReplyCache | None = None) -> ModelHub:
        """The worker's hub; `replies` in place of a cache file (a Ray actor's)."""
        return ModelHub(
            self.cache_path,
            dict(self.profiles),
            timeout_s=self.timeout_s,
            concurrency=self.concurrency,
            replies=replies,
        )


class RelayStore:
    """A worker's stand-in for the store: each write is pickled at once (the caller
    reuses its lists) and queued for the driver, tagged with the task it belongs to.
    Writes made inside `batch` travel as one message, which the driver commits in one
    transaction, as the store itself would."""

    def __init__(self, events: Any, task: int, root: Path | None) -> None:
        self._events = events
        self._task = task
        self._held: list[bytes] | None = None
        # Protocols that keep files beside the store find them (a worker on this host);
        # None on a Ray actor, whose host may not have the store.
        self.root = root

    @contextmanager
    def batch(self) -> Iterator[None]:
        if self._held is not None:  # inside a batch already: part of it
            yield
            return
        self._held = []
        try:
            yield  # on an error nothing is sent, as a store's batch rolls back
            held = self._held
        finally:
            self._held = None
        if held:
            self._events.put((self._task, "store", held))

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name not in RELAYED:
            raise AttributeError(f"a worker cannot {name} on the driver's store")

        def relay(*args: Any, **kwargs: Any) -> None:
            call = pickle.dumps((name, args, kwargs))
            if self._held is not None:
                self._held.append(call)
            else:
                self._events.put((self._task, "store", [call]))

        return relay


def _combined(a: RoleUsage, b: RoleUsage, sign: int) -> RoleUsage:
    """a + b (sign 1) or a - b (sign -1), field by field; an unknown cost on either side
    makes the result's unknown."""
    out = RoleUsage(a.model)
    for f in fields(RoleUsage):
        if f.name != "model":
            x, y = getattr(a, f.name), getattr(b, f.name)
            setattr(out, f.name, None if x is None or y is None else x + sign * y)
    return out


# A worker's usage: by role, and by (role, model) for each model's part of a role's.
UsageKey = str | tuple[str, str]


def merge_usage(into: Ledger, by_role: Mapping[UsageKey, RoleUsage]) -> None:
    """Add a worker's usage, role by role (and each model's part), to the driver's
    ledger (unknown cost stays unknown once any part of it is)."""
    for key, u in by_role.items():
        # Updated in place: a Metered wrapper holds it.
        mine = into.role_model(*key) if isinstance(key, tuple) else into.role(key, u.model)
        total = _combined(mine, u, 1)
        for f in fields(RoleUsage):
            setattr(mine, f.name, getattr(total, f.name))


def _ledger_delta(now: Ledger, before: Mapping[UsageKey, RoleUsage]) -> dict[UsageKey, RoleUsage]:
    """What each role (and each model's part) spent since `before`: those that made or
    answered calls."""
    out: dict[UsageKey, RoleUsage] = {}
    for key, u in _entries(now).items():
        delta = _combined(u, before.get(key, RoleUsage(u.model)), -1)
        if delta.calls or delta.cached or delta.retries:
            out[key] = delta
    return out


def _entries(ledger: Ledger) -> dict[UsageKey, RoleUsage]:
    out: dict[UsageKey, RoleUsage] = {}
    for role, u in ledger.roles.items():
        out[role] = u
    for pair, part in ledger.by_model.items():
        out[pair] = part
    return out


def _snapshot(ledger: Ledger) -> dict[UsageKey, RoleUsage]:
    return {r: RoleUsage(**asdict(u)) for r, u in _entries(ledger).items()}


@dataclass(frozen=True)
class Inherited:
    """What a worker takes from the driver as it starts: a forked worker would otherwise
    keep the environment (API keys, proxies) of the server it came from. (Its working
    directory, multiprocessing sets.)"""

    environ: dict[str, str]
    driver: int = 0  # the driver's process id: a worker ends when it does

    @staticmethod
    def here() -> Inherited:
        return Inherited(dict(os.environ), os.getpid())

    def apply(self) -> None:
        os.environ.clear()
        os.environ.update(self.environ)
        if self.driver:
            die_with(self.driver)


def die_with(driver: int) -> None:
    """End this worker when the driver process ends, however it ends: an OOM kill of the
    driver alone must not leave workers playing (and paying for) episodes nobody stores.

    The worker's parent is the fork server, not the driver, so the kernel's parent-death
    signal (Linux) covers the server's death only; a thread watches the driver itself."""
    _parent_death_signal()
    threading.Thread(target=_watch, args=(driver,), name="driver-watch", daemon=True).start()


def _parent_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # the thread below still watches


def _watch(driver: int) -> None:
    """Wait for `driver` to end, then end this process at once."""
    import select

    try:
        fd = os.pidfd_open(driver)  # Linux: readable once the process has ended
    except (AttributeError, OSError):
        while _alive(driver):
            time.sleep(WORKER_CHECK_S)
    else:
        select.select([fd], [], [])
    os._exit(1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # alive, and someone else's
    return os.getppid() != 1  # orphaned: the driver that started the server is gone


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (Linux counts ru_maxrss in KB,
    macOS in bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def worker_main(tasks: Any, events: Any, config: HubConfig, inherited: Inherited) -> None:
    """A worker process: play every task it is sent, concurrently, until told to stop;
    then report the CPU it used and its peak memory."""
    inherited.apply()
    asyncio.run(_serve(tasks, events, config))
    events.put((-1, "spent", (time.process_time(), peak_rss_mb())))


def _shadowed_here() -> bool:
    """Whether the working directory holds a module named like one this process imported
    from elsewhere. The forkserver starts with the working directory first on its path and
    (on Python 3.11) imports its preloads before it takes the driver's path, so it would
    load that module instead: a disputelab checkout, say, or a script named like a
    library."""
    loaded = {name.partition(".")[0] for name in sys.modules}
    try:
        entries = os.listdir()
    except OSError:
        return True
    for entry in entries:
        name = entry.removesuffix(".py")
        if name not in loaded:
            continue
        origin = getattr(sys.modules.get(name), "__file__", None)
        if origin is None or not Path(origin).resolve().is_relative_to(Path(entry).resolve()):
            return True
    return False


def _context() -> Any:
    """Forkserver where the platform has it, its server importing once every disputelab
    module the driver has (and the model client); spawn elsewhere. Never a plain fork of
    the driver, which has threads and an event loop.

    A forked worker still runs the driver's main script again, as a spawned one would
    (the server does not preload a `__main__` that is a script); with the
    modules that script imports already loaded, that takes milliseconds, not a second."""
    if "forkserver" not in mp.get_all_start_methods() or _shadowed_here():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    ours = sorted(m for m in sys.modules if m.split(".")[0] == "disputelab")
    ctx.set_forkserver_preload([*ours, "disputelab.llm.openai_backend"])
    return ctx


class _Reported:
    """A worker's usage not yet reported: episodes overlap in its loop, so usage is sent
    as the change since the last report rather than per episode."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.last: dict[UsageKey, RoleUsage] = {}

    def take(self) -> dict[UsageKey, RoleUsage]:
        delta = _ledger_delta(self.ledger, self.last)
        self.last = _snapshot(self.ledger)
        return delta


async def _serve(tasks: Any, events: Any, config: HubConfig) -> None:
    hub = config.build()
    reported = _Reported(hub.ledger)
    memos = AgentMemos()  # a worker lives as long as the run it plays for
    loop = asyncio.get_running_loop()
    running: set[asyncio.Task[None]] = set()
    try:
        while True:
            item = await loop.run_in_executor(None, tasks.get)
            if item is None:
                break
            task = asyncio.ensure_future(_play_one(hub, reported, memos, events, *item))
            running.add(task)
            task.add_done_callback(running.discard)
        await asyncio.gather(*running, return_exceptions=True)
    finally:
        await hub.aclose()


async def _play_one(
    hub: ModelHub,
    reported: _Reported,
    memos: AgentMemos,
    events: Any,
    task: int,
    root: Path | None,
    run_id: str,
    plan: EpisodePlan,
) -> None:
    relay = cast(Store, RelayStore(events, task, root))
    try:
        episode = await play_episode(relay, hub, run_id, plan, memos=memos)
    except Exception as exc:  # the driver re-raises it as the episode's failure
        events.put((task, "error", (type(exc).__name__, str(exc), reported.take())))
        return
    events.put((task, "done", pickle.dumps((episode, reported.take()))))


class WorkerFailure(Exception):
    """An episode that failed in a worker."""


def worker_failure(name: str, message: str) -> WorkerFailure:
    """The failure as the driver raises it, under the name it had in the worker, so that
    a run's failure reasons read the same whichever executor played it."""
    named: type[WorkerFailure] = type(name, (WorkerFailure,), {})
    return named(message)


class ProcessExecutor:
    """Episodes spread over `workers` local processes (started on first use)."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError("--workers must be at least 1")
        self.workers = workers
        self._queues: list[Any] = []
        self._procs: list[Any] = []
        self._load: list[int] = []
        self._events: Any = None
        self._pending: dict[int, tuple[asyncio.Future[Episode], Store, ModelHub, int]] = {}
        self._ids = itertools.count()
        self._reader: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # As the workers report them when they stop.
        self.worker_cpu_s = 0.0
        self.worker_peak_rss_mb: list[float] = []

    def _start(self, hub: ModelHub) -> None:
        ctx = _context()
        self._loop = asyncio.get_running_loop()
        self._events = ctx.Queue()
        config = HubConfig.of(hub, self.workers)
        inherited = Inherited.here()
        for _ in range(self.workers):
            q = ctx.Queue()
            args = (q, self._events, config, inherited)
            proc = ctx.Process(target=worker_main, args=args, daemon=True)
            proc.start()
            self._queues.append(q)
            self._procs.append(proc)
            self._load.append(0)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    async def play(
        self,
        store: Store,
        hub: ModelHub,
        run_id: str,
        plan: EpisodePlan,
        memos: AgentMemos | None = None,  # the workers keep their own
    ) -> Episode:
        if not self._procs:
            self._start(hub)
        assert self._loop is not None
        task = next(self._ids)
        alive = [i for i, proc in enumerate(self._procs) if proc.is_alive()]
        if not alive:
            raise WorkerFailure("every worker process has exited")
        worker = min(alive, key=self._load.__getitem__)  # the least busy one still running
        future: asyncio.Future[Episode] = self._loop.create_future()
        self._pending[task] = (future, store, hub, worker)
        self._load[worker] += 1
        self._queues[worker].put((task, Path(store.root), run_id, plan))
        try:
            return await self._outcome(future, worker)
        finally:
            self._pending.pop(task, None)
            self._load[worker] -= 1

    async def _outcome(self, future: asyncio.Future[Episode], worker: int) -> Episode:
        """The episode's end, or a failure if its worker process dies first (killed, out
        of memory): its episodes must fail, not wait forever."""
        proc = self._procs[worker]
        while not future.done():
            await asyncio.wait({future}, timeout=WORKER_CHECK_S)
            if not future.done() and not proc.is_alive():
                # Events it sent before dying may still be on their way: give them a beat.
                await asyncio.wait({future}, timeout=WORKER_CHECK_S)
                if not future.done():
                    raise WorkerFailure(f"worker process {proc.pid} exited ({proc.exitcode})")
        return future.result()

    def _read(self) -> None:
        """Hand each event to the driver's loop, where the store lives."""
        while True:
            try:
                event = self._events.get()
            except (EOFError, OSError):
                return
            if event is None:
                return
            assert self._loop is not None
            self._loop.call_soon_threadsafe(self._apply, event)

    def _apply(self, event: tuple[int, str, Any]) -> None:
        task, kind, payload = event
        if kind == "spent":
            self.worker_cpu_s += payload[0]
            self.worker_peak_rss_mb.append(payload[1])
            return
        entry = self._pending.get(task)
        if entry is None:  # the driver gave up on it (a stop): its writes no longer matter
            return
        future, store, hub, _ = entry
        if kind == "store":
            try:
                with store.batch():  # what the worker wrote in one batch, in one transaction
                    for call in payload:
                        name, args, kwargs = pickle.loads(call)
                        getattr(store, name)(*args, **kwargs)
            except Exception as exc:  # the store's failure is the episode's
                if not future.done():
                    future.set_exception(exc)
        elif kind == "done":
            episode, usage = pickle.loads(payload)
            merge_usage(hub.ledger, usage)
            if not future.done():
                future.set_result(episode)
        else:
            name, message, usage = payload
            merge_usage(hub.ledger, usage)
            if not future.done():
                future.set_exception(worker_failure(name, message))

    async def aclose(self) -> None:
        for q in self._queues:
            q.put(None)
        for proc in self._procs:
            await asyncio.to_thread(proc.join, 10)
            if proc.is_alive():
                proc.terminate()
        if self._events is not None:
            self._events.put(None)
        if self._reader is not None:  # hand over what the workers sent last (their CPU)
            await asyncio.to_thread(self._reader.join, 10)
            await asyncio.sleep(0)
        self._procs.clear()
        self._queues.clear()
