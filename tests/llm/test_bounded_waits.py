"""No model call waits without bound, and a refusal says what the server said.

A request has a timeout; a whole call, retries and waits included, has a deadline; a
server's Retry-After is honoured only up to a cap, beyond which the call fails at once
with the reason (the episode fails and `--resume` tries it again later).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app, hoist_global_options
from disputelab.llm.base import ChatRequest, Message, ModelError, TransientModelError
from disputelab.llm.models import ModelHub, Profile, parse_model
from disputelab.llm.openai_backend import OpenAICompatible
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.llm.wrappers import Ledger, Metered, Prices, Retrying

ASK = ChatRequest((Message("system", "You negotiate."), Message("user", "Your move?")))


def _backend(url: str, timeout_s: float = 5.0) -> OpenAICompatible:
    return OpenAICompatible("test-model", url, api_key_env=None, timeout_s=timeout_s)


def _error_body(message: str) -> bytes:
    """An error in the shape llama.cpp's server and the OpenAI API both use."""
    return json.dumps(
        {"error": {"code": 400, "message": message, "type": "invalid_request_error"}}
    ).encode()


def test_a_retry_after_beyond_the_cap_fails_the_call_at_once_with_the_reason() -> None:
    with fake_openai() as server:
        server.script(Scripted(status=429, headers={"retry-after": "300"}), Scripted(content="ok"))
        model = Retrying(_backend(server.url), max_retry_after_s=60)
        with pytest.raises(TransientModelError, match="asked to wait 300 s, more than the 60 s"):
            asyncio.run(model.complete(ASK))
    assert server.calls == 1


def test_a_retry_after_within_the_cap_is_honoured() -> None:
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    with fake_openai() as server:
        server.script(Scripted(status=503, headers={"retry-after": "7"}), Scripted(content="ok"))
        model = Retrying(_backend(server.url), max_retry_after_s=60, sleep=record)
        assert asyncio.run(model.complete(ASK)).text == "ok"
    assert waits == [7.0]


def test_a_server_that_never_answers_is_given_up_on_at_the_calls_deadline() -> None:
    with fake_openai(lambda body: Scripted(content="late", delay_s=30)) as server:
        model = Retrying(_backend(server.url, timeout_s=0.5), base_s=0.01, deadline_s=1.2)
        with pytest.raises(TransientModelError, match="deadline") as info:
            asyncio.run(model.complete(ASK))
    # Six attempts were allowed; the deadline, not the attempt count, ended the call.
    assert "gave up after 6 attempts" not in str(info.value)
    assert server.calls < 6


def test_the_deadline_is_three_timeouts_unless_a_profile_sets_it() -> None:
    plain = parse_model("openai:m@http://127.0.0.1:9/v1", {}, timeout_s=20)
    assert (plain.timeout_s, plain.call_deadline_s) == (20, 60)
    profile = Profile(model="m", base_url="http://127.0.0.1:9/v1", timeout=5, deadline=11)
    ep = parse_model("p", {"p": profile})
    assert (ep.timeout_s, ep.call_deadline_s, ep.max_retry_after_s) == (5, 11, 60)
    assert parse_model("p", {"p": profile}, timeout_s=2).timeout_s == 2  # --timeout wins


def test_a_bad_request_shows_the_servers_reason() -> None:
    with fake_openai() as server:
        server.script(
            Scripted(status=400, raw=_error_body("'temperature' must be between 0 and 2"))
        )
        with pytest.raises(ModelError, match="bad request \\(400\\): 'temperature' must be"):
            asyncio.run(Retrying(_backend(server.url)).complete(ASK))
    assert server.calls == 1


def test_a_prompt_past_the_context_window_says_so() -> None:
    llama_cpp_words = "the request exceeds the available context size, try increasing it"
    with fake_openai() as server:
        server.script(Scripted(status=400, raw=_error_body(llama_cpp_words)))
        with pytest.raises(ModelError, match="longer than the model's context window"):
            asyncio.run(Retrying(_backend(server.url)).complete(ASK))


def test_a_server_error_carries_the_servers_reason_too() -> None:
    with fake_openai() as server:
        server.script(*[Scripted(status=500, raw=_error_body("model is loading"))] * 2)
        model = Retrying(_backend(server.url), attempts=2, base_s=0.01)
        with pytest.raises(TransientModelError, match="server error 500: model is loading"):
            asyncio.run(model.complete(ASK))


def test_the_timeout_option_reaches_every_endpoint(tmp_path: Path) -> None:
    with fake_openai(lambda body: Scripted(content="late", delay_s=30)) as server:
        r = CliRunner().invoke(
            app,
            hoist_global_options(
                [
                    "--store",
                    str(tmp_path / "runs"),
                    "run",
                    "tenancy",
                    "--model",
                    f"openai:m@{server.url}",
                    "--budget",
                    "2",
                    "--timeout",  # written after the command, like --store
                    "0.5",
                ]
            ),
        )
    assert r.exit_code == 2, r.output
    assert "deadline" in r.output and "1.5 s" in r.output


@pytest.mark.parametrize("value", ["0", "-1", "5000", "soon"])
def test_a_bad_timeout_is_a_usage_error(tmp_path: Path, value: str) -> None:
    r = CliRunner().invoke(app, ["--store", str(tmp_path), "--timeout", value, "runs"])
    assert r.exit_code == 2 and "--timeout" in r.output


def test_a_role_without_calls_costs_nothing_however_it_is_priced() -> None:
    assert Prices().cost(0, 0) == 0.0
    assert Prices().cost(10, 2) is None  # unknown prices stay unknown once tokens flow
    ledger = Ledger()
    Metered(_backend("http://127.0.0.1:9/v1"), ledger, "judge", Prices())
    assert ledger.roles["judge"].cost_usd == 0.0


async def _use_then_close(hub: ModelHub, url: str) -> OpenAICompatible:
    """One call through the hub's endpoint at `url`, then close the hub; its backend."""
    await hub.model(f"openai:m@{url}", "parties").complete(ASK)
    (backend,) = hub._backends
    await hub.aclose()
    assert isinstance(backend, OpenAICompatible)
    return backend


def test_closing_the_hub_closes_every_endpoints_connections() -> None:
    with fake_openai() as server:
        backend = asyncio.run(_use_then_close(ModelHub(None), server.url))
    assert backend.http.closed


def test_a_hub_used_again_after_closing_closes_its_new_connections_too() -> None:
    hub = ModelHub(None)
    with fake_openai() as server:
        first = asyncio.run(_use_then_close(hub, server.url))
        again = asyncio.run(_use_then_close(hub, server.url))  # a new event loop: a new pool
    assert again is first and again.http.closed and server.calls == 2


def test_the_timeout_option_reaches_the_embedded_model() -> None:
    from disputelab.llm.models import parse_model

    # The embedded model bounds each call itself, from when the call gets the model:
    # --timeout is that bound; without it, a deadline scaled from the tokens asked.
    given = parse_model("local", {}, timeout_s=400)
    assert given.bounds_own_calls and given.call_deadline_s is None
    assert given.backend.timeout_s == 400  # type: ignore[attr-defined]
    assert parse_model("local", {}).backend.timeout_s is None  # type: ignore[attr-defined]
