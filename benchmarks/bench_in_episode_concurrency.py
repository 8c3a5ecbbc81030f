"""What sending a step's independent calls together saves inside one episode.

One episode at a time against the tests' stub server with a fixed latency per call
(200 ms by default, a hosted model's round trip), so that an episode's time is about its
round trips: played with the calls of a step together (the default) and with
`disputelab.llm.concurrency.sequential()`, interleaved (together, one by one, together,
...), the median of N of each printed beside the calls made and the round trips saved.

- staged: LLM parties and mediator on `community-centre` (4 parties), 2 bargaining
  rounds; the closure's 4 verdicts go out together.
- settlement: the tree-search counsel `llm-mcts` against the rule counsel, 3 model
  calls for its candidates each turn (together), model rollouts (one after another:
  each reads the last).
- roundtable: motivated turn-taking with LLM parties on `community-centre`: every
  party's drafting and rating calls and the prediction together.

Usage: python benchmarks/bench_in_episode_concurrency.py [--repeats N] [--latency S]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from machine import machine_line

from disputelab.experiments.episodes import run_single
from disputelab.llm.concurrency import sequential
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import (
    FakeOpenAI,
    Scripted,
    fake_openai,
    fill,
    requested_name,
    requested_schema,
)
from disputelab.plan.cast import Cast
from disputelab.scenario import builtin_scenarios
from disputelab.store.sqlite import Store

MOVE = {"decision": "offer", "clauses": [], "plan": "p", "utterance": "Our offer."}
REPLIES: dict[str, Any] = {
    "verdict": {"decision": "accept"},
    "motivation": {"rating": 3.0, "reason": "scripted"},
    "settlement_candidates": {
        "candidates": [{**MOVE, "amount": 31_000.0}, {**MOVE, "amount": 29_500.0}]
    },
    "settlement_move": {**MOVE, "amount": 29_000.0},
    "settlement_rollout": {"amount": 27_500.0},
}


def answerer(latency: float) -> Callable[[dict[str, Any]], Scripted]:
    def answer(body: dict[str, Any]) -> Scripted:
        name = requested_name(body)
        reply = fill(requested_schema(body), text="Here is where we stand.")
        if isinstance(reply, dict):
            reply |= REPLIES.get(name, {})
        return Scripted(content=json.dumps(reply), delay_s=latency)

    return answer


CASES: dict[str, tuple[str, str, dict[str, str], dict[str, Any]]] = {
    "staged": (
        "staged",
        "community-centre",
        {"parties": "llm", "mediator": "llm"},
        {"rounds": 2},
    ),
    "settlement": (
        "settlement",
        "settle-unpaid-overtime",
        {"parties": "rule", "counsel": "llm-mcts", "mediator": "rule"},
        {"round_limit": 6, "max_model_calls": 3, "candidates": 3, "rollout_model": "counsel"},
    ),
    "roundtable": (
        "roundtable",
        "community-centre",
        {"parties": "llm", "mediator": "none"},
        {"budget": 6, "turn_taking": "motivated"},
    ),
}


def play_once(
    server: FakeOpenAI, case: str, mode: AbstractContextManager[None]
) -> tuple[float, int]:
    """Seconds for one stored episode (no response cache), and the calls it made."""
    protocol, sid, kinds, params = CASES[case]
    model = f"openai:bench@{server.url}"
    cast = Cast(kinds, dict.fromkeys({*kinds, "parties"}, model))
    before = server.calls
    with tempfile.TemporaryDirectory() as tmp, mode:
        store = Store(Path(tmp))
        hub = ModelHub(None)

        async def go() -> None:
            try:
                await run_single(
                    store, builtin_scenarios()[sid], cast, 1, protocol, params, hub=hub
                )
            finally:
                await hub.aclose()

        t0 = time.perf_counter()
        asyncio.run(go())
        span = time.perf_counter() - t0
        store.close()
    return span, server.calls - before


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5, help="timed episodes of each mode")
    ap.add_argument("--latency", type=float, default=0.2, help="seconds per call")
    ap.add_argument("--cases", default=",".join(CASES), help="which of " + ", ".join(CASES))
    args = ap.parse_args()
    print(machine_line(f"L={args.latency * 1000:.0f} ms per call", f"N={args.repeats}"))
    with fake_openai(answerer(args.latency)) as server:
        for case in args.cases.split(","):
            play_once(server, case, nullcontext())  # warm-up: imports, first connections
            spans: dict[str, list[float]] = {"together": [], "sequential": []}
            calls = 0
            for _ in range(args.repeats):
                span, calls = play_once(server, case, nullcontext())
                spans["together"].append(span)
                span, _ = play_once(server, case, sequential())
                spans["sequential"].append(span)
            together, one_by_one = (statistics.median(spans[m]) for m in spans)
            print(
                f"{case:10s} {calls:3d} calls: sequential {one_by_one:6.2f} s "
                f"({one_by_one / args.latency:4.1f} round trips), together {together:6.2f} s "
                f"({together / args.latency:4.1f}), {one_by_one / together:.2f}x "
                f"(median of {args.repeats}, interleaved)"
            )


if __name__ == "__main__":
    main()
