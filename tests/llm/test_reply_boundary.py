"""A provider's reply is checked where it enters (issue 46, item 4): token counts that no
real reply carries are recorded as unknown with a reason, never crash a run nor make a
cost negative; a reply is never lost from the cache over its metadata; a body past the
size cap (as sent or once inflated) is refused with a clear error; and `Retry-After` is
read as seconds and as an HTTP date. All against the real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gzip
import json
import sqlite3
import time
import zlib
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.base import (
    MAX_TOKEN_COUNT,
    ChatRequest,
    ChatResponse,
    Message,
    ModelError,
    TransientModelError,
)
from disputelab.llm.cache import Cached, ResponseCache, request_key
from disputelab.llm.openai_backend import OpenAICompatible
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.llm.wrappers import Ledger, Metered, Prices, Retrying

ASK = ChatRequest((Message("system", "You negotiate."), Message("user", "Your move?")))


def _backend(url: str, **kw: Any) -> OpenAICompatible:
    return OpenAICompatible("test-model", url, api_key_env=None, **kw)


@pytest.mark.parametrize(
    "count",
    [2**63, 2**64 + 5, -20, 1.5, "12", None, float("nan"), True, MAX_TOKEN_COUNT + 1],
)
def test_a_token_count_no_reply_carries_is_unknown_with_a_reason(count: Any) -> None:
    with fake_openai() as server:
        server.script(Scripted(content="hello", prompt_tokens=count, completion_tokens=3))
        r = asyncio.run(_backend(server.url).complete(ASK))
    assert r.text == "hello" and r.input_tokens is None and r.output_tokens == 3
    assert "prompt_tokens" in r.extra["usage_unknown"]


def test_a_huge_or_negative_count_is_never_charged_and_never_negative(tmp_path: Path) -> None:
    counts = iter([(2**63, 5), (-20_000_000, 5), (100, 10)])

    def reply(body: dict[str, Any]) -> Scripted:
        prompt, completion = next(counts)
        return Scripted(content="ok", prompt_tokens=prompt, completion_tokens=completion)

    ledger = Ledger()
    with fake_openai(reply) as server:
        model = Metered(_backend(server.url), ledger, "parties", Prices(1.0, 1.0))

        async def three() -> None:
            for sample in range(3):
                await model.complete(ChatRequest(ASK.messages, sample=sample))

        asyncio.run(three())
    u = ledger.roles["parties"]
    assert (u.calls, u.tokens_unknown, u.input_tokens, u.output_tokens) == (3, 2, 100, 10)
    assert u.cost_usd is None  # unknown, not negative and not a partial sum
    assert u.tokens_unknown_reason is not None and "prompt_tokens" in u.tokens_unknown_reason


def test_a_reply_with_absurd_metadata_still_reaches_the_cache_with_its_neighbours(
    tmp_path: Path,
) -> None:
    """One bad count used to fail the whole group's write, dropping every good reply."""
    cache = ResponseCache(tmp_path / "c.sqlite")
    keys = [f"k{i}" for i in range(250)]
    for i, key in enumerate(keys):
        tokens = 2**63 if i == 17 else -1 if i == 18 else i
        cache.put(key, ChatResponse(f"reply {i}", "m", tokens, tokens))
    cache.close()
    db = sqlite3.connect(tmp_path / "c.sqlite")
    rows = dict(db.execute("SELECT key, input_tokens FROM responses").fetchall())
    assert len(rows) == 250
    assert rows["k17"] is None and rows["k18"] is None and rows["k19"] == 19


def test_a_single_run_with_an_overflowing_count_completes_and_reports_unknown_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    def reply(body: dict[str, Any]) -> Scripted:
        text = json.dumps(fill(requested_schema(body), text="Could we split it?"))
        return Scripted(content=text, prompt_tokens=2**63, completion_tokens=-5)

    with fake_openai(reply) as server:
        model = f"openai:m@{server.url}"
        args = ["--store", str(tmp_path / "runs"), "run", "tenancy", "--model", model]
        r = CliRunner().invoke(app, [*args, "--mediator", "social", "--budget", "4"])
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output and "$-" not in r.output
    assert "cost unknown" in r.output and "prompt_tokens" in r.output
    cache = sqlite3.connect(tmp_path / "runs" / "cache.sqlite")
    assert cache.execute("SELECT COUNT(*) FROM responses").fetchone()[0] >= 1


