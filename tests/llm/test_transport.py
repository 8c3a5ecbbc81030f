"""The HTTP transport under the model backends: proxies from the environment, pools per
event loop that keep their connections through a pause, and what each failure below
HTTP is called."""

from __future__ import annotations

import asyncio

import pytest

from disputelab.llm.base import ChatRequest, Message
from disputelab.llm.openai_backend import OpenAICompatible
from disputelab.llm.testing import fake_openai
from disputelab.llm.transport import HttpTransport

ASK = ChatRequest((Message("user", "Your move?"),))
ELSEWHERE = "http://model-host.invalid:8000/v1"  # resolves nowhere: only a proxy reaches it


def _only(monkeypatch: pytest.MonkeyPatch, **env: str) -> None:
    """Set these proxy variables and clear the rest (lower case ones win over upper)."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)


def _complete(url: str) -> str:
    backend = OpenAICompatible("m", url, api_key_env=None, timeout_s=60)

    async def go() -> str:
        try:
            return (await backend.complete(ASK)).text
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_the_environments_http_proxy_carries_the_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    with fake_openai() as proxy:
        _only(monkeypatch, HTTP_PROXY=proxy.url.removesuffix("/v1"))
        assert _complete(ELSEWHERE)
    assert proxy.paths == [f"{ELSEWHERE}/chat/completions"]  # the proxy was asked for it


def test_no_proxy_hosts_are_reached_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    _only(monkeypatch, HTTP_PROXY="http://127.0.0.1:9", NO_PROXY="127.0.0.1")  # 9: closed
    with fake_openai() as server:
        assert _complete(server.url)
    assert server.paths == ["/v1/chat/completions"]


def test_a_pool_is_opened_per_event_loop_and_closed_on_it() -> None:
    transport = HttpTransport(connections=4, timeout_s=60)
    with fake_openai() as server:

        async def post() -> int:
            reply = await transport.post(f"{server.url}/chat/completions", b"{}", {})
            return reply.status

        assert asyncio.run(post()) == 200
        assert asyncio.run(post()) == 200  # a second loop: a fresh pool, not a dead one

        async def post_then_close() -> None:
            await post()
            await transport.aclose()

        asyncio.run(post_then_close())
    assert transport.closed and transport.connections == 100  # never below the SDK's pool


def test_a_proxy_variable_that_is_not_a_url_is_one_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from disputelab.llm.models import ModelConfigError, parse_model

    _only(monkeypatch, HTTP_PROXY="http://[::bad")
    with pytest.raises(ModelConfigError, match=r"a proxy in the environment .* is not a valid URL"):
        parse_model("openai:m@http://127.0.0.1:9/v1", {})


def test_all_proxy_and_a_proxy_without_a_scheme_are_honoured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with fake_openai() as proxy:
        host_port = proxy.url.removeprefix("http://").removesuffix("/v1")
        _only(monkeypatch, ALL_PROXY=f"http://{host_port}")
        assert _complete(ELSEWHERE)
        _only(monkeypatch, HTTP_PROXY=host_port)  # host:port, as many set it
        assert _complete(ELSEWHERE)
    assert proxy.paths == [f"{ELSEWHERE}/chat/completions"] * 2


def test_a_closed_pool_is_opened_again_when_used_again() -> None:
    transport = HttpTransport(connections=4, timeout_s=60)
    with fake_openai() as server:

        async def post_close_post() -> int:
            await transport.post(f"{server.url}/chat/completions", b"{}", {})
            await transport.aclose()
            return (await transport.post(f"{server.url}/chat/completions", b"{}", {})).status

        assert asyncio.run(post_close_post()) == 200


def test_pooled_connections_outlive_a_pause_longer_than_the_sdks_five_seconds() -> None:
    """A run starved of CPU leaves its pooled connections idle for seconds between
    calls; with the SDK's 5 s they were closed and opened again (issue 46, item 8)."""
    transport = HttpTransport(connections=16, timeout_s=60)
    with fake_openai() as server:

        async def wave() -> list[int]:
            posts = [transport.post(f"{server.url}/chat/completions", b"{}", {}) for _ in range(16)]
            return [reply.status for reply in await asyncio.gather(*posts)]

        async def pause_between_waves() -> None:
            try:
                assert await wave() == [200] * 16
                await asyncio.sleep(6.0)  # idle, as between calls of a starved run
                assert await wave() == [200] * 16
            finally:
                await transport.aclose()

        asyncio.run(pause_between_waves())
    assert server.calls == 32
    assert len(server.connections) == 16  # each opened once, then reused


def test_a_server_that_closes_idle_connections_sooner_costs_no_failed_call() -> None:
    """The pool keeps connections longer than some servers do (vLLM and llama.cpp's
    close theirs after 5 s): what the server has closed is dropped, not reused."""
    transport = HttpTransport(connections=4, timeout_s=60)
    with fake_openai(idle_close_s=0.3) as server:

        async def post_pause_post() -> list[int]:
            url = f"{server.url}/chat/completions"
            try:
                first = await transport.post(url, b"{}", {})
                await asyncio.sleep(1.5)  # the server gives up on the idle connection
                second = await transport.post(url, b"{}", {})
                return [first.status, second.status]
            finally:
                await transport.aclose()

        assert asyncio.run(post_pause_post()) == [200, 200]
    assert len(server.connections) == 2  # the closed one was not reused
