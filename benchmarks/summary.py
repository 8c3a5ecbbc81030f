"""Re-measure the performance summary: every row's benchmark, one after another.

Each row of the summary table in docs/performance.md has its own script (or
`disputelab bench`); this runs them in turn on this machine and prints each one's own
output under a heading that names the row, the command, the load average before and
after it, and how long it took. Within a row, the script itself interleaves what it
compares (ours against a peer, or before against after), so that both meet the same
load; across rows nothing is compared, so they may run one after another.

The two rows measured against the peers' released code need their clones
(`--agentmediation PATH`, `--promediate PATH`; see README.md, "Running the peers");
without one the row is skipped with a line saying so.

Usage: python benchmarks/summary.py [--only WORD ...] [--agentmediation PATH]
       [--promediate PATH] [--quick]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from machine import machine_line

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Row:
    measure: str
    script: str  # a script of this folder (run with this Python), or "disputelab"
    full: tuple[str, ...] = ()  # its arguments for the figures in the docs
    quick: tuple[str, ...] = ()  # its arguments for a smoke run, instead
    peer: str | None = None  # the option naming the peer's clone it needs


ROWS = (
    Row(
        "AgentMediation's 8 cases, wall time",
        "bench_peer_agentmediation.py",
        ("--rounds", "3"),
        ("--rounds", "1"),
        "agentmediation",
    ),
    Row(
        "ProMediate, 3 hmo conversations x 6 turns",
        "bench_peer_promediate.py",
        ("--rounds", "3"),
        ("--rounds", "1"),
        "promediate",
    ),
    Row(
        "CPU per model call, every protocol and preset",
        "bench_cpu_per_call.py",
        ("--repeats", "3"),
        ("--repeats", "1", "--calls", "100"),
    ),
    Row(
        "rule grid through `disputelab experiment`",
        "bench_experiment.py",
        ("--repeats", "3", "--command-line"),
        ("--repeats", "1", "--quick", "--command-line"),
    ),
    Row(
        "runner efficiency, C = 256, two workers",
        "disputelab",
        ("bench", "--episodes", "500", "--concurrency", "256", "--workers", "2"),
        ("bench", "--episodes", "50", "--concurrency", "256", "--workers", "2"),
    ),
    Row(
        "HTML report of a 2,000-episode experiment",
        "bench_html_report.py",
        ("--renders", "3"),
        ("--quick", "--renders", "1", "--loads", "1"),
    ),
    Row("a report table with Holm", "bench_adjust.py", (), ("--repeats", "3")),
    Row(
        "embedded model, one party turn",
        "bench_local_model.py",
        (),
        ("--budget", "2", "--repeats", "1"),
    ),
    Row("start-up of the command line", "bench_startup.py", ("--rounds", "7"), ("--rounds", "1")),
)


def argv(row: Row, quick: bool, peers: dict[str, Path | None]) -> list[str] | None:
    """The row's command line, or None when the peer clone it needs was not given."""
    args = list(row.quick if quick else row.full)
    if row.peer is not None:
        clone = peers.get(row.peer)
        if clone is None:
            return None
        args += ["--peer", str(clone)]
    if row.script == "disputelab":
        return [sys.executable, "-m", "disputelab", *args]
    return [sys.executable, str(HERE / row.script), *args]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_row(row: Row, command: list[str]) -> int:
    shown = " ".join(Path(c).name if c.endswith(".py") else c for c in command[1:])
    shown = shown.replace("-m disputelab", "disputelab")
    print(f"\n## {row.measure}\n$ {shown}\n# load average before: {load()}", flush=True)
    t0 = time.perf_counter()
    code = subprocess.run(command, cwd=HERE, check=False).returncode
    print(f"# load average after: {load()}; {time.perf_counter() - t0:.0f} s; exit {code}")
    return code


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", action="append", help="rows whose measure contains this word")
    ap.add_argument("--agentmediation", type=Path, help="a clone of cjj826/AgentMediation")
    ap.add_argument("--promediate", type=Path, help="a clone of microsoft/ProMediate-Eval")
    ap.add_argument("--quick", action="store_true", help="smoke runs: small sizes, one round")
    args = ap.parse_args()
    peers = {"agentmediation": args.agentmediation, "promediate": args.promediate}
    chosen = [r for r in ROWS if not args.only or any(w in r.measure for w in args.only)]
    if not chosen:
        ap.error("--only matches no row")
    print(machine_line())
    failed = []
    for row in chosen:
        command = argv(row, args.quick, peers)
        if command is None:
            print(f"\n## {row.measure}\n# skipped: give --{row.peer} PATH, a clone of the peer")
        elif run_row(row, command) != 0:
            failed.append(row.measure)
    if failed:
        raise SystemExit(f"{len(failed)} rows failed: {'; '.join(failed)}")


if __name__ == "__main__":
    main()
