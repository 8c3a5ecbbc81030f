"""A load target for `disputelab bench`: an OpenAI-compatible server with a provider's
habits, run in its own process on 127.0.0.1.

It answers every chat completion with a schema-valid instance of the requested schema
(and every embeddings request with `disputelab.llm.testing`'s hashed vectors) after a
latency drawn from a fixed value or a distribution, and injects a provider's faults at
chosen rates: 429 with Retry-After, 500, a reply that takes longer than the
client waits (a timeout), and a malformed body. A hidden concurrency limit refuses the
calls past it with a 429. `GET /stats` reports what it saw, including how much of each
prompt repeats the start of an earlier one (what a provider's prefix cache could reuse)
and how many TCP connections it accepted (a client that reuses its keep-alive
connections opens few per call).

Run it as `python -m disputelab.llm.load_target '<settings JSON>'`: it prints its URL on
the first line and serves until its standard input closes.

It serves from one asyncio loop (aiohttp's HTTP/1.1 keep-alive server) rather than the
tests' thread-per-connection server: on a machine of two cores, the threaded server
answering 1,000 calls a second took more CPU than the client it was measuring.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from aiohttp import web

from disputelab.llm.load_settings import LatencyShape, TargetSettings
from disputelab.llm.testing import (
    Scripted,
    embeddings_payload,
    fill,
    reply_payload,
    requested_schema,
)

__all__ = ["LatencyShape", "LoadTarget", "TargetSettings", "serve"]


def draw_latency(settings: TargetSettings, rng: random.Random) -> float:
    if settings.latency_shape == "uniform":
        return rng.uniform(0, 2 * settings.latency_s)
    if settings.latency_shape == "exponential":
        return rng.expovariate(1 / settings.latency_s) if settings.latency_s > 0 else 0.0
    return settings.latency_s


def common_prefix_length(a: str, b: str) -> int:
    """Length of the longest common prefix, by bisection on slices (compared in C)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class PrefixReuse:
    """How much of each prompt repeats the start of some earlier prompt.

    Among earlier prompts, the one sharing the longest prefix with a new prompt sits next
    to it in sorted order, so each prompt costs a bisection and two comparisons. Counted
    in characters, a proxy for tokens that needs no tokenizer.
    """

    def __init__(self) -> None:
        self._seen: list[str] = []
        self.total = 0
        self.repeated = 0

    def add(self, prompt: str) -> int:
        """Record `prompt`; return how many of its leading characters were seen before."""
        i = bisect.bisect_left(self._seen, prompt)
        neighbours = self._seen[max(0, i - 1) : i + 1]
        best = max((common_prefix_length(prompt, s) for s in neighbours), default=0)
        self._seen.insert(i, prompt)
        self.total += len(prompt)
        self.repeated += best
        return best

    @property
    def share(self) -> float:
        return self.repeated / self.total if self.total else 0.0


def prompt_text(body: dict[str, Any]) -> str:
    """A request's prompt as one string, in the order the provider reads it."""
    return "\n".join(f"{m.get('role')}: {m.get('content')}" for m in body.get("messages") or ())


class LoadTarget:
    """The behaviour behind the server: draws each reply and keeps the counts."""

    def __init__(self, settings: TargetSettings) -> None:
        self.settings = settings
        self.rng = random.Random(settings.seed)
        self.lock = threading.Lock()
        self.prefixes = PrefixReuse()
        self.faults = {"429": 0, "500": 0, "timeout": 0, "malformed": 0}
        self.answered = 0
        self.distinct: set[int] = set()  # hashes of the distinct requests seen
        self.sample: dict[str, Any] | None = None  # the first request, for replays

    def _saw(self, body: dict[str, Any], raw: bytes) -> None:
        self.prefixes.add(prompt_text(body))
        # By its bytes: the client encodes a request the same way each time, and
        # re-encoding every body canonically cost a quarter of the target's CPU, which
        # shares the machine with the client it measures.
        self.distinct.add(hash(raw))
        if self.sample is None:
            self.sample = body

    def reply(self, body: dict[str, Any], raw: bytes) -> Scripted:
        s = self.settings
        with self.lock:
            self._saw(body, raw)
            roll = self.rng.random()
            latency = draw_latency(s, self.rng)
            number = self.rng.randrange(1_000_000)
            fault = _fault(s, roll)
            if fault:
                self.faults[fault] += 1
            else:
                self.answered += 1
        if fault == "429":
            return Scripted(status=429, headers={"retry-after": f"{s.retry_after_s:g}"})
        if fault == "500":
            return Scripted(status=500, delay_s=latency)
        if fault == "timeout":
            return Scripted(content="{}", delay_s=s.hang_s)
        if fault == "malformed":
            return Scripted(raw=b'{"choices": [{"message": ', delay_s=latency)
        if "messages" not in body and "input" in body:  # an /embeddings request
            return Scripted(raw=embeddings_payload(body), delay_s=latency)
        return Scripted(content=self.content(body, number), delay_s=latency)

    def content(self, body: dict[str, Any], number: int) -> str:
        """The text of a good reply to the chat request `body`: a valid instance of the
        schema it asks for. A subclass may answer requests that name no schema the way
        another program parses them (benchmarks/peer_stub.py does, for the peers)."""
        schema = requested_schema(body)
        # Every reply says something new, so that dialogues (and prompts) diverge as
        # they would with a real model, rather than repeating one another exactly.
        return json.dumps(fill(schema, text=f"Shall we meet halfway on point {number}?"))

    def stats(self, server: _Server) -> dict[str, Any]:
        with self.lock:
            return {
                "requests": server.requests,
                "connections": server.connections,
                "max_open_connections": server.max_open,
                "answered": self.answered,
                "faults": dict(self.faults),
                "refused_over_limit": server.refused,
                "max_in_flight": server.max_in_flight,
                "distinct": len(self.distinct),
                "prompt_chars": self.prefixes.total,
                "repeated_chars": self.prefixes.repeated,
                "prefix_share": self.prefixes.share,
                # It shares the machine with the run it serves: its CPU is the bench's
                # measure of how much it competed.
                "cpu_s": time.process_time(),
                "sample_request": self.sample,
                "settings": asdict(self.settings),
            }


