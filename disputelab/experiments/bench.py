"""`disputelab bench`: how close a run of LLM-agent episodes comes to what the endpoint
allows, and what the framework costs per call.

A load target (`disputelab.llm.load_target`) runs in its own process on 127.0.0.1 and
plays the provider: latency, faults and a hidden concurrency limit. The bench runs N
episodes of a protocol with LLM agents against it, exactly as `disputelab experiment`
runs them (fresh store, fresh response cache), after a small warm-up run.

The ideal span is a lower bound on the run's time. An episode's calls are sequential
and no more than C (or the hidden limit, if lower) are in flight, so a run cannot end
before max(total calls x L / C, the longest episode's calls x L), with L the target's mean
latency. Efficiency is that bound over the measured span. CPU per call is this process's
CPU time over the run divided by the calls completed: prompts, cache keys, calls,
parsing, validation, the store and scoring. The raw-SDK arm replays a request the run
made through the `openai` SDK's `create`, at the same concurrency, as a baseline.

The target runs on the same machine, so it competes with the run for the CPUs: the
result gives its CPU over the measured run, the CPUs usable and the load average, so that
a low efficiency can be told apart from a busy machine.
"""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from disputelab.experiments.executors import ProcessExecutor, peak_rss_mb
from disputelab.experiments.runner import run_experiment
from disputelab.llm.cache import CACHE_NAME
from disputelab.llm.load_settings import TargetSettings
from disputelab.llm.models import ModelHub, Profile
from disputelab.machine import load_average, usable_cpus
from disputelab.plan.experiment import plan_spec
from disputelab.plan.spec import ExperimentSpec
from disputelab.protocols.base import DEFAULT_PROTOCOL, get_protocol
from disputelab.store.sqlite import DB_NAME, Store

PROFILE = "bench"  # the model name episodes use; it points at the load target
WARM_UP_SEED = 1_000_000


@dataclass(frozen=True)
class BenchSettings:
    protocol: str = DEFAULT_PROTOCOL
    scenario: str = "tenancy"
    episodes: int = 200
    concurrency: int = 64
    mediator: str | None = None  # the protocol's default mediator kind with a model
    params: dict[str, Any] = field(default_factory=dict)
    target: TargetSettings = field(default_factory=TargetSettings)
    raw_sdk_calls: int = 0  # 0 skips the raw-SDK baseline
    timeout_s: float | None = None
    warm_up: int = 4  # episodes run first, not measured
    workers: int = 0  # worker processes (`--executor processes`); 0 plays in this process


@dataclass
class BenchResult:
    episodes: int
    calls: int  # completed model calls (what CPU per call divides by)
    requests: int  # requests the target received, retries and refusals included
    span_s: float
    ideal_s: float
    efficiency: float
    calls_per_s: float
    cpu_ms_per_call: float
    peak_rss_mb: float
    store_bytes_per_episode: float
    prefix_share: float  # share of prompt characters repeating an earlier prompt's start
    duplicate_share: float  # requests past the first of identical ones, over all requests
    faults: dict[str, int]
    failed_episodes: int
    raw_sdk_cpu_ms_per_call: float | None = None
    # With worker processes: the sum of each worker's peak (pages they share with their
    # server counted in each), beside `peak_rss_mb`, which is the driver's alone.
    workers_peak_rss_mb: float | None = None
    # The machine the run shared: the load target's CPU seconds over the measured run (it
    # competes with the run for the same CPUs), the CPUs this process may use, and the
    # 1-minute load average as the bench began (other work on the machine).
    target_cpu_s: float | None = None
    cpus: int = 0
    load_average: float | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def ideal_span(episode_calls: list[int], latency_s: float, in_flight: int) -> float:
    """The shortest span N sequential-call episodes can take with `in_flight` calls at
    once and each call taking `latency_s`."""
    if not episode_calls:
        return 0.0
    return max(sum(episode_calls) * latency_s / in_flight, max(episode_calls) * latency_s)


