"""Experiment runner and store throughput: episodes per second end to end, turns per second.

1. *Experiment*: a 1,000-episode rule-based grid through `run_experiment`, exactly as
   `disputelab experiment` runs it: the `tenancy` and `workplace` scenarios x the first
   five SoCRATES conditions x 50 replicates x {unmediated twin, rule mediator}, budget 100,
   every turn committed to a fresh SQLite store in a temp directory, then the SoCRATES
   scoring pass. Wall-clock time and CPU time (this process's) per run; the median over
   repeats. Episodes per CPU-second is the figure issue 16 sets a target for (>= 250).
2. *Play alone*: the same grid's episodes (same cells, seeds 0..R-1, twin and rule
   mediator) played in memory through `play`, with no store, no scoring and no runner: the
   ceiling the runner and store work under. CPU seconds; the median.
3. *Through the command line* (`--command-line`): the same grid as `disputelab
   experiment SPEC.yaml` in a fresh process and a fresh store, start-up, imports and
   exit included: the child's CPU seconds (user + system) and episodes per CPU-second,
   the median over repeats.
4. *Store writes*: `Store.start_episode` / `append_turn` / `finish_episode`, called the
   way the runner calls them, on turns taken from a real rule episode (so the JSON
   payloads have realistic sizes), into a fresh store. Turns per second; the median.

Usage: python benchmarks/bench_experiment.py [--repeats R] [--quick] [--command-line]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import machine_line

from disputelab.agents.memos import AgentMemos
from disputelab.agents.registry import build_agent, build_parties
from disputelab.episode import Episode, Turn
from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.protocols.play import play
from disputelab.protocols.roundtable.agents import MEDIATOR
from disputelab.scenario import builtin_scenarios
from disputelab.scenario.conditions import SOCRATES_CONDITIONS, apply_condition
from disputelab.scenario.io import scenario_to_data
from disputelab.store.sqlite import DB_NAME, Store

SCENARIOS = ["tenancy", "workplace"]
CONDITIONS = list(SOCRATES_CONDITIONS[:5])
BUDGET = 100
Row = tuple[str, str, str]  # measure, median, range or note


def grid(replicates: int) -> ExperimentSpec:
    """Scenarios x conditions x replicates x {twin, rule}: 20 x replicates episodes."""
    return ExperimentSpec(
        name="bench",
        scenarios=SCENARIOS,
        conditions=CONDITIONS,
        mediators=["rule"],
        replicates=replicates,
        budget=BUDGET,
    )


def time_experiment(spec: ExperimentSpec) -> tuple[float, float, int, int]:
    """Wall-clock and CPU seconds for one whole run, the episodes it ran and the turns it
    committed."""
    with tempfile.TemporaryDirectory(prefix="bench-exp-") as tmp:
        store = Store(tmp)
        hub = ModelHub(Path(tmp) / "cache.sqlite")
        t0, c0 = time.perf_counter(), time.process_time()
        summary = asyncio.run(run_experiment(store, plan_experiment(spec, base=Path(tmp)), hub))
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        turns = int(
            store.db.execute("SELECT COALESCE(SUM(count), 0) FROM turn_chunks").fetchone()[0]
        )
        store.close()
    if summary.failed:
        raise SystemExit(f"benchmark run had {summary.failed} failed episodes: {summary.errors[0]}")
    return seconds, cpu, summary.done, turns


def time_command_line(spec: ExperimentSpec, episodes: int) -> tuple[float, float]:
    """Wall-clock and CPU seconds (user + system) of `disputelab experiment SPEC.yaml`
    as a whole process, in a fresh folder and store; it must store `episodes`."""
    import yaml

    with tempfile.TemporaryDirectory(prefix="bench-exp-cli-") as tmp:
        path = Path(tmp) / "grid.yaml"
        path.write_text(yaml.safe_dump(spec.model_dump(mode="json", exclude_defaults=True)))
        command = [sys.executable, "-m", "disputelab", "--store", str(Path(tmp) / "runs")]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        done = subprocess.run(
            [*command, "experiment", str(path)], cwd=tmp, capture_output=True, text=True
        )
        seconds = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise SystemExit(f"disputelab experiment failed: {done.stderr.strip()[-400:]}")
        store = Store(Path(tmp) / "runs", writable=False)
        stored = store.db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
        store.close()
    if stored != episodes:
        raise SystemExit(f"disputelab experiment stored {stored} episodes, not {episodes}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def command_line_rows(spec: ExperimentSpec, episodes: int, repeats: int) -> list[Row]:
    runs = [time_command_line(spec, episodes) for _ in range(repeats)]
    cpus = [c for _, c in runs]
    walls = [w for w, _ in runs]
    return [
        (
            "command line episodes/CPU-s",
            f"{episodes / statistics.median(cpus):.0f}",
            f"{episodes / max(cpus):.0f}-{episodes / min(cpus):.0f}; `disputelab experiment`,"
            f" start-up included, {statistics.median(walls):.2f} s wall",
        )
    ]


def sample_turns() -> tuple[Episode, list[Turn]]:
    """One finished rule-mediated `workplace` episode and its turns."""
    s = builtin_scenarios()["workplace"]
    ep = Episode(s.id, "roundtable", 7, {"parties": "rule", "mediator": "rule"})
    seated = {"mediator": build_agent(MEDIATOR, "rule", s, 7)}
    params = {"budget": BUDGET}
    asyncio.run(play("roundtable", s, build_parties(s, "rule", 7), seated, params, ep))
    return ep, list(ep.turns)


def time_play_alone(spec: ExperimentSpec) -> tuple[float, int]:
    """CPU seconds to play the grid's episodes in memory only, and how many were played."""
    scenarios = builtin_scenarios()
    cells = [apply_condition(scenarios[s], c) for s in spec.scenarios for c in spec.conditions]

    async def play_all() -> int:
        played = 0
        memos = AgentMemos()  # one set for the grid, as the runner keeps for a run
        for s in cells:
            for seed in range(spec.replicates):
                for mediated in (False, True):
                    mediator = build_agent(MEDIATOR, "rule", s, seed) if mediated else None
                    seated = {"mediator": mediator} if mediator is not None else {}
                    ep = Episode(s.id, "roundtable", seed, {})
                    parties = build_parties(s, "rule", seed, memos=memos)
                    await play("roundtable", s, parties, seated, {"budget": BUDGET}, ep)
                    played += 1
        return played

    c0 = time.process_time()
    played = asyncio.run(play_all())
    return time.process_time() - c0, played


