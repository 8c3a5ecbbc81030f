"""Does an experiment's concurrency reach the endpoint? Runner efficiency against a slow
endpoint, with the per-endpoint limit as it used to be (8) and as it is now (the run's).

A stub OpenAI-compatible server runs in its own process on 127.0.0.1 (HTTP/1.1
keep-alive) and answers every call after a fixed latency L with a valid instance of the
requested schema. An experiment of N LLM-party episodes runs at concurrency C through
`run_experiment`, exactly as `disputelab experiment` runs it, into a fresh store with a
fresh cache.

Efficiency = ideal span / measured span. An episode's calls are sequential, so with C
episodes in flight the span can be no shorter than ceil(N / C) x (calls per episode) x L;
the calls per episode are counted, not assumed.

Usage: python benchmarks/bench_endpoint_concurrency.py [--episodes N] [--concurrency C]
       [--latency S] [--repeats R]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import machine_line

from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub, Profile
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.store.sqlite import Store

SERVER = """
import json, sys, time
from disputelab.llm.testing import Scripted, fake_openai, fill

def answer(body):
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or {"type": "object"}
    return Scripted(content=json.dumps(fill(schema, text="Half each?")), delay_s=float(sys.argv[1]))

with fake_openai(answer) as server:
    print(server.url, flush=True)
    sys.stdin.read()  # until the benchmark closes our stdin
"""


def run_once(
    url: str, episodes: int, concurrency: int, cap: int | None
) -> tuple[float, float, int]:
    """Seconds for one experiment, this process's CPU seconds, and the model calls made."""
    profile = Profile(model="m", base_url=url, concurrency=cap)
    spec = ExperimentSpec(
        name="bench",
        scenarios=["tenancy"],
        mediators=["none"],
        parties="llm",
        models={"parties": "bench"},
        replicates=episodes,
        concurrency=concurrency,
        params={"budget": 2},
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "runs")
        hub = ModelHub(Path(tmp) / "cache.sqlite", {"bench": profile}, concurrency=concurrency)

        async def go() -> None:
            try:
                await run_experiment(store, plan_experiment(spec, base=Path(tmp)), hub)
            finally:
                await hub.aclose()

        t0, cpu0 = time.perf_counter(), time.process_time()
        asyncio.run(go())
        span, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        store.close()
    return span, cpu, hub.ledger.calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--episodes", type=int, default=256)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(args.latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdout is not None
    url = server.stdout.readline().strip()
    print(
        machine_line(
            f"N={args.episodes} episodes, C={args.concurrency}, L={args.latency * 1000:.0f} ms",
            f"stub server in its own process at {url}",
        )
    )
    try:
        run_once(url, 8, 8, None)  # warm-up: imports, first connections
        for label, cap in (("limit 8 (the old default)", 8), ("limit = run's concurrency", None)):
            spans, cpus, calls = [], [], 0
            for _ in range(args.repeats):
                span, cpu, calls = run_once(url, args.episodes, args.concurrency, cap)
                spans.append(span)
                cpus.append(cpu / calls * 1000)
            per_episode = calls / args.episodes
            ideal = math.ceil(args.episodes / args.concurrency) * per_episode * args.latency
            span = statistics.median(spans)
            print(
                f"{label:28s} span {span:6.2f} s (median of {args.repeats}), "
                f"{per_episode:.1f} calls/episode, ideal {ideal:5.2f} s, "
                f"efficiency {ideal / span:.2f}, CPU {statistics.median(cpus):.2f} ms/call "
                "(whole run: prompts, calls, parsing, store, scoring)"
            )
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
