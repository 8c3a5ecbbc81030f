"""Serve a Starlette app with uvicorn until its work is done: the one loop behind
`disputelab host` and `disputelab annotate`. It tells the caller each invite link once
the server listens, then polls `finished` and stops the server when it says so (or on
Ctrl-C, which uvicorn handles)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping

from starlette.applications import Starlette

# A wildcard address is not one a browser can open: links name the host itself.
_WILDCARDS = ("0.0.0.0", "::")
_GRACE_S = 5


def invite_links(bind: str, port: int, prefix: str, tokens: Mapping[str, str]) -> dict[str, str]:
    """Each key's link: `http://HOST:PORT/PREFIX/TOKEN`."""
    shown = "localhost" if bind in _WILDCARDS else bind
    return {key: f"http://{shown}:{port}/{prefix}/{token}" for key, token in tokens.items()}


def serve_until(
    app: Starlette,
    *,
    bind: str,
    port: int,
    links: Mapping[str, str],
    finished: Callable[[], bool],
    poll_s: float,
    on_ready: Callable[[dict[str, str]], None] | None = None,
) -> None:
    """Serve `app` on `bind:port` until `finished()` (checked every `poll_s` seconds);
    `on_ready` hears `links` once the server listens."""
    import uvicorn

    # A page left open holds its event stream: once done, the server waits that long
    # for such connections before closing them, rather than until every tab is closed.
    config = uvicorn.Config(
        app, host=bind, port=port, log_level="warning", timeout_graceful_shutdown=_GRACE_S
    )
    server = uvicorn.Server(config)

    async def watch() -> None:
        while not server.started:
            await asyncio.sleep(0.05)
        if on_ready:
            on_ready(dict(links))
        while not finished():
            await asyncio.sleep(poll_s)
        server.should_exit = True

    async def serve() -> None:
        await asyncio.gather(server.serve(), watch())

    asyncio.run(serve())