def time_store_writes(n_turns: int, episode: Episode, turns: list[Turn]) -> float:
    """Turns per second into a fresh store, episodes started and finished as the runner does."""
    scenario = scenario_to_data(builtin_scenarios()["workplace"])
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        store = Store(tmp)
        run_id = store.create_run("bench")
        written = 0
        t0 = time.perf_counter()
        while written < n_turns:
            eid = f"e{written}"
            store.start_episode(eid, run_id, episode, scenario)
            for turn in turns[: n_turns - written]:
                store.append_turn(eid, turn)
            store.finish_episode(eid, episode)
            written += min(len(turns), n_turns - written)
        seconds = time.perf_counter() - t0
        store.close()
    return written / seconds


def main() -> None:
    """Run both measurements and print a table of medians."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="100 episodes and 2,000 turns")
    ap.add_argument(
        "--command-line",
        action="store_true",
        help="also run the grid as `disputelab experiment SPEC.yaml`, start-up included",
    )
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    replicates, n_turns = (5, 2_000) if args.quick else (50, 20_000)
    spec = grid(replicates)
    print(machine_line(f"store under {tempfile.gettempdir()} ({DB_NAME}, WAL)"))

    time_experiment(grid(1))  # warm imports and memos outside the timed runs
    runs = [time_experiment(spec) for _ in range(args.repeats)]
    seconds = [s for s, _, _, _ in runs]
    cpus = [c for _, c, _, _ in runs]
    episodes, turns = runs[0][2], runs[0][3]
    alone = [time_play_alone(spec) for _ in range(args.repeats)]
    ep, sample = sample_turns()
    rates = [time_store_writes(n_turns, ep, sample) for _ in range(args.repeats)]

    wall = statistics.median(seconds)
    rows: list[Row] = [
        ("experiment wall time", f"{wall:.2f} s", f"{min(seconds):.2f}-{max(seconds):.2f} s"),
        ("experiment episodes/s", f"{episodes / wall:.0f}", f"{episodes} episodes"),
        (
            "experiment episodes/CPU-s",
            f"{episodes / statistics.median(cpus):.0f}",
            f"{episodes / max(cpus):.0f}-{episodes / min(cpus):.0f}",
        ),
        ("experiment turns/s", f"{turns / wall:.0f}", f"{turns} turns committed"),
        (
            "play alone episodes/CPU-s",
            f"{alone[0][1] / statistics.median(c for c, _ in alone):.0f}",
            f"{alone[0][1]} episodes in memory: no store, no scoring, no runner",
        ),
        (
            "store append_turn turns/s",
            f"{statistics.median(rates):.0f}",
            f"{min(rates):.0f}-{max(rates):.0f}; {n_turns} turns, {len(sample)}/episode",
        ),
    ]
    if args.command_line:
        rows += command_line_rows(spec, episodes, args.repeats)
    print(
        f"{len(SCENARIOS)} scenarios x {len(CONDITIONS)} conditions x {replicates} replicates"
        f" x (twin + rule), budget {BUDGET}; median of {args.repeats} repeats"
    )
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'median':>10}  range / size")
    for name, median, note in rows:
        print(f"{name:<{width}}  {median:>10}  {note}")


if __name__ == "__main__":
    main()
