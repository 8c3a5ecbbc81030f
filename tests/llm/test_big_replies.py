"""A big or broken reply ends within its call's deadline, and the run goes on meanwhile
(issue 46, item 4).

JSON repair is pure Python and its time grows faster than the text: a megabyte of
unterminated JSON took a minute, on the event loop and outside any deadline, while every
other call of the run waited. Now a broken reply past a size is not repaired at all (the
error says so), a long one is repaired in a thread under what is left of the call's
deadline while the event loop serves the other calls, and the body itself is held to a
size cap as sent and once inflated. All against the real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import random
import time
import tracemalloc
import zlib
from collections.abc import Awaitable
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from disputelab.llm import structured
from disputelab.llm.base import (
    ChatRequest,
    Message,
    ModelReplyError,
    TransientModelError,
)
from disputelab.llm.openai_backend import OpenAICompatible
from disputelab.llm.structured import MAX_REPAIR_CHARS, ask_structured, load_json
from disputelab.llm.testing import FakeOpenAI, Scripted, fake_openai
from disputelab.llm.wrappers import Retrying

T = TypeVar("T")
SCHEMA = {
    "type": "object",
    "properties": {"utterance": {"type": "string"}},
    "required": ["utterance"],
}
ASK = ChatRequest((Message("user", "Your move?"),), schema=SCHEMA, schema_name="utterance")


class Utterance(BaseModel):
    utterance: str


def _unterminated(chars: int) -> str:
    """What a model that rambles until it is cut off sends: an object never closed."""
    return '{"utterance": "' + "and so on, " * (chars // 11)


def _endpoint(server: FakeOpenAI, deadline_s: float) -> Retrying:
    backend = OpenAICompatible("test-model", server.url, api_key_env=None, timeout_s=deadline_s)
    return Retrying(backend, deadline_s=deadline_s)


async def _ticking(work: Awaitable[T], ticks: list[float]) -> T:
    """`work`, with another coroutine noting the time every 10 ms while it runs: what the
    rest of a run (the other calls in flight) gets of the event loop meanwhile."""

    async def tick() -> None:
        while True:
            ticks.append(time.monotonic())
            await asyncio.sleep(0.01)

    ticker = asyncio.create_task(tick())
    try:
        return await work
    finally:
        ticker.cancel()


def test_a_megabyte_of_unterminated_json_is_refused_at_once_not_repaired_for_a_minute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The issue's case: 1 MB that never closes, against a 6 s deadline. Repairing it
    took 59.7 s; now each attempt is refused on its size, and the re-asks too."""
    deadline_s = 6.0
    repaired: list[int] = []  # the length of every text handed to json-repair
    real_repair = structured.repair_json

    def counted_repair(text: str, **kwargs: Any) -> Any:
        repaired.append(len(text))
        return real_repair(text, **kwargs)

    monkeypatch.setattr(structured, "repair_json", counted_repair)
    with fake_openai(lambda body: Scripted(content=_unterminated(1_000_000))) as server:
        model = _endpoint(server, deadline_s)
        with pytest.raises(ModelReplyError) as info:
            asyncio.run(ask_structured(model, ASK, Utterance.model_validate))
    message = str(info.value)
    assert message.startswith(f"{model.name}: ") and server.url in message
    assert "too long to repair" in message and f"{MAX_REPAIR_CHARS:,}" in message
    assert server.calls == 3  # asked, and re-asked twice, each refused on its size
    # Counted, not timed: the minute went into json-repair, which is now never handed
    # a text over its cap (each attempt refused before any repair starts).
    assert all(n <= MAX_REPAIR_CHARS for n in repaired)


