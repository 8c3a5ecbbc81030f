"""Framework time per model call: limits, retry, cache, metering, JSON parse and validation.

Two measurements, medians (p50) and p90 over N sequential calls:

1. *Framework only*: the whole wrapper stack plus structured parsing around an in-process
   model that answers instantly, so every microsecond measured is disputelab's own. Cache
   misses (each call a new sample index) and cache hits are timed separately.
2. *End to end over HTTP*: the same stack around the OpenAI-compatible backend talking to
   the local test server (zero added latency), next to the bare backend call; the
   difference is the framework's share of a real call.

Usage: python benchmarks/bench_model_overhead.py [--calls N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel

from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse, Message
from disputelab.llm.openai_backend import OpenAICompatible
from disputelab.llm.structured import ask_structured
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.llm.wrappers import (
    Cached,
    Ledger,
    Limited,
    Metered,
    Prices,
    ResponseCache,
    Retrying,
)

REPLY = '{"utterance": "Let us split the difference on rent.", "rating": 3.5}'


class Reply(BaseModel):
    utterance: str
    rating: float


class Instant:
    name = "instant"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(REPLY, self.name, 120, 20)


def stack(inner: ChatModel, cache_path: Path) -> ChatModel:
    wrapped = Cached(Retrying(Limited(inner, concurrency=8, rpm=None)), ResponseCache(cache_path))
    return Metered(wrapped, Ledger(), "parties", Prices(1.0, 2.0))


def request(i: int) -> ChatRequest:
    return ChatRequest(
        (Message("system", "You negotiate a tenancy."), Message("user", "Your move?")),
        temperature=0.7,
        schema=Reply.model_json_schema(),
        sample=i,
    )


async def timed(model: ChatModel, calls: int, offset: int, structured: bool) -> list[float]:
    out = []
    for i in range(calls):
        t0 = time.perf_counter()
        if structured:
            await ask_structured(model, request(offset + i), Reply.model_validate)
        else:
            await model.complete(request(offset + i))
        out.append(time.perf_counter() - t0)
    return out


def show(label: str, xs: list[float]) -> None:
    xs = sorted(xs)
    p50 = statistics.median(xs) * 1e3
    p90 = xs[int(0.9 * (len(xs) - 1))] * 1e3
    print(f"{label:58s} p50 {p50:7.3f} ms   p90 {p90:7.3f} ms   (n={len(xs)})")


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        model = stack(Instant(), Path(tmp) / "a.sqlite")
        await timed(model, 50, 10**6, True)  # warm up
        miss = await timed(model, calls, 0, True)
        hit = await timed(model, calls, 0, True)
        show("framework only, cache miss (limit+retry+cache+meter+parse)", miss)
        show("framework only, cache hit", hit)
        with fake_openai(lambda body: Scripted(content=REPLY)) as server:
            bare = OpenAICompatible("bench", server.url, api_key_env=None)
            full = stack(
                OpenAICompatible("bench", server.url, api_key_env=None), Path(tmp) / "b.sqlite"
            )
            await timed(bare, 50, 10**6, False)
            raw = await timed(bare, calls, 0, False)
            wrapped = await timed(full, calls, 0, True)
        show("HTTP to local server, bare backend call", raw)
        show("HTTP to local server, full stack + parse (cache miss)", wrapped)
        share = statistics.median(wrapped) - statistics.median(raw)
        print(f"framework share of an HTTP call (difference of medians): {share * 1e3:.3f} ms")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--calls", type=int, default=1000)
    asyncio.run(main(ap.parse_args().calls))
