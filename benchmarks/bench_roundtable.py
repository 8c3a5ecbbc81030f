"""Rule-based roundtable throughput: episodes per second on one core.

Setting: the built-in `workplace` scenario (3 parties, 4 topics, 4 options each), rule
parties, 60-party-turn budget, no mediator and rule mediator, all in one process and one
event loop (no store writes: this measures the simulator). Each repeat plays N episodes
on seeds no earlier repeat used, as an experiment would. Prints the median over repeats.
Usage: python benchmarks/bench_roundtable.py [--episodes N] [--repeats R]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time

from machine import machine_line

from disputelab.agents.memos import AgentMemos
from disputelab.agents.registry import build_agent, build_parties
from disputelab.episode import Episode
from disputelab.protocols.base import get_protocol
from disputelab.protocols.play import play
from disputelab.protocols.roundtable.agents import MEDIATOR
from disputelab.scenario import builtin_scenarios


async def _batch(mediator: str, n: int, budget: int, first_seed: int = 0) -> tuple[float, float]:
    """Episodes per wall-clock second and per CPU second of this process."""
    s = builtin_scenarios()["workplace"]
    params = get_protocol("roundtable").params({"budget": budget})
    memos = AgentMemos()  # one set for the batch, as the runner keeps for a run
    t0, c0 = time.perf_counter(), time.process_time()
    for seed in range(first_seed, first_seed + n):
        ep = Episode(s.id, "roundtable", seed, {})
        med = None if mediator == "none" else build_agent(MEDIATOR, mediator, s, seed)
        seated = {"mediator": med}
        parties = build_parties(s, "rule", seed, memos=memos)
        await play("roundtable", s, parties, seated, params, ep)
    return n / (time.perf_counter() - t0), n / (time.process_time() - c0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--episodes", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--budget", type=int, default=60)
    args = ap.parse_args()
    print(machine_line("pinned to one core"))
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    for mediator in ("none", "rule"):
        asyncio.run(_batch(mediator, 20, args.budget))  # warm caches
        runs = [
            # Fresh seeds every repeat: replaying seeds would only measure the memos.
            asyncio.run(_batch(mediator, args.episodes, args.budget, 1000 + r * args.episodes))
            for r in range(args.repeats)
        ]
        wall = [w for w, _ in runs]
        cpu = [c for _, c in runs]
        print(
            f"mediator={mediator:4s} budget={args.budget}: "
            f"median {statistics.median(wall):.0f} episodes/s wall-clock "
            f"(min {min(wall):.0f}, max {max(wall):.0f}); "
            f"median {statistics.median(cpu):.0f} episodes per CPU-second; "
            f"{args.repeats} x {args.episodes} episodes"
        )


if __name__ == "__main__":
    main()