# ---- the size cap ----------------------------------------------------------------------


def test_a_body_larger_than_the_cap_is_refused_saying_so() -> None:
    with fake_openai() as server:
        server.script(Scripted(content="x" * 200_000))
        with pytest.raises(TransientModelError, match="larger than the 65,536-byte cap"):
            asyncio.run(_backend(server.url, max_reply_bytes=65_536).complete(ASK))


def test_a_small_gzip_body_that_inflates_past_the_cap_is_refused_without_inflating_it() -> None:
    bomb = gzip.compress(b" " * 50_000_000)  # about 50 KB that inflates to 50 MB
    with fake_openai() as server:
        server.script(Scripted(raw=bomb, headers={"Content-Encoding": "gzip"}))
        with pytest.raises(TransientModelError, match="inflates past the 1,048,576-byte cap"):
            asyncio.run(_backend(server.url, max_reply_bytes=1 << 20).complete(ASK))


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "identity"])
def test_compressed_replies_within_the_cap_are_read(encoding: str) -> None:
    body = json.dumps(
        {"choices": [{"message": {"content": "fine"}, "finish_reason": "stop"}]}
    ).encode()
    packed = {"gzip": gzip.compress, "deflate": zlib.compress, "identity": bytes}[encoding](body)
    with fake_openai() as server:
        server.script(Scripted(raw=packed, headers={"Content-Encoding": encoding}))
        r = asyncio.run(_backend(server.url, max_reply_bytes=1 << 20).complete(ASK))
    assert r.text == "fine" and r.extra["usage_unknown"]


def test_an_encoding_the_client_never_asked_for_is_a_clear_error() -> None:
    with fake_openai() as server:
        server.script(Scripted(raw=b"\x00\x01", headers={"Content-Encoding": "zstd"}))
        with pytest.raises(ModelError, match="zstd"):
            asyncio.run(_backend(server.url).complete(ASK))


# ---- Retry-After -----------------------------------------------------------------------


def _retry_after_of(header: str) -> float | None:
    with fake_openai() as server:
        server.script(Scripted(status=429, headers={"retry-after": header}))
        with pytest.raises(TransientModelError) as info:
            asyncio.run(_backend(server.url).complete(ASK))
    return info.value.retry_after


def test_retry_after_as_an_http_date_is_honoured() -> None:
    soon = _retry_after_of(formatdate(time.time() + 30, usegmt=True))
    assert soon is not None and 20 < soon <= 31
    assert _retry_after_of("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # already past


@pytest.mark.parametrize(("header", "seconds"), [("7", 7.0), ("-3", 0.0), ("nan", None)])
def test_retry_after_in_seconds_is_read_and_nonsense_is_ignored(
    header: str, seconds: float | None
) -> None:
    assert _retry_after_of(header) == seconds


def test_a_retry_after_date_far_ahead_ends_the_call_at_once_saying_why() -> None:
    with fake_openai() as server:
        server.script(
            *[Scripted(status=429, headers={"retry-after": "Thu, 01 Jan 2099 00:00:00 GMT"})] * 5
        )
        model = Retrying(_backend(server.url), attempts=5, base_s=0.01, max_retry_after_s=60)
        with pytest.raises(TransientModelError, match="asked to wait"):
            asyncio.run(model.complete(ASK))
        assert server.calls == 1


def test_the_cache_key_of_a_request_is_unchanged_by_reply_metadata(tmp_path: Path) -> None:
    """A replayed reply is the same whatever counts its first answer carried."""
    with fake_openai() as server:
        server.script(Scripted(content="once", prompt_tokens=2**70))
        cache = ResponseCache(tmp_path / "c.sqlite")
        model = Cached(_backend(server.url), cache)

        async def twice() -> tuple[ChatResponse, ChatResponse]:
            return await model.complete(ASK), await model.complete(ASK)

        first, again = asyncio.run(twice())
        cache.close()
    assert server.calls == 1 and again.cached and again.text == first.text == "once"
    assert ResponseCache(tmp_path / "c.sqlite").get(request_key(model.name, ASK)) is not None