def test_repair_that_outlasts_the_calls_deadline_ends_the_call_naming_both(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A broken reply small enough to repair, but on a call whose deadline passes during
    the repair: the call ends at its deadline, and the event loop keeps serving the rest
    of the run while the repair runs (before, it stalled until the repair was done)."""
    monkeypatch.setattr(structured, "MAX_REPAIR_CHARS", 400_000)  # repair takes seconds
    deadline_s = 0.5
    ticks: list[float] = []
    with fake_openai(lambda body: Scripted(content=_unterminated(200_000))) as server:
        model = _endpoint(server, deadline_s)
        with pytest.raises(TransientModelError) as info:
            asyncio.run(_ticking(ask_structured(model, ASK, Utterance.model_validate), ticks))
        replied = server.spans[0][1]  # when the server had sent its reply
    message = str(info.value)
    assert message.startswith(f"{model.name}: ") and "0.5 s deadline" in message
    assert server.calls == 1  # past its deadline, a call is not asked again
    # Counted, not timed: the other coroutine went on ticking after the reply came in,
    # where the repair used to hold the event loop until it was done.
    assert sum(t > replied for t in ticks) >= 3


def test_a_long_broken_reply_within_the_deadline_is_repaired_off_the_event_loop() -> None:
    text = _unterminated(40_000)  # over the size repaired inline, under the cap
    ticks: list[float] = []
    with fake_openai(lambda body: Scripted(content=text)) as server:
        model = _endpoint(server, 60.0)
        reply, responses = asyncio.run(
            _ticking(ask_structured(model, ASK, Utterance.model_validate), ticks)
        )
    assert reply.utterance.startswith("and so on, ") and len(responses) == 1
    assert structured.INLINE_REPAIR_CHARS < len(text) < MAX_REPAIR_CHARS


@pytest.mark.parametrize(
    "text",
    [
        '{"utterance": "ok", }',  # a trailing comma
        "```json\n{'utterance': 'ok'}\n```",  # a code fence around single quotes
        'Sure! {"utterance": "ok"',  # prose before, the brace never closed
    ],
)
def test_a_short_broken_reply_is_still_repaired(text: str) -> None:
    assert load_json(text) == {"utterance": "ok"}


@pytest.mark.parametrize("depth", [5_000, 100_000])
def test_a_reply_nested_past_any_parser_is_a_reply_that_does_not_fit(depth: int) -> None:
    """Nesting past the recursion limit raised RecursionError, a traceback, from the
    parser and from repair alike; it is a reply that does not fit, and is asked again."""
    nested = '{"utterance": ' + "[" * depth
    with (
        fake_openai(lambda body: Scripted(content=nested)) as server,
        pytest.raises(ModelReplyError, match="nests too deeply"),
    ):
        asyncio.run(ask_structured(_endpoint(server, 60.0), ASK, Utterance.model_validate))
    assert server.calls == 3


def test_a_body_nested_past_the_parser_is_a_broken_reply_not_a_traceback() -> None:
    with fake_openai() as server:
        server.script(Scripted(raw=b"[" * 100_000))
        backend = OpenAICompatible("test-model", server.url, api_key_env=None)
        with pytest.raises(TransientModelError, match="not valid JSON"):
            asyncio.run(backend.complete(ASK))


# ---- the size cap, as sent and once inflated ---------------------------------------------


def _gzip_bomb(inflated: int) -> bytes:
    """A gzip body of zeros that inflates to `inflated` bytes, built in milliseconds and
    without ever holding them: after a full flush, deflate starts afresh, so every
    megabyte of zeros packs to the same kilobyte. The trailer's checksum covers only the
    first two megabytes; no reader gets that far within the cap."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(1 << 20)
    head = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    same = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    return head + same * ((inflated >> 20) - 1) + packer.flush()


def test_a_gigabyte_gzip_bomb_is_refused_within_the_cap_of_memory() -> None:
    """The issue's case: a 1 MB gzip body that inflates to 1 GB took a run to 2.2 GB.
    It is refused once the inflated size passes the cap, having held about the cap."""
    bomb = _gzip_bomb(1 << 30)
    assert len(bomb) < 2 << 20
    cap = 4 << 20
    with fake_openai() as server:
        server.script(Scripted(raw=bomb, headers={"Content-Encoding": "gzip"}))
        backend = OpenAICompatible("test-model", server.url, None, max_reply_bytes=cap)
        tracemalloc.start()
        try:
            with pytest.raises(TransientModelError, match="inflates past the 4,194,304-byte cap"):
                asyncio.run(backend.complete(ASK))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    # The bomb itself (sent by the server in this process) and a few caps' worth of
    # pieces, where inflating it whole needed a gigabyte.
    assert peak < len(bomb) + 8 * cap


def test_a_compressed_body_past_the_cap_as_sent_is_refused_before_inflating() -> None:
    noise = random.Random(0).randbytes(2 << 20)  # 2 MB that gzip cannot shrink
    packed = gzip.compress(noise)
    assert len(packed) > 1 << 20
    with fake_openai() as server:
        server.script(Scripted(raw=packed, headers={"Content-Encoding": "gzip"}))
        backend = OpenAICompatible("test-model", server.url, None, max_reply_bytes=1 << 20)
        with pytest.raises(TransientModelError, match="larger than the 1,048,576-byte cap"):
            asyncio.run(backend.complete(ASK))


def test_a_body_past_the_cap_is_refused_when_its_length_is_not_announced() -> None:
    """Chunked, with no Content-Length: the cap still holds, counted as it arrives."""
    body = json.dumps({"choices": [{"message": {"content": "x" * 3_000_000}}]}).encode()
    with fake_openai() as server:
        server.script(Scripted(raw=body, chunked=True))
        backend = OpenAICompatible("test-model", server.url, None, max_reply_bytes=1 << 20)
        with pytest.raises(TransientModelError, match=r"larger than the 1,048,576-byte cap$"):
            asyncio.run(backend.complete(ASK))


def test_a_reply_at_the_default_cap_is_still_read() -> None:
    """The default cap is far above any chat completion; a large one is read whole."""
    content = "word " * 400_000  # 2 MB of text
    with fake_openai() as server:
        server.script(Scripted(content=content))
        r = asyncio.run(OpenAICompatible("test-model", server.url, None).complete(ASK))
    assert r.text == content
