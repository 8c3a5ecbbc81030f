"""A small OpenAI-compatible HTTP server on 127.0.0.1, for tests and benchmarks.

It is a real socket and real HTTP, so everything above it (the SDK, retries, parsing) runs
as in production. Replies are scripted: content, status codes, delays, Retry-After headers
and broken bodies. `fill` makes a valid instance of a JSON schema, so the server can also
play any role without a script. Usable from your own tests too.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Scripted:
    """One reply: `content` for a 200, or a `status` with optional headers; `raw` sends a
    body verbatim (for truncated or malformed HTTP bodies)."""

    content: str | None = None
    status: int = 200
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    # Any JSON value: a test may send counts no real reply carries (huge, negative, text).
    prompt_tokens: Any = 11
    completion_tokens: Any = 7
    finish_reason: str = "stop"  # "length" plays a reply cut off at max_tokens
    cut_at: int | None = None  # send only this many body bytes, then drop the connection
    chunked: bool = False  # no Content-Length: the body goes out in chunks of 64 KB
    hang_up: bool = False  # drop the connection before any reply, as a crashed proxy does
    content_type: str = "application/json"  # "text/html" plays a proxy's error page


Responder = Callable[[dict[str, Any]], Scripted]


class _QuietServer(ThreadingHTTPServer):
    # socketserver's default backlog of 5 drops bursts of connections that real servers
    # accept; the tests open hundreds at once.
    request_queue_size = 1024
    fake: FakeOpenAI  # whose requests it serves: its handlers record them there

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that drops a kept-alive connection is normal, not an error to print."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def reply_payload(reply: Scripted, body: dict[str, Any]) -> bytes:
    """The HTTP body for a scripted reply to the chat request `body`."""
    if reply.raw is not None:
        return reply.raw
    if reply.status != 200:
        return json.dumps({"error": {"message": "scripted failure", "type": "test"}}).encode()
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "test"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": reply.finish_reason,
                    "message": {"role": "assistant", "content": reply.content},
                }
            ],
            "usage": {
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "total_tokens": _total(reply.prompt_tokens, reply.completion_tokens),
            },
        }
    ).encode()


def _total(prompt: Any, completion: Any) -> Any:
    numbers = all(isinstance(n, int | float) for n in (prompt, completion))
    return prompt + completion if numbers else None


EMBEDDING_DIM = 32


def fake_embedding(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """A deterministic stand-in for a text's embedding: hashed word counts, so texts that
    share words come out similar, as a real model's would. Not unit length on purpose:
    a client must not assume a server normalises."""
    out = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        out[hashlib.blake2b(word.encode(), digest_size=4).digest()[0] % dim] += 2.0
    return out if any(out) else [1.0] + [0.0] * (dim - 1)


def embeddings_payload(body: dict[str, Any]) -> bytes:
    """The reply of an `/embeddings` endpoint to `body`, in OpenAI's shape."""
    texts = body.get("input") or []
    texts = [texts] if isinstance(texts, str) else texts
    return json.dumps(
        {
            "object": "list",
            "model": body.get("model", "test"),
            "data": [
                {"object": "embedding", "index": i, "embedding": fake_embedding(str(t))}
                for i, t in enumerate(texts)
            ],
            "usage": {"prompt_tokens": 3 * len(texts), "total_tokens": 3 * len(texts)},
        }
    ).encode()


class _Handler(BaseHTTPRequestHandler):
    """Records each request on the server's FakeOpenAI and sends the reply it picks."""

    server: _QuietServer
    # HTTP/1.1 keeps connections open between requests, as real servers do; it is the
    # default, because HTTP/1.0's closed connections hide a client pool that outlives its
    # event loop. keep_alive=False (`_OldHandler`) is there to test old servers.
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY, as real servers set it: the headers and the body go out in two writes,
    # and with Nagle's algorithm on, the body waits for the client's delayed ACK of the
    # headers, adding about 40 ms to every call.
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def setup(self) -> None:
        super().setup()
        if self.server.fake.idle_close_s is not None:
            # The socket's timeout ends the wait for the connection's next request.
            self.connection.settimeout(self.server.fake.idle_close_s)

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        fake = self.server.fake
        if self.path.rstrip("/").endswith("/embeddings"):
            self._embeddings(fake, body)
            return
        started = time.monotonic()
        reply = fake._begin_request(body, dict(self.headers), self.path, self.client_address[:2])
        try:
            if reply.delay_s:
                time.sleep(reply.delay_s)
            self._send(reply, body)
        finally:
            fake._end_request(started)

    def _embeddings(self, fake: FakeOpenAI, body: dict[str, Any]) -> None:
        """Embeddings requests go to a log of their own (`embedding_requests`): chat
        calls are counted as before. A server made with `embeddings=False` has no such
        route, as a chat-only server would: a 404."""
        with fake.lock:
            fake.embedding_requests.append(body)
        if fake.embeddings:
            payload, status = embeddings_payload(body), 200
        else:
            payload, status = json.dumps({"error": {"message": "Not Found"}}).encode(), 404
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _send(self, reply: Scripted, body: dict[str, Any]) -> None:
        if reply.hang_up:
            self.close_connection = True
            return
        payload = reply_payload(reply, body)
        self.send_response(reply.status)
        self.send_header("content-type", reply.content_type)
        if reply.chunked:
            self.send_header("transfer-encoding", "chunked")
        else:
            self.send_header("content-length", str(len(payload)))
        for k, v in reply.headers.items():
            self.send_header(k, v)
        self.end_headers()
        if reply.chunked:
            self._send_chunked(payload)
            return
        if reply.cut_at is not None:
            # A body cut off mid-way: promise it all, send a part, hang up.
            self.wfile.write(payload[: reply.cut_at])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(payload)

    def _send_chunked(self, payload: bytes, size: int = 64 * 1024) -> None:
        """`payload` in HTTP/1.1 chunks, its length announced nowhere, as a server that
        streams its reply sends it."""
        for start in range(0, len(payload), size):
            piece = payload[start : start + size]
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")


