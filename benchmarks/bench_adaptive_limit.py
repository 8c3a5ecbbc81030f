"""Adaptive concurrency against a provider with a hidden limit: does the in-flight limit
settle near it, and how many requests does the provider refuse on the way?

A stub OpenAI-compatible server runs in its own process on 127.0.0.1 (HTTP/1.1
keep-alive). It answers after a fixed latency and refuses with a 429 (Retry-After 0.05 s)
any request beyond its hidden concurrency limit. N calls are started at once through
`Retrying(Limited(...))` with a ceiling of C calls in flight, once with a fixed limit and
once adaptive. The adaptive limit is sampled every 0.25 s.

Usage: python benchmarks/bench_adaptive_limit.py [--calls N] [--ceiling C] [--hidden H]
       [--latency S]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time

from machine import machine_line

from disputelab.llm.base import ChatRequest, Message
from disputelab.llm.openai_backend import OpenAICompatible
from disputelab.llm.wrappers import Limited, Retrying

SERVER = """
import sys
from disputelab.llm.testing import Scripted, fake_openai

latency, hidden = float(sys.argv[1]), int(sys.argv[2])
with fake_openai(lambda body: Scripted(content="ok", delay_s=latency), hidden_limit=hidden) as s:
    print(s.url, flush=True)
    sys.stdin.read()
    print(s.calls, s.refused, flush=True)
"""
ASK = ChatRequest((Message("user", "Your move?"),))


async def run(url: str, calls: int, ceiling: int, adaptive: bool) -> tuple[float, list[float]]:
    backend = OpenAICompatible("m", url, None, timeout_s=30, connections=ceiling)
    limited = Limited(backend, ceiling, None, adaptive)
    model = Retrying(limited, attempts=100, base_s=0.01, cap_s=0.2)
    trace: list[float] = []

    async def sample() -> None:
        while True:
            trace.append(limited.limit)
            await asyncio.sleep(0.25)

    sampler = asyncio.ensure_future(sample())
    t0 = time.perf_counter()
    await asyncio.gather(*(model.complete(ASK) for _ in range(calls)))
    span = time.perf_counter() - t0
    sampler.cancel()
    await backend.aclose()
    return span, trace


def one_arm(args: argparse.Namespace, adaptive: bool) -> None:
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.latency), str(args.hidden)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    url = server.stdout.readline().strip()
    span, trace = asyncio.run(run(url, args.calls, args.ceiling, adaptive))
    server.stdin.close()
    requests, refused = (int(x) for x in server.stdout.readline().split())
    server.wait(timeout=10)
    ideal = args.calls * args.latency / args.hidden
    label = "adaptive" if adaptive else "fixed"
    print(
        f"{label:8s} span {span:5.2f} s (ideal {ideal:.2f} s at the hidden limit), "
        f"{requests} requests, {refused} refused, limit median {statistics.median(trace):.1f}"
    )
    if adaptive:
        print("  limit every 0.25 s: " + " ".join(f"{x:.1f}" for x in trace))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--ceiling", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=8)
    ap.add_argument("--latency", type=float, default=0.1)
    args = ap.parse_args()
    print(
        machine_line(
            f"{args.calls} calls, ceiling {args.ceiling}, hidden limit {args.hidden}",
            f"latency {args.latency * 1000:.0f} ms, server in its own process",
        )
    )
    for adaptive in (False, True):
        one_arm(args, adaptive)


if __name__ == "__main__":
    main()
