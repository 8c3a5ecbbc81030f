"""Start-up of the command line: `disputelab --version`, `--help` and a rule run, as whole
processes.

Each command runs in a fresh interpreter and a fresh temporary folder (the run writes
its store there), R rounds, interleaved with the same commands of another checkout when
`--before PATH` is given (A, B, A, B, ...: both under the same machine load at nearly the
same moments). It prints the median wall time and the median CPU time (user + system of
the child), which a busy machine moves less, and the top-level imports of
`python -X importtime -c "import disputelab.cli"` by cumulative time.

Bytecode is compiled first (`compileall`), since an environment with
PYTHONDONTWRITEBYTECODE set would otherwise compile every module on every start, which
no installed copy does.

Usage: python benchmarks/bench_startup.py [--rounds 15] [--before /path/to/other/checkout]
"""

from __future__ import annotations

import argparse
import compileall
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import machine_line

HERE = Path(__file__).resolve().parent.parent
COMMANDS = {
    "--version": ["--version"],
    "--help": ["--help"],
    "run tenancy --mediator rule": ["run", "tenancy", "--mediator", "rule"],
}


def _timed(tree: Path, args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of `python -m disputelab ARGS` with `tree` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "disputelab", *args],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"error: {args} in {tree} exited {done.returncode}: {done.stderr[-300:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def top_imports(tree: Path, count: int = 10) -> list[tuple[str, float]]:
    """The `count` imports of `import disputelab.cli` with the most cumulative time, ms."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import disputelab.cli"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = re.findall(r"import time:\s+\d+ \|\s+(\d+) \| (\s*)(\S+)", done.stderr)
    ranked = sorted(((name, int(us) / 1000) for us, _, name in rows), key=lambda r: -r[1])
    return ranked[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed runs of each command")
    parser.add_argument("--before", type=Path, help="another checkout, interleaved with this")
    args = parser.parse_args()
    trees = {"this tree": HERE, **({"before": args.before.resolve()} if args.before else {})}
    for tree in trees.values():
        compileall.compile_dir(tree / "disputelab", quiet=1)
    print(machine_line(f"{args.rounds} interleaved rounds"))
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for tree in trees.values():  # one untimed run each: the page cache
        for command in COMMANDS.values():
            _timed(tree, command)
    for _ in range(args.rounds):
        for name, command in COMMANDS.items():
            for label, tree in trees.items():
                runs.setdefault((name, label), []).append(_timed(tree, command))
    for (name, label), timed in runs.items():
        walls, cpus = [w for w, _ in timed], [c for _, c in timed]
        print(
            f"{name:30s} {label:10s} wall median {statistics.median(walls):.3f} s "
            f"(min {min(walls):.3f}); CPU median {statistics.median(cpus):.3f} s "
            f"(min {min(cpus):.3f})"
        )
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# load average at the end {load}")
    for label, tree in trees.items():
        print(f"\nlargest imports of `import disputelab.cli`, {label} (cumulative ms):")
        for module, ms in top_imports(tree):
            print(f"  {ms:8.1f}  {module}")


if __name__ == "__main__":
    main()
