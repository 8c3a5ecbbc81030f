"""The response cache's own cost: CPU per reply stored and per lookup that misses.

Stores N replies of a realistic size (a 300-character structured move) from inside an
event loop, yielding to it every 8 replies as a run of concurrent episodes would, then
writes what is pending; then looks up N keys the cache does not hold. Process CPU time;
the median over repeats, each into a fresh cache file in a temp directory.

Usage: python benchmarks/bench_response_cache.py [--replies N] [--repeats R]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import statistics
import tempfile
import time
from pathlib import Path

from machine import machine_line

from disputelab.llm.base import ChatResponse
from disputelab.llm.cache import ResponseCache

REPLY = ChatResponse('{"utterance": "' + "x" * 300 + '"}', "m", 500, 60)


def _key(i: int) -> str:
    return hashlib.sha256(str(i).encode()).hexdigest()


def one_run(replies: int) -> tuple[float, float]:
    """Microseconds of CPU per reply stored and per lookup that misses."""
    with tempfile.TemporaryDirectory(prefix="bench-cache-") as tmp:
        cache = ResponseCache(Path(tmp) / "cache.sqlite")

        async def store() -> float:
            t0 = time.process_time()
            for i in range(replies):
                cache.put(_key(i), REPLY)
                if i % 8 == 0:
                    await asyncio.sleep(0)
            cache.flush()
            return time.process_time() - t0

        put_s = asyncio.run(store())
        misses = [_key(-i - 1) for i in range(replies)]
        t0 = time.process_time()
        for key in misses:
            cache.get(key)
        get_s = time.process_time() - t0
        cache.close()
    return put_s / replies * 1e6, get_s / replies * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replies", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    print(machine_line())
    runs = [one_run(args.replies) for _ in range(args.repeats)]
    puts, gets = [r[0] for r in runs], [r[1] for r in runs]
    print(f"median of {args.repeats} runs of {args.replies} replies")
    for name, values in (("store a reply", puts), ("look up a miss", gets)):
        spread = f"{min(values):.1f}-{max(values):.1f}"
        print(f"{name:<18} {statistics.median(values):6.1f} us  ({spread})")


if __name__ == "__main__":
    main()
