"""CPU per model call of every protocol and preset, against the tests' stub server.

Each setting runs LLM-agent episodes (LLM parties, the protocol's default LLM mediator or
counsel) through the experiment runner into a fresh store and a fresh response cache,
against `disputelab.llm.testing`'s OpenAI-compatible server with no latency, which
answers every call with a valid instance of the schema it asks for. The server runs in
a process of its own, so that the CPU counted is only this process's: prompts, cache
keys, the HTTP client, parsing, validation, tracking, the store and scoring. CPU per
call is this process's CPU time over the run (time.process_time) divided by the model
calls completed; a busy machine moves it less than wall time, since it counts only
the time this process ran. Each setting is measured `--repeats` times, interleaved
(setting A, B, ..., A, B, ...), after one warm-up run on other seeds; the median is
printed beside the range.

Each run has enough episodes for `--calls` model calls (at least `--episodes`), so that
what a run costs once (a new store and response cache, the plan) is a small part of
each call's share.

Beside them, in the same rounds, the peer every row is read against: the bare openai
SDK's `chat.completions.create`, `--calls` calls at the same concurrency against the
same server, with a request shaped like a party's (a system and a user message, a JSON
schema to answer in): what a script that calls the SDK directly pays per call, before
it does anything with the reply.

Usage: python benchmarks/bench_cpu_per_call.py [--calls 600] [--repeats 5]
       [--only promediate] [--profile promediate]   (cProfile of one run, top 30)
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import json
import math
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from machine import machine_line

from disputelab.experiments.runner import run_experiment
from disputelab.llm.cache import CACHE_NAME
from disputelab.llm.models import ModelHub, Profile
from disputelab.plan.experiment import plan_spec
from disputelab.plan.spec import ExperimentSpec
from disputelab.protocols.base import get_protocol
from disputelab.protocols.presets import get_preset
from disputelab.store.sqlite import Store

PROFILE = "stub"  # the model name every seat uses; it points at the stub server
WARM_UP_SEED = 1_000_000

# The stub server, run as `python -c SERVER`: prints its URL, serves until stdin closes.
SERVER = """
import json, sys
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema

def answer(body):
    text = "Could we look at the repairs first, and then the rent?"
    return Scripted(content=json.dumps(fill(requested_schema(body), text=text)))

with fake_openai(answer) as server:
    print(server.url, flush=True)
    sys.stdin.read()
"""


@dataclass(frozen=True)
class Setting:
    """What one row measures: a protocol with its defaults, or a paper's preset."""

    name: str
    protocol: str
    preset: str | None = None
    scenario: str = "tenancy"


SETTINGS = (
    Setting("roundtable", "roundtable"),
    Setting("staged", "staged"),
    Setting("bilateral", "bilateral", scenario="product-sale"),
    Setting("settlement", "settlement", scenario="settle-kitchen-refit-defects"),
    Setting("preset socrates", "roundtable", "socrates"),
    Setting("preset promediate", "roundtable", "promediate"),
    Setting("preset agentmediation", "staged", "agentmediation"),
    Setting("preset remediator", "bilateral", "remediator", "product-sale"),
    Setting("preset settleagent", "settlement", "settleagent", "settle-kitchen-refit-defects"),
)