class _OldHandler(_Handler):
    """An old server (keep_alive=False): HTTP/1.0 closes the connection after each reply."""

    protocol_version = "HTTP/1.0"


class FakeOpenAI:
    def __init__(
        self,
        default: Responder | None = None,
        keep_alive: bool = True,
        hidden_limit: int | None = None,
        embeddings: bool = True,
        idle_close_s: float | None = None,
    ) -> None:
        self.queue: deque[Scripted] = deque()
        self.embeddings = embeddings  # whether it serves `/embeddings`
        self.embedding_requests: list[dict[str, Any]] = []
        self.default = default or (lambda body: Scripted(content='{"utterance": "fine"}'))
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []  # as sent: a proxied request names the whole URL
        self.in_flight = 0
        self.max_in_flight = 0
        self.connections: set[tuple[str, int]] = set()  # client (host, port) pairs seen
        # A provider's undisclosed capacity: past it, a request is refused with a 429.
        self.hidden_limit = hidden_limit
        self.refused = 0
        self.start_times: list[float] = []
        # The request log: (arrived, answered) on the monotonic clock, one per request
        # served, so that a benchmark can measure how busy a client kept the server.
        self.spans: list[tuple[float, float]] = []
        self.lock = threading.Lock()
        # A connection left idle this long is closed, as vLLM's and llama.cpp's servers
        # close theirs after 5 s (None: kept until the client closes it).
        self.idle_close_s = idle_close_s
        self.httpd = _QuietServer(("127.0.0.1", 0), _Handler if keep_alive else _OldHandler)
        self.httpd.fake = self
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def _begin_request(
        self, body: dict[str, Any], headers: dict[str, str], path: str, client: tuple[str, int]
    ) -> Scripted:
        """Record a request as in flight and pick its reply: a 429 past the hidden limit,
        else the next scripted reply, else the default's."""
        with self.lock:
            self.connections.add(client)
            self.requests.append(body)
            self.headers.append(headers)
            self.paths.append(path)
            self.start_times.append(time.monotonic())
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if self.hidden_limit is not None and self.in_flight > self.hidden_limit:
                self.refused += 1
                return Scripted(status=429, headers={"retry-after": "0.05"})
            return self.queue.popleft() if self.queue else self.default(body)

    def _end_request(self, started: float) -> None:
        """The reply has gone out (or failed to): the request is no longer in flight."""
        with self.lock:
            self.in_flight -= 1
            self.spans.append((started, time.monotonic()))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def script(self, *replies: Scripted) -> None:
        self.queue.extend(replies)

    @property
    def calls(self) -> int:
        return len(self.requests)


@contextmanager
def fake_openai(
    default: Responder | None = None,
    keep_alive: bool = True,
    hidden_limit: int | None = None,
    embeddings: bool = True,
    idle_close_s: float | None = None,
) -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(default, keep_alive, hidden_limit, embeddings, idle_close_s)
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


def requested_schema(body: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema a chat request's response_format asks the reply to match; any
    object when it names none."""
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema")
    return schema if isinstance(schema, dict) else {"type": "object"}


def requested_name(body: dict[str, Any]) -> str:
    """The name of the schema a chat request asks for ("" when none): which role asks."""
    fmt = body.get("response_format") or {}
    return str((fmt.get("json_schema") or {}).get("name") or "")


def fill(schema: dict[str, Any], defs: dict[str, Any] | None = None, text: str = "ok") -> Any:
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return fill(defs[schema["$ref"].split("/")[-1]], defs, text)
    if "anyOf" in schema:
        return fill(schema["anyOf"][0], defs, text)
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        return {k: fill(v, defs, text) for k, v in props.items()}
    if kind == "array":
        return [fill(schema.get("items", {}), defs, text)] * max(1, schema.get("minItems", 1))
    if kind == "boolean":
        return True
    if kind in ("number", "integer"):
        return schema.get("maximum", 4)
    return text