@contextmanager
def load_target(settings: TargetSettings) -> Iterator[str]:
    """Start the load target in its own process; yield its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "disputelab.llm.load_target", json.dumps(asdict(settings))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    url = proc.stdout.readline().strip()
    try:
        if not url.startswith("http"):
            raise RuntimeError("the load target did not start")
        yield url
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def target_stats(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url.removesuffix("/v1") + "/stats", timeout=10) as reply:
        stats: dict[str, Any] = json.load(reply)
        return stats


def _spec(s: BenchSettings, episodes: int, base_seed: int = 0) -> ExperimentSpec:
    proto = get_protocol(s.protocol)
    seat = proto.mediator_seat  # the mediator, or settlement's counsel: every seat, a model
    models = {proto.party_seat.role: PROFILE} | ({seat.role: PROFILE} if seat else {})
    mediator = s.mediator or (seat.default_with_model if seat is not None else "none")
    return ExperimentSpec(
        name="bench",
        scenarios=[s.scenario],
        protocol=s.protocol,
        mediators=[mediator],
        parties="llm",
        models=models,
        replicates=episodes,
        concurrency=s.concurrency,
        params=s.params,
        base_seed=base_seed,
    )


def _run(
    url: str, s: BenchSettings, episodes: int, root: Path, base_seed: int = 0
) -> tuple[float, float, int, int, float | None]:
    """Span, CPU seconds, completed calls, failed episodes and the workers' summed peak
    RSS (None without workers) of one experiment."""
    store = Store(root / "runs")
    profiles = {PROFILE: Profile(model="m", base_url=url, timeout=s.timeout_s)}
    hub = ModelHub(root / CACHE_NAME, profiles, concurrency=s.concurrency)

    executor = ProcessExecutor(s.workers) if s.workers else None

    async def go() -> int:
        try:
            plan = plan_spec(_spec(s, episodes, base_seed), root, None, profiles)
            return (await run_experiment(store, plan, hub, executor=executor)).failed
        finally:
            await hub.aclose()

    t0, cpu0 = time.perf_counter(), time.process_time()
    failed = asyncio.run(go())
    span, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    # Workers are forked from a server process, not from this one: they report their CPU.
    cpu += executor.worker_cpu_s if executor is not None else 0.0
    workers_mb = None  # and when a worker did not report (stopped): not a partial sum
    if executor is not None and len(executor.worker_peak_rss_mb) == executor.workers:
        workers_mb = sum(executor.worker_peak_rss_mb)
    store.close()
    return span, cpu, hub.ledger.calls, failed, workers_mb


def _episode_calls(root: Path) -> list[int]:
    store = Store(root / "runs", writable=False)
    try:
        rows = store.db.execute(
            "SELECT e.episode_id, COALESCE(SUM(u.calls), 0) FROM episodes e"
            " LEFT JOIN usage u ON u.episode_id = e.episode_id GROUP BY e.episode_id"
        ).fetchall()
        store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.close()
    return [int(n) for _, n in rows]


def run_bench(s: BenchSettings) -> BenchResult:
    """Warm up, then run and measure; the target's counts cover the measured run only."""
    load = load_average()  # before the target and the warm-up add their own
    with load_target(s.target) as url, tempfile.TemporaryDirectory() as tmp:
        if s.warm_up:
            # Other seeds, so that the measured run's prompts are all new to the target.
            _run(url, s, s.warm_up, Path(tmp) / "warm", base_seed=WARM_UP_SEED)
        before = target_stats(url)
        root = Path(tmp) / "measured"
        span, cpu, calls, failed, workers_mb = _run(url, s, s.episodes, root)
        after = target_stats(url)
        per_episode = _episode_calls(root)
        store_bytes = sum(p.stat().st_size for p in (root / "runs").glob(f"{DB_NAME}*"))
        raw = _raw_sdk(url, after.get("sample_request"), s) if s.raw_sdk_calls else None
    limit = min(s.concurrency, s.target.hidden_limit or s.concurrency)
    ideal = ideal_span(per_episode, s.target.mean_latency_s, limit)
    requests = after["requests"] - before["requests"]
    distinct = after["distinct"] - before["distinct"]
    return BenchResult(
        episodes=len(per_episode),
        calls=calls,
        requests=requests,
        span_s=span,
        ideal_s=ideal,
        efficiency=ideal / span if span else math.nan,
        calls_per_s=calls / span if span else math.nan,
        cpu_ms_per_call=cpu / calls * 1000 if calls else math.nan,
        peak_rss_mb=peak_rss_mb(),
        store_bytes_per_episode=store_bytes / max(1, len(per_episode)),
        prefix_share=_window_share(before, after),
        duplicate_share=(requests - distinct) / requests if requests else 0.0,
        faults={k: v - before["faults"].get(k, 0) for k, v in after["faults"].items()},
        failed_episodes=failed,
        raw_sdk_cpu_ms_per_call=raw,
        workers_peak_rss_mb=workers_mb,
        target_cpu_s=_cpu_between(before, after),
        cpus=usable_cpus(),
        load_average=load,
        settings=asdict(s),
    )


def _cpu_between(before: dict[str, Any], after: dict[str, Any]) -> float | None:
    """The target's CPU seconds between two snapshots (None from a target that does not
    report it)."""
    if "cpu_s" not in before or "cpu_s" not in after:
        return None
    return float(after["cpu_s"]) - float(before["cpu_s"])


def _window_share(before: dict[str, Any], after: dict[str, Any]) -> float:
    """The prefix share of the requests between two snapshots of the target's counts."""
    total = after["prompt_chars"] - before["prompt_chars"]
    repeated = after["repeated_chars"] - before["repeated_chars"]
    return repeated / total if total else 0.0


def _raw_sdk(url: str, body: dict[str, Any] | None, s: BenchSettings) -> float | None:
    """CPU per call of the bare SDK sending a request of the run (warmed up first)."""
    if body is None:
        return None
    import openai

    async def go(n: int) -> None:
        client = openai.AsyncOpenAI(api_key="no-key", base_url=url, max_retries=5)
        gate = asyncio.Semaphore(s.concurrency)

        async def one(i: int) -> None:
            async with gate:
                await client.chat.completions.create(**{**body, "seed": i})

        try:
            await asyncio.gather(*(one(i) for i in range(n)), return_exceptions=True)
        finally:
            await client.close()

    asyncio.run(go(min(16, s.raw_sdk_calls)))
    cpu0 = time.process_time()
    asyncio.run(go(s.raw_sdk_calls))
    return (time.process_time() - cpu0) / s.raw_sdk_calls * 1000
