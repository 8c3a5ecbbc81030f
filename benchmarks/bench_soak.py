"""Soak: a long LLM run at high concurrency, for what it holds on to. Does memory stay
bounded, do file descriptors stay near the calls in flight, and are connections reused?

The load target (`disputelab.llm.load_target`, the one `disputelab bench` uses) runs in
its own process on 127.0.0.1 and answers every call after a fixed latency. The run is
`disputelab experiment soak.yaml` as a user types it, in a subprocess of its own: N
LLM-party episodes of `tenancy`, C in flight, into a fresh store. Episodes are short
(`budget: 2`, a few calls each) so that the soak is many episodes, each opened, played
and stored, in minutes on a small machine. While it runs, its
resident memory (with any processes it starts) and its open file descriptors are sampled
from /proc; its peak RSS is also taken from the kernel (`wait4`) when it ends. The
target counts the calls and the TCP connections it accepted during the run.

Targets: peak RSS at most 500 MB; at most one new connection per hundred calls. HTTP/1.1
carries one call at a time per connection, so a run with C calls in flight opens at least
C connections however well it reuses them: at the soak's 1,024 in flight and ~20,000
calls that floor alone is 5.1 per hundred. The table therefore also shows the
connections opened past one per call the run allows in flight (the pool's size): those
were opened after another was closed, what a pool that drops its idle connections too
soon costs, and they are held to the same one per hundred calls. (The most calls the
target saw at once is shown too, but it is no floor: a starved client holds a
connection for a call it is still sending or has not yet read.)

Usage: python benchmarks/bench_soak.py [--episodes N] [--concurrency C] [--latency S]
       (the defaults are the soak: 10,000 episodes, 1,024 in flight; smaller is a check)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from machine import machine_line

from disputelab.experiments.bench import load_target, target_stats
from disputelab.llm.load_settings import TargetSettings

MAX_RSS_MB = 500.0
MAX_CONNECTIONS_PER_CALL = 1 / 100
SPEC = """\
name: soak
scenarios: [tenancy]
parties: llm
mediators: [none]
models: {{parties: "openai:soak@{url}"}}
replicates: {episodes}
concurrency: {concurrency}
params: {{budget: {budget}}}
"""
PAGE = os.sysconf("SC_PAGE_SIZE")


def _tree(root: int) -> list[int]:
    """`root` and every process below it, from each process's parent in /proc."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:  # gone since the listing
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])
        parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(parents.get(pid, ()))
    return found


def _rss_and_fds(pids: list[int]) -> tuple[int, int]:
    """Resident bytes and open file descriptors, summed over `pids`."""
    rss = fds = 0
    for pid in pids:
        try:
            rss += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
            fds += len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            continue
    return rss, fds


@dataclass
class Peaks:
    rss_bytes: int = 0
    fds: int = 0
    samples: int = 0


def _sample(pid: int, peaks: Peaks, stop: threading.Event, interval_s: float) -> None:
    while not stop.wait(interval_s):
        rss, fds = _rss_and_fds(_tree(pid))
        peaks.rss_bytes, peaks.fds = max(peaks.rss_bytes, rss), max(peaks.fds, fds)
        peaks.samples += 1


@dataclass
class Soak:
    wall_s: float
    returncode: int
    output: str
    peaks: Peaks
    kernel_peak_rss_kb: int
    calls: int
    connections: int
    max_open_connections: int
    max_in_flight: int
    concurrency: int


