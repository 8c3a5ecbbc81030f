"""The embedded model, one episode: seconds per party turn, prompt tokens re-read.

Plays `tenancy` with LLM parties on the embedded model and no mediator, each run in a
fresh process and a fresh store so that nothing comes from the response cache. Two
settings, interleaved run by run:

- `before`: no prompt-prefix cache and a fixed thread count of every usable core, as
  the model layer ran until the prefix cache was added;
- `after`: the defaults, a 512 MB prompt-prefix cache and threads chosen per call from
  the idle cores.

It prints, per setting, the median seconds per party turn (a turn's own latency, as
stored), prompt tokens given and evaluated (the rest restored from context or cache, as
llama.cpp counts them) and generated tokens per second. Replies are compared between
settings: a prefix restored from the cache must not change what is generated.

Usage: python benchmarks/bench_local_model.py [--budget N] [--repeats R]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from machine import machine_line

SETTINGS = {
    "before": {"DISPUTELAB_LOCAL_CACHE_MB": "0", "DISPUTELAB_LOCAL_THREADS": "all"},
    "after": {},
}


def child(budget: int) -> None:
    """One episode pair in this process; prints its figures as one JSON line."""
    import disputelab as dl
    from disputelab.llm.local import LocalLlama

    with tempfile.TemporaryDirectory(prefix="bench-local-") as tmp:
        result = dl.run(
            "tenancy",
            store=Path(tmp) / "store",
            model="local",
            parties="llm",
            mediator="none",
            budget=budget,
        )
        turns = [t for t in result.episode.turns if t.role == "party"]
    out = [t.usage.output_tokens or 0 for t in turns if t.usage]
    reuse = LocalLlama.reuse
    print(
        json.dumps(
            {
                "turn_s": [t.latency_s for t in turns],
                "texts": [t.text for t in turns],
                "prompt": reuse.prompt_tokens,
                "evaluated": reuse.evaluated,
                "tokens_per_s": sum(out) / max(sum(t.latency_s for t in turns), 1e-9),
                "threads": LocalLlama.last_threads,
            }
        )
    )


def one(setting: str, budget: int) -> dict[str, Any]:
    env = {**os.environ, **SETTINGS[setting]}
    cmd = [sys.executable, __file__, "--child", "--budget", str(budget)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{setting}: the episode failed:\n{done.stderr[-2000:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    found["load"] = os.getloadavg()[0]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=4, help="party turns per episode")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.budget)
        return
    print(machine_line(f"tenancy, budget {args.budget}, {args.repeats} runs a setting"))
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in SETTINGS}
    for _ in range(args.repeats):
        for setting in SETTINGS:
            runs[setting].append(one(setting, args.budget))
    for setting, found in runs.items():
        turn_s = statistics.median(s for r in found for s in r["turn_s"])
        loads = ", ".join(f"{r['load']:.1f}" for r in found)
        print(
            f"{setting:6} {turn_s:6.1f} s a party turn (median)  "
            f"prompt tokens {found[0]['prompt']:,} given, {found[0]['evaluated']:,} evaluated  "
            f"{statistics.median(r['tokens_per_s'] for r in found):5.1f} generated tokens/s  "
            f"load {loads}"
        )
    same = all(r["texts"] == runs["before"][0]["texts"] for rs in runs.values() for r in rs)
    print("replies identical across settings and runs:", "yes" if same else "NO")


if __name__ == "__main__":
    main()
