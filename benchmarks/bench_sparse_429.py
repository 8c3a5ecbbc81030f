"""Sparse 429s: does a provider refusing one call in a hundred, at random, slow a run only
as far as it must? The adaptive per-endpoint limit should read such refusals as noise,
not as a sign that the provider is full, and keep the run near its clean speed.

The same LLM grid (N LLM-party episodes of `tenancy`, C in flight, short episodes) runs
through `disputelab bench`'s runner against its load target, clean and with a share of
429s (each with a short Retry-After), in interleaved rounds (clean, 429, clean, 429, ...)
so that a shared machine's load falls on both alike. The figure is the ratio of the
median spans; the target is at most 1.5.

Usage: python benchmarks/bench_sparse_429.py [--episodes N] [--concurrency C]
       [--latency S] [--rate R] [--rounds K]
"""

from __future__ import annotations

import argparse
import os
import statistics

from machine import machine_line

from disputelab.api.bench import BenchResult, TargetSettings, run_bench

MAX_RATIO = 1.5


def _one(args: argparse.Namespace, rate: float) -> BenchResult:
    target = TargetSettings(latency_s=args.latency, rate_429=rate, retry_after_s=args.retry_after)
    return run_bench(
        episodes=args.episodes,
        concurrency=args.concurrency,
        mediator="none",
        params={"budget": args.budget},
        target=target,
    )


def _row(label: str, runs: list[BenchResult]) -> str:
    spans = [r.span_s for r in runs]
    refused = statistics.median(r.faults.get("429", 0) for r in runs)
    failed = sum(r.failed_episodes for r in runs)
    return (
        f"{label:14s} span median {statistics.median(spans):6.2f} s "
        f"(min {min(spans):.2f}, max {max(spans):.2f}), {runs[0].calls:,} calls, "
        f"{refused:.0f} refused (median), {failed} episodes failed, "
        f"efficiency {statistics.median(r.efficiency for r in runs):.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--episodes", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.2, help="the target's, in seconds")
    ap.add_argument("--rate", type=float, default=0.01, help="share of calls refused (429)")
    ap.add_argument("--retry-after", type=float, default=0.1, help="the 429s' Retry-After, s")
    ap.add_argument("--budget", type=int, default=2, help="turns per episode")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(
        machine_line(
            f"{args.episodes:,} episodes (budget {args.budget}), {args.concurrency} in flight",
            f"latency {args.latency * 1000:.0f} ms, {args.rate:.0%} 429 "
            f"(Retry-After {args.retry_after:g} s)",
        )
    )
    clean: list[BenchResult] = []
    sparse: list[BenchResult] = []
    loads = []
    for _ in range(args.rounds):
        loads.append(os.getloadavg()[0])
        clean.append(_one(args, 0.0))
        sparse.append(_one(args, args.rate))
    print(f"# {args.rounds} interleaved rounds; load average {min(loads):.1f} to {max(loads):.1f}")
    print(_row("clean", clean))
    print(_row(f"{args.rate:.0%} 429", sparse))
    ratio = statistics.median(r.span_s for r in sparse) / statistics.median(r.span_s for r in clean)
    met = "met" if ratio <= MAX_RATIO else "NOT met"
    print(f"429 / clean: span {ratio:.2f} (target at most {MAX_RATIO:g}: {met})")


if __name__ == "__main__":
    main()