def soak(url: str, args: argparse.Namespace, folder: Path) -> Soak:
    """Run the experiment once against `url`, sampling it; the target's counts cover it."""
    spec = folder / "soak.yaml"
    spec.write_text(
        SPEC.format(
            url=url, episodes=args.episodes, concurrency=args.concurrency, budget=args.budget
        )
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    command = [sys.executable, "-m", "disputelab", "--store", str(folder / "runs")]
    before = target_stats(url)
    peaks, stop = Peaks(), threading.Event()
    log = folder / "output.txt"
    t0 = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [*command, "experiment", str(spec)], stdout=out, stderr=out, env=env
        )
        sampler = threading.Thread(target=_sample, args=(proc.pid, peaks, stop, args.interval))
        sampler.start()
        # wait4 rather than wait: the kernel's own peak of the process's memory.
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    stop.set()
    sampler.join()
    after = target_stats(url)
    return Soak(
        wall_s=wall,
        returncode=proc.returncode,
        output=log.read_text(),
        peaks=peaks,
        kernel_peak_rss_kb=usage.ru_maxrss,
        calls=after["requests"] - before["requests"],
        # Less one: the `after` request's own connection is counted before it is answered.
        connections=after["connections"] - before["connections"] - 1,
        max_open_connections=after["max_open_connections"],
        max_in_flight=after["max_in_flight"],
        concurrency=args.concurrency,
    )


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def table(s: Soak) -> list[str]:
    """The figures, each beside its target where it has one."""
    rss_mb = max(s.peaks.rss_bytes / 2**20, s.kernel_peak_rss_kb / 1024)
    per_call = s.connections / s.calls if s.calls else float("inf")
    pool = min(s.concurrency, s.calls)  # one connection per call in flight
    floor = pool / s.calls if s.calls else float("inf")
    reopened = max(0, s.connections - pool)
    reopened_per_call = reopened / s.calls if s.calls else float("inf")
    rows = [
        ("wall time", f"{s.wall_s:.1f} s", "", ""),
        ("model calls (at the target)", f"{s.calls:,}", "", ""),
        ("peak RSS, process + children", f"{rss_mb:.0f} MB", f"<= {MAX_RSS_MB:.0f} MB",
         "yes" if rss_mb <= MAX_RSS_MB else "NO"),
        ("  the process alone (kernel)", f"{s.kernel_peak_rss_kb / 1024:.0f} MB", "", ""),
        ("peak open file descriptors", f"{s.peaks.fds:,}", "", ""),
        ("TCP connections opened", f"{s.connections:,}", "", ""),
        ("  peak open at the target", f"{s.max_open_connections:,}", "", ""),
        ("  peak calls in flight there", f"{s.max_in_flight:,}", "", ""),
        ("connections per 100 calls", f"{per_call * 100:.2f}",
         f"<= {MAX_CONNECTIONS_PER_CALL * 100:g}",
         "yes" if per_call <= MAX_CONNECTIONS_PER_CALL else "NO"),
        ("  floor: one per call in flight", f"{floor * 100:.2f}", "", ""),
        ("reopened (past the pool's size)", f"{reopened:,}", "", ""),
        ("reopened per 100 calls", f"{reopened_per_call * 100:.2f}",
         f"<= {MAX_CONNECTIONS_PER_CALL * 100:g}",
         "yes" if reopened_per_call <= MAX_CONNECTIONS_PER_CALL else "NO"),
    ]  # fmt: skip
    lines = [f"{'figure':30s} {'value':>10s}  {'target':10s} met"]
    lines += [f"{a:30s} {b:>10s}  {c:10s} {d}" for a, b, c, d in rows]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--episodes", type=int, default=10_000)
    ap.add_argument("--concurrency", type=int, default=1024)
    ap.add_argument("--latency", type=float, default=0.2, help="the target's, in seconds")
    ap.add_argument("--budget", type=int, default=2, help="turns per episode (the spec's)")
    ap.add_argument("--interval", type=float, default=0.25, help="seconds between samples")
    args = ap.parse_args()
    print(
        machine_line(
            f"{args.episodes:,} episodes (budget {args.budget}), {args.concurrency:,} in flight",
            f"latency {args.latency * 1000:.0f} ms, load target in its own process",
        )
    )
    with (
        load_target(TargetSettings(latency_s=args.latency)) as url,
        tempfile.TemporaryDirectory() as tmp,
    ):
        result = soak(url, args, Path(tmp))
    print(f"# load average at the end {_load()}; {result.peaks.samples} samples")
    if result.returncode != 0:
        sys.exit(f"the experiment failed ({result.returncode}):\n{result.output[-3000:]}")
    summary = [line for line in result.output.splitlines() if "failed" in line or "ran" in line]
    print("\n".join(f"# run: {line.strip()}" for line in summary[-3:]))
    print("\n".join(table(result)))


if __name__ == "__main__":
    main()
