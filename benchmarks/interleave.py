"""Two command lines timed as whole processes, interleaved: A, B, A, B, ...

Interleaving puts both under the same machine load at nearly the same moments, so a
shared, busy machine moves both alike; the figure to read is the ratio of medians. CPU
time (user + system of the child) moves less with load than wall time, and is printed
beside it. Each command runs in a fresh temporary working directory, so commands that
write a store (`disputelab experiment spec.yaml`) start from nothing every time.

Usage: python benchmarks/interleave.py --a "CMD A" --b "CMD B" [--rounds N] [--warmup W]
Example (this tree against another checkout, same spec):
    python benchmarks/interleave.py --rounds 7 \\
      --a "env PYTHONPATH=/path/to/before python -m disputelab experiment /tmp/grid.yaml" \\
      --b "env PYTHONPATH=$PWD python -m disputelab experiment /tmp/grid.yaml"
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

from machine import machine_line


def _timed(command: str) -> tuple[float, float]:
    """Wall seconds and child CPU seconds of one run of `command` in a fresh folder."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        done = subprocess.run(shlex.split(command), cwd=folder, capture_output=True, text=True)
        wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"error: `{command}` exited {done.returncode}: {done.stderr.strip()[-300:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _row(name: str, runs: list[tuple[float, float]]) -> str:
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    return (
        f"{name}: wall median {statistics.median(walls):.3f} s "
        f"(min {min(walls):.3f}, max {max(walls):.3f}); "
        f"CPU median {statistics.median(cpus):.3f} s (min {min(cpus):.3f}, max {max(cpus):.3f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, help="the first command line")
    parser.add_argument("--b", required=True, help="the second command line")
    parser.add_argument("--rounds", type=int, default=7, help="timed runs of each")
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs of each first")
    args = parser.parse_args()
    for _ in range(args.warmup):
        _timed(args.a), _timed(args.b)
    a: list[tuple[float, float]] = []
    b: list[tuple[float, float]] = []
    loads = []
    for _ in range(args.rounds):
        loads.append(os.getloadavg()[0])
        a.append(_timed(args.a))
        b.append(_timed(args.b))
    print(machine_line())
    print(f"{args.rounds} interleaved rounds; load average {min(loads):.1f} to {max(loads):.1f}")
    print(_row("A", a))
    print(_row("B", b))
    wall = statistics.median(w for w, _ in b) / statistics.median(w for w, _ in a)
    cpu = statistics.median(c for _, c in b) / statistics.median(c for _, c in a)
    print(f"B / A: wall {wall:.3f}, CPU {cpu:.3f}")


if __name__ == "__main__":
    main()
