"""One multiple-comparison adjustment: CPU per call of ours against statsmodels'.

A report table adjusts one family of p-values per table (Holm or Benjamini-Hochberg).
statsmodels' `multipletests` runs a full garbage collection on every call, whose cost
grows with everything the process holds; a report process holds its episodes. So each
call is timed with a live heap of `--heap` small objects standing in for them. Process CPU
time per call, the median over repeats; ours and statsmodels' interleaved block by block
(a block of ours is 20 calls: one call right after a full collection pays for the caches
that collection emptied, which is statsmodels' cost, not ours).

Usage: python benchmarks/bench_adjust.py [--family M] [--heap N] [--repeats R]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
from machine import machine_line
from statsmodels.stats.multitest import multipletests

from disputelab.evaluation.stats import adjust


def _cpu_us(call: Callable[[], object], calls: int = 1) -> float:
    """Microseconds of process CPU per call, over `calls` calls in a row."""
    t0 = time.process_time()
    for _ in range(calls):
        call()
    return (time.process_time() - t0) * 1e6 / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", type=int, default=24, help="p-values per family")
    parser.add_argument("--heap", type=int, default=2_000_000, help="live objects held")
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args()
    held = [{"turn": i} for i in range(args.heap)]  # what a loaded report keeps alive
    ps = list(np.random.default_rng(0).uniform(0, 1, args.family))
    print(machine_line(f"family {args.family}, {len(held):,} live objects"))
    for method in ("holm", "fdr_bh"):
        ours, theirs = [], []
        for _ in range(args.repeats):
            ours.append(_cpu_us(lambda m=method: adjust(ps, m), calls=20))
            theirs.append(_cpu_us(lambda m=method: multipletests(ps, method=m)))
        print(
            f"{method:7} disputelab {statistics.median(ours):9.1f} us/call   "
            f"statsmodels {statistics.median(theirs):11.1f} us/call"
        )


if __name__ == "__main__":
    main()
