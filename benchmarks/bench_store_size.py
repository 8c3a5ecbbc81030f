"""Store bytes per rule episode: what one finished episode costs on disk.

Runs a rule experiment through the real runner into a fresh store (by default
`workplace`, budget 100, rule mediator and its unmediated twin, 50 replicates: 100
episodes), checkpoints the write-ahead log into the database file, and prints the file's
size per episode, with the bytes of each turn column, of the table of distinct strings
(store schema 7) and the pages of each table. `--repeats R` builds the store R times and
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
from pathlib import Path

from machine import machine_line

from disputelab.experiments.runner import run_experiment
from disputelab.experiments.spec import ExperimentSpec
from disputelab.llm.models import ModelHub
from disputelab.store.sqlite import DB_NAME, Store

COLUMNS = ("text", "action", "intervention", "consensus", "usage", "delivered", "turn_taking")


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
        asyncio.run(run_experiment(store, spec, Path(tmp), ModelHub(None)))
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
    """The bytes of each turn column and of the strings, and the pages of each table."""
    turns = db.execute("SELECT COUNT(*) FROM turns").fetchone()[0]
    print(f"{episodes} episodes, {turns} turns ({args.scenario}, budget {args.budget})")
    for column in COLUMNS:
        total = db.execute(f"SELECT SUM(LENGTH({column})) FROM turns").fetchone()[0] or 0
        print(f"  turns.{column:12s} {total / episodes / 1024:7.1f} KB per episode")
    if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'strings'").fetchone():
        count, size = db.execute("SELECT COUNT(*), SUM(LENGTH(text)) FROM strings").fetchone()
        named = db.execute("SELECT COUNT(*) FROM turns WHERE text_ref IS NOT NULL").fetchone()
        print(
            f"  strings.text       {(size or 0) / episodes / 1024:7.1f} KB per episode"
            f" ({count} distinct strings; {named[0]} of {turns} turns name their text)"
        )
    for name, size in db.execute(
        "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 6"
    ):
        print(f"  pages of {name:26s} {size / episodes / 1024:7.1f} KB per episode")


if __name__ == "__main__":
    main()
