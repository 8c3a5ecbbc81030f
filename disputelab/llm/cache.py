"""The response cache: replies by request, in SQLite, so a re-run is free and exact.

`Cached` is the `ChatModel` wrapper; `ResponseCache` the file behind it, shared by every
endpoint of a run (and by worker processes; Ray actors ask the driver's through a
`ReplyCache` of their own); `request_key` what a reply is filed under.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import json
import sqlite3
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from disputelab.errors import DisputelabError
from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse, token_count
from disputelab.llm.encoding import dumps_spliced
from disputelab.redact import mask_secrets, redact


def request_key(model: str, request: ChatRequest) -> str:
    """Cache key: model, messages, parameters, schema and the sample index."""
    payload = {
        "model": model,
        "messages": [[m.role, m.content] for m in request.messages],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "schema": request.schema,
        "schema_name": request.schema_name,
        "sample": request.sample,
        "seed": request.seed,
    }
    text = dumps_spliced(payload, "schema", sort_keys=True, ensure_ascii=False)
    blob = text.encode(errors="surrogatepass")  # a lone surrogate is still a distinct key
    return hashlib.sha256(blob).hexdigest()


def embedding_key(model: str, text: str) -> str:
    """Cache key of one text's embedding by `model`: a payload no chat request has, so
    the two kinds of entry never meet in the one table."""
    payload = json.dumps({"embed": text, "model": model}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode(errors="surrogatepass")).hexdigest()


OPEN_ATTEMPTS = 20  # tries at opening a cache file another process is setting up

# Replies are written in groups: one transaction per call cost as much CPU as the rest of
# the stack at 256 calls in flight, and worker processes sharing the file queued on its
# write lock. A group is written at most this long after its first reply arrived.
WRITE_DELAY_S = 0.05
WRITE_GROUP = 512  # replies: a group this large is written at once

# Caches holding replies not yet on disk, kept alive until they are written: a cache
# dropped with replies pending (its loop gone, so its timer too) still writes them at exit.
_unwritten: set[ResponseCache] = set()


@atexit.register
def _write_all_pending() -> None:
    for cache in list(_unwritten):
        try:
            cache.flush()
        except Exception as exc:  # the other caches are still written
            print(
                f"disputelab: {len(cache._pending)} replies were not written to the "
                f"response cache {cache.path}: {exc}",
                file=sys.stderr,
            )


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


CACHE_NAME = "cache.sqlite"  # the response cache's file in a store's folder


class CacheError(DisputelabError, ValueError):
    """A response cache file that cannot be used; the message says what to do."""


class ReplyCache(Protocol):
    """What `Cached` and the embeddings client need of a cache: the file itself
    (`ResponseCache`), or a Ray actor's view of the driver's (`RemoteCache` in
    `disputelab.experiments.on_ray`). Look-ups await, so that a view may ask elsewhere."""

    async def lookup(self, key: str) -> ChatResponse | None: ...

    def put(self, key: str, response: ChatResponse) -> None: ...

    async def lookup_vector(self, key: str) -> list[float] | None: ...

    def put_vector(self, key: str, model: str, vector: list[float]) -> None: ...

    def flush(self) -> None: ...


def vector_of(hit: ChatResponse, where: object) -> list[float]:
    """The embedding a cached entry holds (its text is the vector as JSON)."""
    try:
        vector = json.loads(hit.text)
    except ValueError:
        vector = None
    if not isinstance(vector, list) or not all(isinstance(v, float) for v in vector):
        raise CacheError(
            f"{where}: a cached embedding is damaged; delete the cache file to ask "
            "the endpoint again"
        )
    return vector


class ResponseCache:
    """Replies by request key in SQLite, so a re-run is free and replays exactly.

    A reply is served from memory at once and reaches the file within `WRITE_DELAY_S`,
    or sooner: on `flush` or `close`, when another `ResponseCache` in this process opens
    the file, and when the process exits. A process killed outright loses at most the
    last moment's replies, which a resumed run asks for again."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for other in list(_unwritten):  # what this process holds for the file is read too
            if other.path.resolve() == self.path.resolve():
                other.flush()
        self._pending: dict[str, tuple[str, str, str, int | None, int | None, float]] = {}
        self._lock = threading.Lock()  # judges may score from threads of their own
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        try:
            # Worker processes share one cache file: a write waits up to 30 s for another's.
            self.db = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=30
            )
            self._open()
        except sqlite3.DatabaseError as exc:  # not a database, damaged, unreadable
            raise CacheError(
                f"the response cache {self.path} cannot be used ({exc}); move it aside or "
                "delete it: it only saves model calls, and every run is in the store"
            ) from None

    def _open(self) -> None:
        for attempt in range(OPEN_ATTEMPTS):
            try:
                self._prepare()
                return
            except sqlite3.OperationalError as exc:
                # Switching to WAL takes the file's lock without waiting for it, so two
                # processes opening a new cache at once can meet: try again shortly.
                if "locked" not in str(exc) or attempt == OPEN_ATTEMPTS - 1:
                    raise
                time.sleep(0.05 * (attempt + 1))

    def _prepare(self) -> None:
        if self.db.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            self.db.execute("PRAGMA journal_mode=WAL")
        # Survives a killed process (what matters for a cache); skips an fsync per reply.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT NOT NULL,"
            " text TEXT NOT NULL, input_tokens INTEGER, output_tokens INTEGER,"
            " created_at REAL NOT NULL)"
        )

    def get(self, key: str) -> ChatResponse | None:
        row = self._pending.get(key)
        if row is None:
            row = self.db.execute(
                "SELECT key, model, text, input_tokens, output_tokens, created_at"
                " FROM responses WHERE key=?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        _, model, text, tokens_in, tokens_out, _ = row
        if not (
            isinstance(text, str)
            and isinstance(model, str)
            and all(n is None or isinstance(n, int) for n in (tokens_in, tokens_out))
        ):
            raise CacheError(
                f"{self.path}: a cached reply is damaged (its text or token counts are not "
                "what a reply holds); delete the cache file to call the model again"
            )
        return ChatResponse(text, model, tokens_in, tokens_out, cached=True)

    async def lookup(self, key: str) -> ChatResponse | None:
        return self.get(key)

    async def lookup_vector(self, key: str) -> list[float] | None:
        return self.get_vector(key)

    def put(self, key: str, response: ChatResponse) -> None:
        """File a reply. Token counts no reply carries are filed as unknown: SQLite cannot
        hold some of them, and one such row used to fail its whole group's write."""
        row = (
            key,
            redact(response.model),
            mask_secrets(response.text),  # a reply quoting the key is not kept verbatim
            token_count("input tokens", response.input_tokens)[0],
            token_count("output tokens", response.output_tokens)[0],
            time.time(),
        )
        self._file(row)

    def get_vector(self, key: str) -> list[float] | None:
        """An embedding filed by `put_vector` (None when there is none)."""
        hit = self.get(key)
        return None if hit is None else vector_of(hit, self.path)

    def put_vector(self, key: str, model: str, vector: list[float]) -> None:
        """File one text's embedding: its numbers as JSON, which round-trips every float
        exactly (numbers carry no secret, so they are not masked)."""
        self._file((key, redact(model), json.dumps(vector), None, None, time.time()))

    def _file(self, row: tuple[str, str, str, int | None, int | None, float]) -> None:
        key = row[0]
        loop = _running_loop()
        with self._lock:
            self._pending[key] = row
            _unwritten.add(self)
            if len(self._pending) < WRITE_GROUP and loop is not None:
                if self._timer is not None and self._timer_loop is loop:
                    return  # this loop's timer writes it
                if self._timer is None:
                    self._timer_loop = loop
                    self._timer = loop.call_later(WRITE_DELAY_S, self.flush)
                    return
        # A full group; no loop to run a timer; or a timer on another loop, which may
        # have ended (and would never fire): write now.
        self.flush()

    def flush(self) -> None:
        """Write every reply not yet on disk, in one transaction."""
        with self._lock:
            timer, self._timer = self._timer, None
            if timer is not None and self._timer_loop is _running_loop():
                timer.cancel()  # another loop's timer is left to fire, finding nothing
            if not self._pending:
                _unwritten.discard(self)
                return
            rows = list(self._pending.values())
            self.db.execute("BEGIN IMMEDIATE")
            try:
                self.db.executemany("INSERT OR REPLACE INTO responses VALUES (?,?,?,?,?,?)", rows)
                self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:  # SQLite may have rolled back already
                    self.db.execute("ROLLBACK")
                raise  # the replies stay pending, for the next flush
            self._pending.clear()
            _unwritten.discard(self)

    def close(self) -> None:
        self.flush()
        self.db.close()

    def __len__(self) -> int:
        self.flush()
        return int(self.db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


class Cached:
    """Answer from the cache when the same request (same sample) was answered before.

    Identical requests in flight at the same moment are coalesced: the first one calls
    the model and the rest wait for its reply, marked as cached (a twin and its mediated
    episode open with the same prompts, and at high concurrency both would miss the cache
    together). If that first call fails, each waiter makes its own call."""

    def __init__(self, inner: ChatModel, cache: ReplyCache) -> None:
        self.inner = inner
        self.name = inner.name
        self.cache = cache
        self.in_flight: dict[str, asyncio.Future[ChatResponse | None]] = {}

    async def complete(self, request: ChatRequest) -> ChatResponse:
        key = request_key(self.name, request)
        while True:
            hit = await self.cache.lookup(key)
            if hit is not None:
                return hit
            pending = self.in_flight.get(key)
            if pending is None:
                break
            shared = await asyncio.shield(pending)
            if shared is not None:
                return replace(shared, cached=True, retries=0, latency_s=0.0)
        future: asyncio.Future[ChatResponse | None] = asyncio.get_running_loop().create_future()
        self.in_flight[key] = future
        response: ChatResponse | None = None
        try:
            response = await self.inner.complete(request)
            self.cache.put(key, response)
            return response
        finally:
            del self.in_flight[key]
            future.set_result(response)  # None tells the waiters to call for themselves
