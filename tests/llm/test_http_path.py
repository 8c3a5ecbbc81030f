"""The model layer over real HTTP: retries, re-asks, cache, limits and cost, no network."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from disputelab.llm.base import (
    ChatRequest,
    ChatResponse,
    Message,
    ModelError,
    ModelReplyError,
    TransientModelError,
)
from disputelab.llm.cache import Cached, ResponseCache
from disputelab.llm.openai_backend import OpenAICompatible
from disputelab.llm.structured import ask_structured
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.llm.wrappers import Ledger, Limited, Metered, Prices, Retrying

ASK = ChatRequest((Message("system", "You negotiate."), Message("user", "Your move?")))


class Reply(BaseModel):
    utterance: str
    rating: float


SCHEMA = Reply.model_json_schema()
STRUCTURED = ChatRequest(ASK.messages, schema=SCHEMA, schema_name="reply")
GOOD = '{"utterance": "Let us split it.", "rating": 3.5}'


def _backend(url: str, **kw: object) -> OpenAICompatible:
    return OpenAICompatible("test-model", url, api_key_env=None, **kw)  # type: ignore[arg-type]


def _fast_retry(inner: object, attempts: int = 4) -> Retrying:
    return Retrying(inner, attempts=attempts, base_s=0.01, cap_s=0.05)  # type: ignore[arg-type]


def test_a_reply_carries_text_and_token_counts() -> None:
    with fake_openai() as server:
        server.script(Scripted(content="hello", prompt_tokens=20, completion_tokens=3))
        r = asyncio.run(_backend(server.url).complete(ASK))
    assert (r.text, r.input_tokens, r.output_tokens) == ("hello", 20, 3)
    assert server.requests[0]["messages"][1] == {"role": "user", "content": "Your move?"}


def test_429_is_retried_after_the_servers_retry_after() -> None:
    with fake_openai() as server:
        server.script(Scripted(status=429, headers={"retry-after": "0.3"}), Scripted(content="ok"))
        model = _fast_retry(_backend(server.url))
        r = asyncio.run(model.complete(ASK))
        waited = server.start_times[1] - server.start_times[0]
    assert r.text == "ok" and r.retries == 1 and model.retries == 1
    # A lower bound, which load can only lengthen: the second request came no sooner than
    # the server asked. Nothing in the tests bounds how long work may take.
    assert waited >= 0.3


def test_server_errors_and_timeouts_are_retried() -> None:
    with fake_openai() as server:
        server.script(
            Scripted(status=500),
            Scripted(status=503),
            # Well past the timeout, while an ordinary reply stays well inside it even on
            # a machine at load 10 (a 0.3 s timeout once cut off the final reply too).
            Scripted(content="late", delay_s=12.0),
            Scripted(content="ok"),
        )
        model = _fast_retry(_backend(server.url, timeout_s=4.0), attempts=5)
        r = asyncio.run(model.complete(ASK))
    assert r.text == "ok" and r.retries == 3 and server.calls == 4


def test_retrying_is_bounded_and_says_so() -> None:
    with fake_openai() as server:
        server.script(*[Scripted(status=502)] * 5)
        model = _fast_retry(_backend(server.url), attempts=3)
        with pytest.raises(TransientModelError, match="gave up after 3 attempts"):
            asyncio.run(model.complete(ASK))
    assert server.calls == 3


def test_a_refused_request_is_not_retried() -> None:
    with fake_openai() as server:
        server.script(Scripted(status=401))
        with pytest.raises(ModelError, match="refused \\(401\\)") as info:
            asyncio.run(_fast_retry(_backend(server.url)).complete(ASK))
    assert not isinstance(info.value, TransientModelError)
    assert server.calls == 1


def test_a_connection_failure_is_transient() -> None:
    model = _fast_retry(_backend("http://127.0.0.1:9/v1", timeout_s=0.5), attempts=2)
    with pytest.raises(TransientModelError, match="cannot connect"):
        asyncio.run(model.complete(ASK))


def test_a_reply_slower_than_the_timeout_is_named_as_a_timeout() -> None:
    with fake_openai() as server:
        server.script(Scripted(content="late", delay_s=3.0))
        with pytest.raises(
            TransientModelError, match=r"no reply within the 0\.5 s timeout"
        ) as info:
            asyncio.run(_backend(server.url, timeout_s=0.5).complete(ASK))
    assert info.value.overload  # a timeout tells the adaptive limit to back off


def test_a_reply_cut_off_mid_body_is_named_as_a_dropped_connection() -> None:
    with fake_openai() as server:
        server.script(Scripted(content="a reply long enough to cut", cut_at=20))
        with pytest.raises(TransientModelError, match="dropped before the reply was complete"):
            asyncio.run(_backend(server.url).complete(ASK))


def test_a_backend_used_under_a_second_event_loop_gets_a_fresh_pool() -> None:
    with fake_openai() as server:
        backend = _backend(server.url)
        first = asyncio.run(backend.complete(ASK))
        second = asyncio.run(backend.complete(ASK))
    assert first.text == second.text and server.calls == 2


def test_a_lone_surrogate_in_a_prompt_is_sent_escaped_and_cached(tmp_path: Path) -> None:
    # A model may send "\\ud800" in its JSON; its words come back in the next prompt.
    odd = ChatRequest((Message("user", "they said \ud800 and left"),))
    with fake_openai() as server:
        model = Cached(_backend(server.url), ResponseCache(tmp_path / "c.sqlite"))
        first = asyncio.run(model.complete(odd))
        again = asyncio.run(model.complete(odd))
    assert server.requests[0]["messages"][0]["content"] == "they said \ud800 and left"
    assert server.calls == 1 and again.cached and again.text == first.text


def test_a_lone_surrogate_in_a_reply_becomes_the_replacement_character(tmp_path: Path) -> None:
    # The reply's JSON escapes half a surrogate pair; a whole pair is a real character.
    with fake_openai() as server:
        server.script(Scripted(content="a \ud800 b \U0001f600 c"))
        model = Cached(_backend(server.url), ResponseCache(tmp_path / "c.sqlite"))
        first = asyncio.run(model.complete(ASK))
        again = asyncio.run(model.complete(ASK))
    assert first.text == "a \ufffd b \U0001f600 c"
    assert again.cached and again.text == first.text and server.calls == 1


def test_a_gzipped_429_is_still_a_rate_limit_with_its_retry_after() -> None:
    body = gzip.compress(b'{"error": {"message": "slow down", "type": "rate_limit"}}')
    headers = {"Content-Encoding": "gzip", "Retry-After": "7"}
    with fake_openai() as server:
        server.script(Scripted(status=429, raw=body, headers=headers))
        with pytest.raises(TransientModelError, match="rate limited") as info:
            asyncio.run(_backend(server.url).complete(ASK))
    assert info.value.retry_after == 7.0


def test_structured_output_asks_for_the_schema() -> None:
    with fake_openai() as server:
        server.script(Scripted(content=GOOD))
        reply, responses = asyncio.run(
            ask_structured(_backend(server.url), STRUCTURED, Reply.model_validate)
        )
    assert reply.rating == 3.5 and len(responses) == 1
    fmt = server.requests[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == SCHEMA


def test_common_json_faults_are_repaired_without_asking_again() -> None:
    with fake_openai() as server:
        server.script(Scripted(content="Sure! ```json\n{'utterance': 'ok', 'rating': 2,}\n```"))
        reply, responses = asyncio.run(
            ask_structured(_backend(server.url), STRUCTURED, Reply.model_validate)
        )
    assert reply == Reply(utterance="ok", rating=2) and len(responses) == 1


def test_a_truncated_or_invalid_reply_is_re_asked_with_the_error_fed_back() -> None:
    with fake_openai() as server:
        server.script(
            Scripted(content='{"utterance": "We could'),
            Scripted(content='{"utterance": "x", "rating": "high"}'),
            Scripted(content=GOOD),
        )
        reply, responses = asyncio.run(
            ask_structured(_backend(server.url), STRUCTURED, Reply.model_validate)
        )
        last = server.requests[-1]["messages"]
    assert reply.rating == 3.5 and len(responses) == 3
    assert last[-2] == {"role": "assistant", "content": '{"utterance": "x", "rating": "high"}'}
    assert "rating" in last[-1]["content"] and "could not be used" in last[-1]["content"]


def test_re_asking_is_bounded() -> None:
    with fake_openai() as server:
        server.script(*[Scripted(content="no json here")] * 3)
        with pytest.raises(ModelReplyError, match="after 3 attempts"):
            asyncio.run(ask_structured(_backend(server.url), STRUCTURED, Reply.model_validate))
    assert server.calls == 3


def test_a_server_without_json_schema_support_gets_plain_json_mode() -> None:
    with fake_openai() as server:
        server.script(
            Scripted(
                status=400,
                raw=json.dumps(
                    {"error": {"message": "response_format json_schema unsupported"}}
                ).encode(),
            ),
            Scripted(content=GOOD),
        )
        reply, _ = asyncio.run(
            ask_structured(_backend(server.url), STRUCTURED, Reply.model_validate)
        )
    assert reply.rating == 3.5
    assert server.requests[1]["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert "JSON schema" in server.requests[1]["messages"][-1]["content"]


def _refusal(status: int, message: str) -> Scripted:
    return Scripted(status=status, raw=json.dumps({"error": {"message": message}}).encode())


def test_a_schema_refused_with_a_500_also_steps_down_instead_of_retrying() -> None:
    """llama-cpp-python's server answers response_format json_schema with a 500."""
    refusal = "Input should be 'text' or 'json_object' (body, response_format, type)"
    with fake_openai() as server:
        server.script(_refusal(500, refusal), Scripted(content=GOOD), Scripted(content=GOOD))
        backend = _backend(server.url)

        async def twice() -> tuple[Reply, int]:  # one event loop, as a command has
            reply, _ = await ask_structured(backend, STRUCTURED, Reply.model_validate)
            calls = server.calls
            await ask_structured(backend, STRUCTURED, Reply.model_validate)
            return reply, calls

        reply, calls = asyncio.run(twice())
        assert calls == 2  # no retries spent on a refusal
    assert reply.rating == 3.5
    assert server.requests[1]["response_format"]["type"] == "json_object"
    assert server.requests[2]["response_format"]["type"] == "json_object"  # remembered


