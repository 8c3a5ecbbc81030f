"""HTTP for the model backends: a keep-alive aiohttp pool per event loop, and what its
failures mean for a model call.

The backends post JSON they have already prepared, so all this layer does is move bytes.
It is aiohttp directly, the transport the `openai[aiohttp]` extra plugs under the SDK,
without the httpx request and response objects the SDK wraps around it: at 64 calls in
flight that wrapping cost more CPU than the exchange itself (0.51 against 0.30 ms a call,
and 2.26 ms for the SDK's `create`; `python benchmarks/bench_http_transport.py`).
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import aiohttp
import httpx2

from disputelab.llm.base import TransientModelError
from disputelab.llm.reply_body import ACCEPTED_ENCODINGS, CHUNK, MAX_REPLY_BYTES, read_capped

# How long an idle pooled connection is kept. The openai SDK keeps 5 s, which held in a
# run with CPU to spare, but aiohttp reuses the longest-idle connection first: with C
# calls in flight every pooled connection waits its turn through the whole pool, and a
# client starved of CPU (1,024 in flight on two busy cores, 25-30 calls a second) let
# most of them pass 5 s between uses. The 10,000-episode soak then reopened a connection
# every 9 calls, and reproduced smaller, 742 connections were closed as idle and
# reopened in 4,000 calls. Idle connections there came back within 11 s (p99) at 25
# calls a second and 22 s at 13. 30 s stays below the idle timeout of the servers and
# load balancers in front of hosted providers (60 s and more); a local server that
# closes sooner (vLLM and llama.cpp's, after 5 s) sends its FIN, and the pool drops
# what the server has closed before reusing it.
KEEPALIVE_S = 30.0
MIN_CONNECTIONS = 100  # the SDK's default pool size; a larger run gets one per call


@dataclass(frozen=True)
class HttpReply:
    status: int
    headers: Mapping[str, str]
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class HttpTransport:
    """POSTs over a pool that keeps at least one connection alive per call in flight.

    aiohttp's pool belongs to the event loop it first ran on, so a transport used again
    under a new loop (one `asyncio.run` after another) opens a fresh pool there."""

    def __init__(
        self,
        connections: int,
        timeout_s: float,
        tls: bool = True,
        max_reply_bytes: int = MAX_REPLY_BYTES,
    ) -> None:
        self.connections = max(MIN_CONNECTIONS, connections)
        self.max_reply_bytes = max_reply_bytes  # as sent, and again once inflated
        self.tls = tls  # False for a plain-HTTP endpoint: no certificates to load
        # Waiting for a pooled connection, connecting and each wait for the server's next
        # bytes are bounded, as the SDK bounds them; a whole reply is not, since a long
        # generation sends nothing until it is done and the call's own deadline covers it.
        self.timeout = aiohttp.ClientTimeout(
            total=None, connect=timeout_s, sock_connect=timeout_s, sock_read=timeout_s
        )
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._proxies: dict[str, str | None] = {}

    def proxy_for(self, url: str) -> str | None:
        """The proxy the environment names for `url` (HTTP_PROXY, HTTPS_PROXY or
        ALL_PROXY, less NO_PROXY), as the SDK's httpx client honoured it. Read once per
        URL: aiohttp's own `trust_env` reads the environment and ~/.netrc on every
        request, which doubled the CPU of a call. A proxy that is not a URL raises
        httpx2.InvalidURL, as the SDK's client did."""
        parts = urlsplit(url)
        proxies = urllib.request.getproxies()
        proxy = proxies.get(parts.scheme) or proxies.get("all")
        if proxy is not None and "://" not in proxy:
            proxy = f"http://{proxy}"  # `host:port`, as httpx reads it
        if urllib.request.proxy_bypass(parts.hostname or ""):
            proxy = None
        if proxy is not None:
            httpx2.URL(proxy)
        self._proxies[url] = proxy
        return proxy

    def _session_here(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._session
        if session is None or session.closed or self._loop is not loop:
            # A pool left on an ended loop cannot be closed from here; its sockets go with
            # it when it is collected.
            connector = aiohttp.TCPConnector(
                limit=self.connections,
                keepalive_timeout=KEEPALIVE_S,
                ssl=_tls_context() if self.tls else True,
            )
            # Bodies are inflated here, within the cap (`read_capped`), not by aiohttp.
            session = aiohttp.ClientSession(
                connector=connector, timeout=self.timeout, auto_decompress=False
            )
            self._session, self._loop = session, loop
        return session

    async def post(self, url: str, content: bytes, headers: Mapping[str, str]) -> HttpReply:
        """Send `content`; the whole reply, inflated. aiohttp's errors pass through (see
        `failure`); a body past the cap raises `ReplyBodyError`."""
        proxy = self._proxies[url] if url in self._proxies else self.proxy_for(url)
        session = self._session_here()
        sent = {**headers, "Accept-Encoding": ACCEPTED_ENCODINGS}
        async with session.post(url, data=content, headers=sent, proxy=proxy) as response:
            body = await read_capped(
                response.content.iter_chunked(CHUNK),
                response.headers.get("Content-Encoding", ""),
                response.content_length,
                self.max_reply_bytes,
            )
            return HttpReply(response.status, response.headers, body)

    async def aclose(self) -> None:
        """Close the pool; call it on the event loop that used it."""
        if self._session is not None:
            await self._session.close()

    @property
    def closed(self) -> bool:
        return self._session is None or self._session.closed


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """TLS as the SDK sets it up (the system's trust store on macOS and Windows through
    truststore, SSL_CERT_FILE, SSL_CERT_DIR), so HTTPS trusts what it trusted. Built once:
    loading the certificates takes tens of milliseconds."""
    return httpx2.create_ssl_context()


def failure(name: str, exc: BaseException, timeout_s: float) -> TransientModelError:
    """What a failure below HTTP means for the call: all are worth retrying, and a timeout
    also says the server is overloaded (the adaptive limit backs off)."""
    if isinstance(exc, TimeoutError):  # aiohttp's connect and read timeouts are these too
        return TransientModelError(
            f"{name}: no reply within the {timeout_s:g} s timeout", overload=True
        )
    if isinstance(exc, aiohttp.ClientConnectorError):  # no connection was made
        return TransientModelError(f"{name}: cannot connect")
    dropped = (aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError, aiohttp.ClientOSError)
    if isinstance(exc, dropped):  # connected, then the server or the network hung up
        return TransientModelError(
            f"{name}: the connection dropped before the reply was complete ({type(exc).__name__})"
        )
    if isinstance(exc, aiohttp.TooManyRedirects):
        return TransientModelError(f"{name}: the server redirected too many times")
    return TransientModelError(f"{name}: cannot connect ({type(exc).__name__})")
