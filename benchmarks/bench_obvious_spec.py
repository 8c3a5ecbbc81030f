"""The obvious LLM spec, run as a new user would: does the default concurrency keep a slow
endpoint busy?

`obvious.yaml` is 64 LLM-party episodes of `tenancy` (replicates: 64) with no
`concurrency:` line. `disputelab experiment obvious.yaml` runs as a subprocess, exactly as
typed, against a stub OpenAI-compatible server in this process (`disputelab.llm.testing`)
that answers every call after a fixed latency L with a valid instance of the requested
schema and logs when each request arrived and was answered.

Everything is measured from the stub's own log, not from the client:
- span: first request's arrival to last request's answer;
- calls per episode: requests / episodes (the stub answers identically, so every episode
  is the same length);
- ideal span: ceil(N / C) x calls per episode x L, with C the concurrency the command
  printed; an episode's calls are sequential, so no runner can do better;
- efficiency = ideal span / span; mean calls in flight = sum of request times / span.

Usage: python benchmarks/bench_obvious_spec.py [--latency S] [--repeats R]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from machine import machine_line

from disputelab.llm.testing import FakeOpenAI, Scripted, fake_openai, fill, requested_schema

EPISODES = 64
OBVIOUS = """\
name: obvious
scenarios: [tenancy]
parties: llm
mediators: [none]
models: {{parties: "openai:stub@{url}"}}
replicates: {episodes}
"""


@dataclass(frozen=True)
class Measured:
    concurrency: int
    calls: int
    span_s: float
    busy_s: float
    wall_s: float

    def efficiency(self, latency_s: float) -> float:
        per_episode = self.calls / EPISODES
        ideal = math.ceil(EPISODES / self.concurrency) * per_episode * latency_s
        return ideal / self.span_s


def responder(latency_s: float) -> Any:
    def answer(body: dict[str, Any]) -> Scripted:
        content = json.dumps(fill(requested_schema(body), text="Half each?"))
        return Scripted(content=content, delay_s=latency_s)

    return answer


def run_once(server: FakeOpenAI, workdir: Path) -> Measured:
    """One `disputelab experiment obvious.yaml` in a fresh store, measured by the stub."""
    spec = workdir / "obvious.yaml"
    spec.write_text(OBVIOUS.format(url=server.url, episodes=EPISODES))
    store = workdir / f"store-{len(server.spans)}"
    before = len(server.spans)
    env = {**os.environ, "COLUMNS": "200", "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    command = [sys.executable, "-m", "disputelab", "--store", str(store), "experiment", str(spec)]
    t0 = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    wall = time.monotonic() - t0
    if done.returncode != 0:
        raise SystemExit(f"experiment failed ({done.returncode}): {done.stderr[-2000:]}")
    printed = re.search(r"concurrency: (\d+) episodes in flight[^\n]*", done.stdout)
    if printed is None:
        raise SystemExit(f"the run printed no concurrency:\n{done.stdout}")
    print("  printed:", printed.group(0))
    spans = server.spans[before:]
    start, end = min(s for s, _ in spans), max(e for _, e in spans)
    busy = sum(e - s for s, e in spans)
    return Measured(int(printed.group(1)), len(spans), end - start, busy, wall)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    print(machine_line(f"N={EPISODES} episodes, L={args.latency * 1000:.0f} ms, no concurrency:"))
    runs: list[Measured] = []
    with fake_openai(responder(args.latency)) as server, tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeats):
            m = run_once(server, Path(tmp))
            runs.append(m)
            print(
                f"  C={m.concurrency}: {m.calls} calls ({m.calls / EPISODES:.1f}/episode), "
                f"stub span {m.span_s:.2f} s, mean in flight {m.busy_s / m.span_s:.1f}, "
                f"efficiency {m.efficiency(args.latency):.2f}; command wall {m.wall_s:.2f} s"
            )
    effs = [m.efficiency(args.latency) for m in runs]
    print(
        f"runner efficiency {statistics.median(effs):.2f} (median of {len(runs)}; "
        f"min {min(effs):.2f}, max {max(effs):.2f}), stub span "
        f"{statistics.median(m.span_s for m in runs):.2f} s"
    )


if __name__ == "__main__":
    main()