def test_a_server_refusing_both_schema_forms_gets_plain_json_mode() -> None:
    with fake_openai() as server:
        server.script(
            _refusal(400, "response_format json_schema unsupported"),
            _refusal(400, "response_format: unknown field schema"),
            Scripted(content=GOOD),
        )
        reply, _ = asyncio.run(
            ask_structured(_backend(server.url), STRUCTURED, Reply.model_validate)
        )
    assert reply.rating == 3.5
    assert server.requests[2]["response_format"] == {"type": "json_object"}


def test_an_ordinary_500_stays_transient_and_keeps_the_schema_form() -> None:
    with fake_openai() as server:
        server.script(_refusal(500, "out of memory"))
        backend = _backend(server.url)
        with pytest.raises(TransientModelError):  # the Retrying wrapper retries these
            asyncio.run(ask_structured(backend, STRUCTURED, Reply.model_validate))
    assert backend.json_schema


def test_the_cache_replays_a_request_and_keeps_samples_apart(tmp_path: Path) -> None:
    with fake_openai(lambda body: Scripted(content=f"reply {len(body['messages'])}")) as server:
        cache = ResponseCache(tmp_path / "cache.sqlite")
        model = Cached(_backend(server.url), cache)
        other = ChatRequest(ASK.messages, temperature=0.9, sample=1)

        async def four() -> list[ChatResponse]:  # one event loop, as a command has
            return [await model.complete(r) for r in (ASK, ASK, other, other)]

        first, again, sample1, sample1_again = asyncio.run(four())
        calls = server.calls
        url = server.url
    assert calls == 2
    assert not first.cached and again.cached and again.text == first.text
    assert sample1_again.cached and sample1_again.text == sample1.text
    # Opening the same cache file again replays it, with the server gone.
    reopened = Cached(_backend(url), ResponseCache(tmp_path / "cache.sqlite"))
    assert asyncio.run(reopened.complete(ASK)).text == first.text


