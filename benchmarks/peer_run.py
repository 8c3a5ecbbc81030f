"""What the peer benchmarks share: one timed run of some processes, and the table of runs.

A run starts its commands together and waits for all of them. Its wall time is from the
first start to the last exit. Its peak memory is the largest sum, sampled every 0.1 s, of
the resident memory of every process the commands started and their descendants (a peer
that forks eight workers is charged for all eight at once, not for its biggest one). Its
model calls are the requests the stub endpoint answered meanwhile, and its load is the
one-minute load average as it started.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from peer_stub import CHECKOUT, Stub

PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


def checkout_env(**extra: str) -> dict[str, str]:
    """This environment, with the disputelab this process imported first on the path, so
    that child processes run the same checkout."""
    path = os.pathsep.join(filter(None, [str(CHECKOUT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **extra}


class RunFailed(Exception):
    """A command of a run exited with an error; the message ends with its last words."""


@dataclass(frozen=True)
class Run:
    wall_s: float
    peak_rss_mb: float
    load: float
    calls: int


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue  # the process ended while we looked
        ppid = int(stat.rpartition(")")[2].split()[1])
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def tree_rss_mb(roots: Sequence[int]) -> float:
    """Resident memory of `roots` and all their descendants, in MB."""
    kids, todo, total_kb = _children(), list(roots), 0
    while todo:
        pid = todo.pop()
        todo += kids.get(pid, [])
        try:
            total_kb += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_KB
        except (OSError, IndexError, ValueError):
            continue
    return total_kb / 1024


def timed(commands: Sequence[Sequence[str]], cwd: Path, env: dict[str, str], stub: Stub) -> Run:
    """Run `commands` together in `cwd`; raise RunFailed if any fails."""
    load, before = os.getloadavg()[0], stub.requests()
    with tempfile.TemporaryDirectory() as logs:
        errs = [open(Path(logs, f"{i}.err"), "w+") for i in range(len(commands))]  # noqa: SIM115
        start = time.perf_counter()
        procs = [
            subprocess.Popen(c, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=e)
            for c, e in zip(commands, errs, strict=True)
        ]
        peak = 0.0
        while any(p.poll() is None for p in procs):
            peak = max(peak, tree_rss_mb([p.pid for p in procs]))
            time.sleep(0.1)
        wall = time.perf_counter() - start
        for cmd, proc, err in zip(commands, procs, errs, strict=True):
            err.seek(0)
            words = err.read().strip()[-400:].replace("\n", " | ")
            err.close()
            if proc.returncode != 0:
                raise RunFailed(f"`{' '.join(cmd)}` exited {proc.returncode}: {words}")
    return Run(wall, peak, load, stub.requests() - before)


def table(rows: dict[str, list[Run]]) -> list[str]:
    """One line per variant: medians, ranges and the load each met."""
    out = [f"{'':34s} {'wall s (median, range)':>24s} {'peak MB':>8s} {'calls':>6s}  load avg"]
    for name, runs in rows.items():
        walls = [r.wall_s for r in runs]
        loads = [r.load for r in runs]
        out.append(
            f"{name:34s} {statistics.median(walls):8.2f} ({min(walls):.2f}-{max(walls):.2f})"
            f"{'':3s} {statistics.median(r.peak_rss_mb for r in runs):8.0f}"
            f" {statistics.median(r.calls for r in runs):6.0f}  {min(loads):.2f}-{max(loads):.2f}"
        )
    return out


def ratio(rows: dict[str, list[Run]], slow: str, fast: str) -> str:
    a = statistics.median(r.wall_s for r in rows[slow])
    b = statistics.median(r.wall_s for r in rows[fast])
    return f"{slow} / {fast}: wall {a / b:.2f}x"
