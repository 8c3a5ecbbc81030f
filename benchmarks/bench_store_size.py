"""Store bytes per rule episode: what one finished episode costs on disk.

Runs a rule experiment through the real runner into a fresh store (by default
`workplace`, budget 100, rule mediator and its unmediated twin, 50 replicates: 100
episodes), checkpoints the write-ahead log into the database file, and prints the file's
size per episode, with the bytes of the turn chunks (store schema 8), of the table of
distinct strings and the pages of each table. `--repeats R` builds the store R times and
prints the median file size (the sizes vary only with the bytes of timings).

Usage: python benchmarks/bench_store_size.py [--scenario ID] [--replicates N] [--budget B]
       [--repeats R]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import tempfile
import zlib
from pathlib import Path

from machine import machine_line

from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.store.sqlite import DB_NAME, Store


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--scenario", default="workplace")
    ap.add_argument("--replicates", type=int, default=50)
    ap.add_argument("--budget", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=1)
    args = ap.parse_args()
    print(machine_line())
    sizes = [measure(args, verbose=n == 0) for n in range(args.repeats)]
    if args.repeats > 1:
        print(
            f"median of {args.repeats}: {statistics.median(sizes):.1f} KB per episode"
            f" ({min(sizes):.1f}-{max(sizes):.1f})"
        )


def measure(args: argparse.Namespace, verbose: bool) -> float:
    """Build one store; print its make-up when `verbose`; return KB of file per episode."""
    spec = ExperimentSpec(
        name="size",
        scenarios=[args.scenario],
        mediators=["rule"],
        replicates=args.replicates,
        params={"budget": args.budget},
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "runs")
        asyncio.run(run_experiment(store, plan_experiment(spec, base=Path(tmp)), ModelHub(None)))
        store.close()
        path = Path(tmp) / "runs" / DB_NAME
        db = sqlite3.connect(path)
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        episodes = db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
        per_episode = path.stat().st_size / episodes / 1024
        if verbose:
            describe(db, args, episodes)
        db.close()
        print(f"file: {per_episode:.1f} KB per episode")
        return per_episode


def describe(db: sqlite3.Connection, args: argparse.Namespace, episodes: int) -> None:
    """The bytes of the turn chunks (compressed, and their JSON before compression), of
    the strings, and the pages of each table."""
    chunks, turns, stored = db.execute(
        "SELECT COUNT(*), COALESCE(SUM(count), 0), COALESCE(SUM(LENGTH(data)), 0) FROM turn_chunks"
    ).fetchone()
    raw = sum(len(zlib.decompress(d[4:])) for (d,) in db.execute("SELECT data FROM turn_chunks"))
    print(
        f"{episodes} episodes, {turns} turns in {chunks} chunks"
        f" ({args.scenario}, budget {args.budget})"
    )
    print(
        f"  turn_chunks.data   {stored / episodes / 1024:7.1f} KB per episode"
        f" ({raw / episodes / 1024:.1f} KB of JSON before compression)"
    )
    count, size = db.execute("SELECT COUNT(*), SUM(LENGTH(text)) FROM strings").fetchone()
    print(
        f"  strings.text       {(size or 0) / episodes / 1024:7.1f} KB per episode"
        f" ({count} strings)"
    )
    for name, size in db.execute(
        "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 6"
    ):
        print(f"  pages of {name:26s} {size / episodes / 1024:7.1f} KB per episode")


if __name__ == "__main__":
    main()