def test_concurrency_is_capped_per_endpoint() -> None:
    with fake_openai(lambda body: Scripted(content="ok", delay_s=0.15)) as server:
        model = Limited(_backend(server.url), concurrency=2)

        async def many() -> None:
            await asyncio.gather(*(model.complete(ASK) for _ in range(6)))

        asyncio.run(many())
    assert server.calls == 6 and server.max_in_flight == 2


def test_requests_per_minute_space_out_call_starts() -> None:
    with fake_openai() as server:
        model = Limited(_backend(server.url), concurrency=10, rpm=600)  # one per 0.1 s

        async def many() -> None:
            await asyncio.gather(*(model.complete(ASK) for _ in range(5)))

        asyncio.run(many())
        starts = sorted(server.start_times)
    assert starts[-1] - starts[0] >= 0.35


def test_cost_comes_from_tokens_and_prices_and_unknown_is_not_zero(tmp_path: Path) -> None:
    with fake_openai(
        lambda b: Scripted(content="ok", prompt_tokens=1000, completion_tokens=500)
    ) as server:
        ledger = Ledger()
        cache = ResponseCache(tmp_path / "c.sqlite")
        shared = Cached(_backend(server.url), cache)
        parties = Metered(shared, ledger, "parties", Prices(2.0, 8.0))
        judge = Metered(shared, ledger, "judge", Prices())

        async def three() -> None:  # one event loop, as a command has
            await parties.complete(ASK)
            await parties.complete(ASK)  # a cache hit: no call, no cost
            await judge.complete(ChatRequest(ASK.messages, sample=3))

        asyncio.run(three())
    p, j = ledger.roles["parties"], ledger.roles["judge"]
    assert (p.calls, p.cached, p.input_tokens, p.output_tokens) == (1, 1, 1000, 500)
    assert p.cost_usd == pytest.approx((1000 * 2.0 + 500 * 8.0) / 1e6)
    assert j.calls == 1 and j.cost_usd is None


