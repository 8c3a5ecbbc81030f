"""Store bytes per rule episode: what one finished episode costs on disk.

Runs a rule experiment through the real runner into a fresh store (by default
`workplace`, budget 100, rule mediator and its unmediated twin, 50 replicates: 100
episodes), checkpoints the write-ahead log into the database file, and prints the file's
size per episode, with the bytes of each turn column and the pages of each table.

Usage: python benchmarks/bench_store_size.py [--scenario ID] [--replicates N] [--budget B]
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import tempfile
from pathlib import Path

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
    args = ap.parse_args()
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
        turns = db.execute("SELECT COUNT(*) FROM turns").fetchone()[0]
        print(f"{episodes} episodes, {turns} turns ({args.scenario}, budget {args.budget})")
        for column in COLUMNS:
            total = db.execute(f"SELECT SUM(LENGTH({column})) FROM turns").fetchone()[0] or 0
            print(f"  turns.{column:12s} {total / episodes / 1024:7.1f} KB per episode")
        for name, size in db.execute(
            "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT 4"
        ):
            print(f"  pages of {name:26s} {size / episodes / 1024:7.1f} KB per episode")
        db.close()
        print(f"file: {path.stat().st_size / episodes / 1024:.1f} KB per episode")


if __name__ == "__main__":
    main()
