"""What motivated turn-taking costs: model calls per party turn, and rule-agent CPU time.

Two measurements:

1. *Rule throughput*: episodes per second on one core, cyclic against motivated, on the
   built-in `workplace` scenario (3 parties) with the rule mediator and a 60-turn budget,
   no store writes, fresh seeds every repeat (as `bench_roundtable.py`).
2. *Calls per party turn* with LLM parties against the local OpenAI-compatible test
   server (every reply scripted, so only the counting is measured), for scenarios of 2, 3
   and 4 parties and K = 1, 2, 3 thoughts per party. Each party turn costs one
   prediction, one action, and for every party that may speak (all but the last speaker)
   one drafting call plus one rating call per thought: (n - 1)(1 + K) + 2. The opening
   turn has no prediction and all n parties think. Cyclic turn-taking costs 1 call.

Usage: python benchmarks/bench_turn_taking.py [--episodes N] [--repeats R]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from machine import machine_line

from disputelab.agents.memos import AgentMemos
from disputelab.agents.registry import build_agent, build_parties
from disputelab.episode import Episode
from disputelab.experiments.episodes import run_single
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai, fill
from disputelab.plan.cast import Cast
from disputelab.protocols.base import get_protocol
from disputelab.protocols.play import play
from disputelab.protocols.roundtable.agents import MEDIATOR, TURN_PREDICTOR
from disputelab.scenario import builtin_scenarios
from disputelab.store.sqlite import Store

SCENARIOS = {2: "tenancy", 3: "workplace", 4: "community-centre"}
BUDGET = 6


def _answer(body: dict[str, Any]) -> Scripted:
    fmt = (body.get("response_format") or {}).get("json_schema") or {}
    schema = fmt.get("schema") or {"type": "object"}
    if fmt.get("name") == "thoughts":
        k = schema["properties"]["thoughts"]["maxItems"]
        reply: Any = {"thoughts": [{"text": f"point {i}", "stimuli": []} for i in range(k)]}
    elif fmt.get("name") == "motivation":
        reply = {"reason": "scripted", "rating": 3.2}
    else:
        reply = fill(schema, text="Here is where I stand.")
    return Scripted(content=json.dumps(reply))


async def calls_per_turn(
    n_parties: int, k: int, url: str, root: Path, hub: ModelHub
) -> tuple[list[int], int]:
    """Model calls of each party turn's thinking, and all calls of the episode."""
    s = builtin_scenarios()[SCENARIOS[n_parties]]
    cast = Cast({"parties": "llm", "mediator": "none"}, {"parties": f"openai:bench@{url}"})
    params = {"budget": BUDGET, "turn_taking": "motivated", "thoughts": k}
    result = await run_single(Store(root), s, cast, 1, "roundtable", params, hub=hub)
    ep = result.episode
    thinking = [t.choice.calls for t in ep.turns if t.choice is not None]
    return thinking, sum(u.calls for u in ep.usage.values())


async def _count_calls(url: str, root: Path) -> None:
    hub = ModelHub(None)  # one event loop and one hub for every run, as a command has
    for n in (2, 3, 4):
        for k in (1, 2, 3):
            thinking, total = await calls_per_turn(n, k, url, root / f"{n}-{k}", hub)
            expected = (n - 1) * (1 + k)
            print(
                f"{n:7d} {k:2d}  {' '.join(map(str, thinking)):34s} "
                f"{expected:7d}  {total / len(thinking):.1f} (cyclic: 1.0)"
            )


async def _batch(turn_taking: str, n: int, first_seed: int) -> float:
    s = builtin_scenarios()["workplace"]
    params = get_protocol("roundtable").params({"budget": 60, "turn_taking": turn_taking})
    memos = AgentMemos()  # one set for the batch, as the runner keeps for a run
    c0 = time.process_time()
    for seed in range(first_seed, first_seed + n):
        seated = {
            "mediator": build_agent(MEDIATOR, "rule", s, seed),
            "turn-taking": build_agent(TURN_PREDICTOR, "rule", s, seed, role="turn-taking"),
        }
        ep = Episode(s.id, "roundtable", seed, {})
        parties = build_parties(s, "rule", seed, memos=memos)
        await play("roundtable", s, parties, seated, params, ep)
    return n / (time.process_time() - c0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print(machine_line("pinned to one core"))

    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    print("\nrule parties, workplace, rule mediator, budget 60, one core:")
    for mode in ("cyclic", "motivated"):
        asyncio.run(_batch(mode, 10, 0))  # warm the memos
        rates = [
            asyncio.run(_batch(mode, args.episodes, 1000 + r * args.episodes))
            for r in range(args.repeats)
        ]
        print(
            f"  {mode:9s} median {statistics.median(rates):.0f} episodes per CPU-second "
            f"(min {min(rates):.0f}, max {max(rates):.0f}; {args.repeats} x {args.episodes})"
        )
    # Last, in one event loop: pooled keep-alive connections must not outlive it into
    # another loop (they are closed with the process).
    print(f"\nmodel calls, LLM parties, motivated, budget {BUDGET} (test server):")
    print("parties  K  thinking calls per party turn       formula  all calls / party turn")
    with fake_openai(_answer, keep_alive=True) as server, tempfile.TemporaryDirectory() as d:
        asyncio.run(_count_calls(server.url, Path(d)))


if __name__ == "__main__":
    main()
