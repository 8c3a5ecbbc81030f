"""An experiment's concurrency reaches the endpoint: no hidden cap of 8 calls in flight,
a connection pool that keeps one connection per call alive, and identical requests in
flight together answered by one call."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.base import ChatRequest, ChatResponse, Message, TransientModelError
from disputelab.llm.cache import Cached, ResponseCache
from disputelab.llm.models import ModelHub, Profile, parse_model
from disputelab.llm.openai_backend import OpenAICompatible
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema

ASK = ChatRequest((Message("user", "Your move?"),))


def slow(body: dict[str, Any]) -> Scripted:
    schema = requested_schema(body)
    return Scripted(content=json.dumps(fill(schema, text="Half each?")), delay_s=0.3)


def _experiment(tmp_path: Path, model: str, concurrency: int) -> Any:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: wide\nscenarios: [tenancy]\nconditions: [general]\nmediators: [none]\n"
        f"parties: llm\nmodels: {{parties: '{model}'}}\nreplicates: {concurrency}\nbudget: 2\n"
    )
    args = ["--store", str(tmp_path / "runs"), "experiment", str(spec)]
    return CliRunner().invoke(app, [*args, "--concurrency", str(concurrency)])


def test_the_experiments_concurrency_reaches_an_endpoint_without_a_limit_of_its_own(
    tmp_path: Path,
) -> None:
    with fake_openai(slow) as server:
        r = _experiment(tmp_path, f"openai:m@{server.url}", concurrency=16)
    assert r.exit_code == 0, r.output
    assert server.max_in_flight > 8  # the old hidden cap


def test_a_profile_that_caps_the_run_is_named_in_a_warning_and_obeyed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with fake_openai(slow) as server:
        (tmp_path / "disputelab.toml").write_text(
            f'[models.narrow]\nmodel = "m"\nbase_url = "{server.url}"\nconcurrency = 3\n'
        )
        r = _experiment(tmp_path, "narrow", concurrency=12)
    assert r.exit_code == 0, r.output
    flat = " ".join(r.stderr.split())
    assert "warning: narrow: its profile allows 3 calls in flight, fewer than the run's" in flat
    assert server.max_in_flight <= 3


def test_endpoint_limits_follow_the_run_unless_a_profile_sets_one() -> None:
    url = "http://127.0.0.1:9/v1"
    assert parse_model(f"openai:m@{url}", {}, concurrency=64).limit(64) == 64
    assert parse_model(f"openai:m@{url}", {}).limit(None) == 8
    capped = parse_model("p", {"p": Profile(model="m", base_url=url, concurrency=4)})
    assert capped.limit(64) == 4 and capped.caps(64) and not capped.caps(4)


def test_the_pool_keeps_a_connection_alive_per_call_in_flight() -> None:
    """Two waves of 120 calls at once: the second reuses the first wave's connections.
    The SDK's default pool keeps 100 alive, so it would open at least 20 new ones."""

    async def waves(backend: OpenAICompatible) -> None:
        for _ in range(2):
            await asyncio.gather(*(backend.complete(ASK) for _ in range(120)))
        await backend.aclose()

    with fake_openai(lambda body: Scripted(content="ok", delay_s=0.5)) as server:
        backend = OpenAICompatible("m", server.url, None, timeout_s=120, connections=120)
        asyncio.run(waves(backend))
    assert server.calls == 240
    assert len(server.connections) <= 125  # a few may be replaced; not a wave's worth


class _Counting:
    """A model that answers after a pause, counting calls; fails the first if told to."""

    def __init__(self, fail_first: bool = False) -> None:
        self.name = "counting"
        self.calls = 0
        self.fail_first = fail_first

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.calls += 1
        await asyncio.sleep(0.05)
        if self.fail_first and self.calls == 1:
            raise TransientModelError("counting: server error 503")
        return ChatResponse("answer", self.name, 5, 3)


def test_identical_requests_in_flight_together_make_one_call(tmp_path: Path) -> None:
    inner = _Counting()
    cached = Cached(inner, ResponseCache(tmp_path / "cache.sqlite"))

    async def together() -> list[ChatResponse]:
        return await asyncio.gather(*(cached.complete(ASK) for _ in range(5)))

    replies = asyncio.run(together())
    assert inner.calls == 1
    assert [r.text for r in replies] == ["answer"] * 5
    assert sorted(r.cached for r in replies) == [False, True, True, True, True]


def test_different_samples_are_never_coalesced(tmp_path: Path) -> None:
    inner = _Counting()
    cached = Cached(inner, ResponseCache(tmp_path / "cache.sqlite"))
    samples = [ChatRequest(ASK.messages, temperature=0.7, sample=i) for i in range(4)]

    async def together() -> list[ChatResponse]:
        return await asyncio.gather(*(cached.complete(r) for r in samples))

    asyncio.run(together())
    assert inner.calls == 4


def test_when_the_first_call_fails_the_waiters_call_for_themselves(tmp_path: Path) -> None:
    inner = _Counting(fail_first=True)
    cached = Cached(inner, ResponseCache(tmp_path / "cache.sqlite"))

    async def together() -> list[ChatResponse | BaseException]:
        return await asyncio.gather(
            *(cached.complete(ASK) for _ in range(3)), return_exceptions=True
        )

    first, *rest = asyncio.run(together())
    assert isinstance(first, TransientModelError)
    assert all(isinstance(r, ChatResponse) and r.text == "answer" for r in rest)
    assert inner.calls == 2  # the failed leader, then one new leader for the two waiters


def test_a_hub_sized_for_the_run_builds_its_stack_with_that_limit(tmp_path: Path) -> None:
    hub = ModelHub(None, concurrency=32)
    model = hub.model("openai:m@http://127.0.0.1:9/v1", "parties")
    assert model.name.startswith("openai:m@")
    assert hub.concurrency == 32
