"""CPU per model call of the HTTP layer alone, four ways, against the bench's load target.

Each arm sends the same chat-completion request (a 3 KB system prompt, a JSON schema as
response_format) N times with C in flight, to `disputelab.llm.load_target` running in its
own process on 127.0.0.1 (HTTP/1.1 keep-alive, TCP_NODELAY). Every arm is warmed up with
C calls first; the figure is this process's CPU time over the measured calls.

- `sdk create`: the openai SDK's `chat.completions.create`, its default httpx client.
- `sdk post, httpx`: prepared JSON posted on the SDK's own httpx client.
- `sdk post, aiohttp`: the same on the SDK's aiohttp client (`openai[aiohttp]`).
- `disputelab`: `OpenAICompatible.complete`, which posts over `llm/transport.py`'s
  aiohttp pool with the SDK's headers and parses the reply.

Usage: python benchmarks/bench_http_transport.py [--calls N] [--concurrency C] [--repeats R]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import openai
from machine import machine_line

from disputelab.experiments.bench import load_target
from disputelab.llm.base import ChatRequest, Message
from disputelab.llm.load_target import TargetSettings
from disputelab.llm.openai_backend import OpenAICompatible

SCHEMA = {
    "type": "object",
    "properties": {
        "utterance": {"type": "string", "maxLength": 600},
        "stances": {"type": "object", "additionalProperties": {"type": "string"}},
        "accept": {"type": "boolean"},
    },
    "required": ["utterance", "stances", "accept"],
}
SYSTEM = "Background known to everyone at the table. " * 70  # about 3 KB, as a party's brief


def request(i: int) -> ChatRequest:
    messages = (Message("system", SYSTEM), Message("user", f"Turn {i}: your move?"))
    return ChatRequest(messages, schema=SCHEMA, schema_name="move", max_tokens=300, seed=i)


def body(i: int) -> dict[str, Any]:
    r = request(i)
    return {
        "model": "m",
        "messages": [{"role": m.role, "content": m.content} for m in r.messages],
        "max_tokens": r.max_tokens,
        "seed": i,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "move", "schema": SCHEMA},
        },
    }


async def measure(call: Callable[[int], Awaitable[object]], n: int, c: int) -> float:
    gate = asyncio.Semaphore(c)

    async def one(i: int) -> None:
        async with gate:
            await call(i)

    await asyncio.gather(*(one(i) for i in range(c)))  # warm-up: connections, imports
    cpu0 = time.process_time()
    await asyncio.gather(*(one(i) for i in range(n)))
    return (time.process_time() - cpu0) / n * 1000


def arms(url: str, c: int) -> dict[str, Callable[[int], Awaitable[float]]]:
    async def sdk_create(n: int) -> float:
        client = openai.AsyncOpenAI(api_key="k", base_url=url, max_retries=0)
        try:
            return await measure(lambda i: client.chat.completions.create(**body(i)), n, c)
        finally:
            await client.close()

    def sdk_post(http: Any) -> Callable[[int], Awaitable[float]]:
        async def run(n: int) -> float:
            client = openai.AsyncOpenAI(api_key="k", base_url=url, max_retries=0, http_client=http)
            target = f"{url}/chat/completions"
            headers = {"Authorization": "Bearer k", "Content-Type": "application/json"}

            async def call(i: int) -> object:
                reply = await http.post(
                    target, content=json.dumps(body(i)).encode(), headers=headers
                )
                return json.loads(reply.content)

            try:
                return await measure(call, n, c)
            finally:
                await client.close()

        return run

    limits = type(openai.DEFAULT_CONNECTION_LIMITS)(max_connections=c, max_keepalive_connections=c)

    async def ours(n: int) -> float:
        backend = OpenAICompatible("m", url, api_key_env=None, connections=c)
        try:
            return await measure(lambda i: backend.complete(request(i)), n, c)
        finally:
            await backend.aclose()

    return {
        "sdk create": sdk_create,
        "sdk post, httpx": lambda n: sdk_post(openai.DefaultAsyncHttpxClient(limits=limits))(n),
        "sdk post, aiohttp": lambda n: sdk_post(openai.DefaultAioHttpClient(limits=limits))(n),
        "disputelab": ours,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(
        machine_line(
            f"openai {openai.__version__}",
            f"{args.calls} calls, {args.concurrency} in flight, median of {args.repeats}",
        )
    )
    with load_target(TargetSettings(latency_s=0.05)) as url:
        runs: dict[str, list[float]] = {}
        for _ in range(args.repeats):  # arms alternate, so drifting load hits them alike
            for name, arm in arms(url, args.concurrency).items():
                runs.setdefault(name, []).append(asyncio.run(arm(args.calls)))
    print("| HTTP layer | CPU per call (ms) |\n|---|---|")
    for name, values in runs.items():
        print(f"| {name} | {statistics.median(values):.2f} |")


if __name__ == "__main__":
    main()