@contextmanager
def stub_server() -> Iterator[str]:
    """The tests' stub server in a process of its own; yields its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdin is not None
    url = proc.stdout.readline().strip()
    try:
        if not url.startswith("http"):
            raise RuntimeError("the stub server did not start")
        yield url
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)


def spec_of(setting: Setting, episodes: int, base_seed: int, budget: int | None) -> ExperimentSpec:
    protocol = get_protocol(setting.protocol)
    seat = protocol.mediator_seat  # the mediator, or settlement's counsel
    models = {protocol.party_seat.role: PROFILE} | ({seat.role: PROFILE} if seat else {})
    mediator = seat.default_with_model if seat is not None else "none"
    extra: dict[str, Any] = {"preset": setting.preset} if setting.preset else {}
    return ExperimentSpec(
        name="cpu",
        scenarios=[setting.scenario],
        protocol=setting.protocol,
        mediators=[mediator],
        parties="llm",
        models=models,
        replicates=episodes,
        concurrency=8,
        params={"budget": budget} if budget else {},
        base_seed=base_seed,
        **extra,
    )


def measure(url: str, spec: ExperimentSpec, root: Path) -> tuple[float, int]:
    """CPU seconds of this process over one experiment, and the model calls it made."""
    store = Store(root / "runs")
    profiles = {PROFILE: Profile(model="m", base_url=url)}
    hub = ModelHub(root / CACHE_NAME, profiles, concurrency=8)

    async def go() -> None:
        try:
            plan = plan_spec(spec, root, None, profiles)
            summary = await run_experiment(store, plan, hub)
            if summary.failed:
                raise RuntimeError(f"{summary.failed} episodes failed")
        finally:
            await hub.aclose()

    cpu0 = time.process_time()
    asyncio.run(go())
    cpu = time.process_time() - cpu0
    store.close()
    return cpu, hub.ledger.calls


BARE_SDK = "bare openai SDK create"
_REQUEST: dict[str, Any] = {
    "model": "m",
    "messages": [
        {"role": "system", "content": "You are the tenant of a damp flat. " * 20},
        {"role": "user", "content": "The landlord asks about the arrears. Your move?"},
    ],
    "response_format": {
        "type": "json_schema",
        "json_schema": {
            "name": "move",
            "schema": {
                "type": "object",
                "properties": {"utterance": {"type": "string"}, "signal": {"type": "string"}},
                "required": ["utterance", "signal"],
            },
        },
    },
}


def measure_bare_sdk(url: str, calls: int) -> tuple[float, int]:
    """CPU seconds of `calls` bare SDK calls, 8 in flight, and the calls made."""
    import openai

    async def go() -> None:
        client = openai.AsyncOpenAI(api_key="no-key", base_url=url, max_retries=0)
        gate = asyncio.Semaphore(8)

        async def one(i: int) -> None:
            async with gate:
                await client.chat.completions.create(**_REQUEST, seed=i)

        try:
            await asyncio.gather(*(one(i) for i in range(calls)))
        finally:
            await client.close()

    cpu0 = time.process_time()
    asyncio.run(go())
    return time.process_time() - cpu0, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=8, help="fewest mediated episodes a run")
    parser.add_argument("--calls", type=int, default=600, help="model calls a run aims at")
    parser.add_argument("--repeats", type=int, default=5, help="measured runs per setting")
    parser.add_argument("--budget", type=int, default=None, help="the protocols' turn budget")
    parser.add_argument("--only", action="append", help="settings whose name contains this")
    parser.add_argument("--profile", help="cProfile one run of the setting named so")
    args = parser.parse_args()
    chosen = [s for s in SETTINGS if not args.only or any(o in s.name for o in args.only)]
    for s in chosen:
        if s.preset:
            get_preset(s.preset)  # an unknown preset fails before anything runs
    print(machine_line(f"at least {args.calls} calls a run, {args.repeats} repeats, stub server"))
    with stub_server() as url, tempfile.TemporaryDirectory() as tmp:
        if args.profile:
            _profile(url, next(s for s in SETTINGS if s.name == args.profile), args, Path(tmp))
            return
        results: dict[str, list[tuple[float, int]]] = {}
        episodes: dict[str, int] = {}
        for s in chosen:  # warm-up: imports, compiled schemas, the server's first replies
            _, calls = measure(url, spec_of(s, 2, WARM_UP_SEED, args.budget), Path(tmp) / s.name)
            # Enough episodes for `--calls` calls: a run's fixed costs (a new store and
            # cache, the plan) are then a small part of each call's share.
            episodes[s.name] = max(args.episodes, math.ceil(args.calls * 2 / max(1, calls)))
        measure_bare_sdk(url, 32)
        episodes[BARE_SDK] = 0
        for r in range(args.repeats):
            results.setdefault(BARE_SDK, []).append(measure_bare_sdk(url, args.calls))
            for s in chosen:
                root = Path(tmp) / f"{s.name}-{r}"
                spec = spec_of(s, episodes[s.name], r * 1000, args.budget)
                results.setdefault(s.name, []).append(measure(url, spec, root))
    print(f"{'setting':24s} {'episodes':>8s} {'calls/run':>9s} {'CPU ms per call':>16s}  range")
    rows = {}
    for name, runs in results.items():
        per_call = [cpu / calls * 1000 for cpu, calls in runs]
        rows[name] = statistics.median(per_call)
        calls = statistics.median(c for _, c in runs)
        print(
            f"{name:24s} {episodes[name] or '-':>8} {calls:9.0f} {rows[name]:16.2f}  "
            f"{min(per_call):.2f}-{max(per_call):.2f}"
        )
    print("# load average at the end " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(json.dumps({k: round(v, 3) for k, v in rows.items()}))


def _profile(url: str, setting: Setting, args: argparse.Namespace, tmp: Path) -> None:
    measure(url, spec_of(setting, 2, WARM_UP_SEED, args.budget), tmp / "warm")
    profiler = cProfile.Profile(time.process_time)  # CPU, not wall: a busy machine waits
    profiler.enable()
    cpu, calls = measure(url, spec_of(setting, args.episodes, 0, args.budget), tmp / "run")
    profiler.disable()
    print(f"{setting.name}: {calls} calls, {cpu / calls * 1000:.2f} ms CPU per call (profiled)")
    stats = pstats.Stats(profiler)
    stats.sort_stats("tottime").print_stats(30)
    stats.sort_stats("cumulative").print_stats(60)


if __name__ == "__main__":
    main()