def test_a_reply_cut_off_at_max_tokens_is_named_as_such() -> None:
    from disputelab.llm.base import ChatRequest, Message, ModelReplyError
    from disputelab.llm.structured import ask_structured

    class Reply(BaseModel):
        utterance: str
        signal: str  # comes after the words, so a cut-off reply loses it

    cut = Scripted(content='{"utterance": "We could sp', finish_reason="length")
    with fake_openai(lambda body: cut) as server:
        request = ChatRequest((Message("user", "Say something."),), max_tokens=12)
        with pytest.raises(ModelReplyError, match="cut off at max_tokens=12"):
            asyncio.run(ask_structured(_backend(server.url), request, Reply.model_validate))


def test_the_openai_api_without_a_key_fails_before_any_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from disputelab.llm.models import ModelConfigError, parse_model

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="needs an API key: set OPENAI_API_KEY"):
        parse_model("openai:gpt-4o-mini", {})
    parse_model("openai:m@http://127.0.0.1:9/v1", {})  # a server of one's own needs none


def test_calls_refused_together_step_down_once_and_keep_the_schema_form() -> None:
    """Four calls in flight against a server that refuses json_schema (as llama-cpp-python's
    does, with a 500): each refusal must not pop the format list again, or later calls
    skip the schema-carrying JSON mode and lose the grammar."""
    refusal = "Input should be 'text' or 'json_object' (body, response_format, type)"

    def answer(body: dict[str, object]) -> Scripted:
        fmt = body.get("response_format") or {}
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            return Scripted(
                status=500, raw=json.dumps({"error": {"message": refusal}}).encode(), delay_s=0.2
            )
        return Scripted(content=GOOD)

    async def four(backend: OpenAICompatible) -> list[Reply]:
        replies = await asyncio.gather(
            *(ask_structured(backend, STRUCTURED, Reply.model_validate) for _ in range(4))
        )
        return [r for r, _ in replies]

    with fake_openai(answer, keep_alive=True) as server:
        backend = _backend(server.url)
        replies = asyncio.run(four(backend))
        kinds = [(b.get("response_format") or {}).get("type") for b in server.requests]
    assert [r.rating for r in replies] == [3.5] * 4
    assert backend.formats[0] == "json_object_schema"  # one step, not four
    later = [
        b["response_format"]
        for b in server.requests
        if b["response_format"]["type"] != "json_schema"
    ]
    assert all("schema" in f for f in later), kinds  # every retry kept the schema


@pytest.mark.parametrize(
    "fault",
    [
        b'{"id": "x", "choices": [',  # a body cut off mid-JSON
        json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "message": None, "finish_reason": "stop"}],
            }
        ).encode(),  # a 200 with a null message
    ],
)
def test_a_malformed_200_is_a_provider_fault_retried_and_named(fault: bytes) -> None:
    with fake_openai() as server:
        server.script(Scripted(raw=fault), Scripted(content="ok"))
        r = asyncio.run(_fast_retry(_backend(server.url)).complete(ASK))
        assert r.text == "ok" and r.retries == 1
        server.script(*[Scripted(raw=fault)] * 3)
        with pytest.raises(TransientModelError, match=rf"openai:test-model@{server.url}"):
            asyncio.run(_fast_retry(_backend(server.url), attempts=3).complete(ASK))