def _fault(s: TargetSettings, roll: float) -> str:
    """Which fault, if any, a uniform draw in [0, 1) falls into."""
    edge = 0.0
    for name, rate in (
        ("429", s.rate_429),
        ("500", s.rate_500),
        ("timeout", s.rate_timeout),
        ("malformed", s.rate_malformed),
    ):
        edge += rate
        if roll < edge:
            return name
    return ""


class _Server:
    """The HTTP side: counts what is in flight, refuses what passes the hidden limit,
    and sends each reply after its latency."""

    def __init__(self, target: LoadTarget, hidden_limit: int | None) -> None:
        self.target = target
        self.hidden_limit = hidden_limit
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.refused = 0
        self.connections = 0  # TCP connections accepted, over the target's lifetime
        self.open = 0
        self.max_open = 0

    def counting(self, factory: Callable[[], asyncio.Protocol]) -> Callable[[], asyncio.Protocol]:
        """`factory` (aiohttp's protocol factory), counting each connection it serves:
        the event loop calls it once per accepted connection."""

        def made() -> asyncio.Protocol:
            self.connections += 1
            return _Counted(factory(), self)

        return made

    async def chat(self, request: web.Request) -> web.Response:
        raw = await request.read() or b"{}"
        body = json.loads(raw)
        self.requests += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.hidden_limit is not None and self.in_flight > self.hidden_limit:
                self.refused += 1
                reply = Scripted(status=429, headers={"retry-after": "0.05"})
            else:
                reply = self.target.reply(body, raw)
            if reply.delay_s:
                await asyncio.sleep(reply.delay_s)
        finally:
            self.in_flight -= 1
        headers = {"content-type": "application/json", **reply.headers}
        return web.Response(status=reply.status, body=reply_payload(reply, body), headers=headers)

    async def stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.target.stats(self))


class _Counted(asyncio.Protocol):
    """aiohttp's protocol for one connection, passed every event, which also keeps the
    count of the connections open."""

    def __init__(self, inner: asyncio.Protocol, server: _Server) -> None:
        self.inner = inner
        self.server = server

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.server.open += 1
        self.server.max_open = max(self.server.max_open, self.server.open)
        self.inner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.open -= 1
        self.inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


async def _serve(settings: TargetSettings, target: LoadTarget | None) -> None:
    server = _Server(target or LoadTarget(settings), settings.hidden_limit)
    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_get("/stats", server.stats)
    app.router.add_post("/{path:.*}", server.chat)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    assert runner.server is not None
    # The loop's own server rather than aiohttp's TCPSite, which takes the protocol
    # factory as it is: here each accepted connection passes through the count first.
    listening = await asyncio.get_running_loop().create_server(
        server.counting(runner.server), "127.0.0.1", 0, backlog=4096
    )
    port = listening.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    try:
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    finally:
        listening.close()
        await runner.cleanup()


def serve(settings: TargetSettings, target: LoadTarget | None = None) -> None:
    """Serve until standard input closes; the URL goes to standard output first.
    `target` answers in place of a plain `LoadTarget(settings)`."""
    asyncio.run(_serve(settings, target))


if __name__ == "__main__":
    serve(TargetSettings(**json.loads(sys.argv[1] if len(sys.argv) > 1 else "{}")))
