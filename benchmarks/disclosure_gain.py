"""The rule mediator's consensus gain with private acceptable sets against full disclosure.

Issue 14: under `disclosure: full` every rule party states its whole acceptable set every
turn, so the rule mediator effectively reads the zone of agreement. Under `negotiator`
(the default) a party states only what it backs and the concessions it has made, and the
mediator must infer the zone; `caucus: K` adds a private session with each party after
every K-th mediator turn, where the party names part of its acceptable set (behaviour
parameters `disclosure.caucus_share`, `disclosure.caucus_truthfulness`).

For every built-in scenario and seed it plays the rule-mediated roundtable and its
unmediated twin (same seed, same disclosure), and scores consensus gain on the oracle's
terminal consensus, as the `socrates-oracle` evaluator does. Cells: mean CG over the
episodes where it is defined as a normalised gain; the 95% CI is a cluster bootstrap over
scenarios (replicates of one scenario are not independent). Episodes whose twin already
reached full consensus (where CG falls back to a raw change) are counted, not averaged in.

Usage: python benchmarks/disclosure_gain.py [--seeds N] [--budget B] [--caucus K]
       [--per-scenario]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import statistics
from dataclasses import dataclass, field

from disputelab.agents.registry import build_agent, build_parties
from disputelab.episode import Episode, Status
from disputelab.evaluation.metrics import consensus_gain
from disputelab.protocols.agent_params import agent_settings
from disputelab.protocols.base import get_protocol
from disputelab.protocols.play import play
from disputelab.protocols.roundtable.agents import MEDIATOR
from disputelab.protocols.roundtable.evaluation.socrates import oracle_trajectory
from disputelab.scenario import Scenario, builtin_scenarios
from disputelab.scenario.behaviour import BehaviourError, check_overrides

PROTOCOL = "roundtable"
BOOTSTRAP = 2000


@dataclass
class Cell:
    """The scores of one setting: CG per scenario, and what could not be averaged."""

    gains: dict[str, list[float]] = field(default_factory=dict)
    raw_change: int = 0  # twin already at full consensus: CG is a raw change
    undefined: int = 0
    resolved: int = 0
    episodes: int = 0
    final: list[float] = field(default_factory=list)


async def _episode(s: Scenario, seed: int, mediated: bool, params: dict[str, object]) -> Episode:
    proto = get_protocol(PROTOCOL)
    p = proto.params(params)
    settings = agent_settings(p)
    med = build_agent(MEDIATOR, "rule", s, seed, settings=settings) if mediated else None
    parties = build_parties(s, "rule", seed, settings=settings)
    ep = Episode(s.id, PROTOCOL, seed, {})
    return await play(PROTOCOL, s, parties, {"mediator": med}, p, ep)


def _final(ep: Episode) -> float:
    traj = oracle_trajectory(ep)
    return float("nan") if traj is None else float(traj[-1])


def _score(cell: Cell, sid: str, mediated: Episode, twin_final: float) -> None:
    final = _final(mediated)
    cell.episodes += 1
    cell.final.append(final)
    assert mediated.outcome is not None
    cell.resolved += mediated.outcome.status is Status.RESOLVED
    gain = consensus_gain(final, twin_final)
    if math.isnan(gain.value):
        cell.undefined += 1
    elif gain.detail.get("rule") == "raw_change":
        cell.raw_change += 1
    else:
        cell.gains.setdefault(sid, []).append(gain.value)


def _ci(gains: dict[str, list[float]], rng: random.Random) -> tuple[float, float, float]:
    """Mean over episodes, and a 95% cluster-bootstrap CI resampling scenarios."""
    clusters = list(gains.values())
    flat = [g for c in clusters for g in c]
    if not flat:
        return math.nan, math.nan, math.nan
    means = []
    for _ in range(BOOTSTRAP):
        pick = [clusters[rng.randrange(len(clusters))] for _ in clusters]
        values = [g for c in pick for g in c]
        means.append(statistics.fmean(values))
    means.sort()
    return statistics.fmean(flat), means[int(0.025 * BOOTSTRAP)], means[int(0.975 * BOOTSTRAP)]


async def run(
    seeds: int, budget: int, caucus: int, behaviour: dict[str, float] | None = None
) -> dict[str, Cell]:
    settings: dict[str, dict[str, object]] = {
        "full": {"disclosure": "full"},
        f"full + caucus every {caucus}": {"disclosure": "full", "caucus": caucus},
        "negotiator": {"disclosure": "negotiator"},
        f"negotiator + caucus every {caucus}": {"disclosure": "negotiator", "caucus": caucus},
    }
    cells = {name: Cell() for name in settings}
    proto = get_protocol(PROTOCOL)
    for sid, s in sorted(builtin_scenarios().items()):
        if proto.scenario_problem(s) is not None:
            continue
        for seed in range(seeds):
            twins: dict[object, float] = {}
            for name, extra in settings.items():
                base = {"budget": budget, "behaviour": dict(behaviour or {})}
                params = {**base, **extra}
                key = extra["disclosure"]  # the twin has no mediator, so no caucus
                if key not in twins:
                    twin = await _episode(s, seed, False, {**base, "disclosure": key})
                    twins[key] = _final(twin)
                _score(cells[name], sid, await _episode(s, seed, True, params), twins[key])
    return cells


def table(cells: dict[str, Cell]) -> str:
    rng = random.Random(0)
    lines = [
        "| setting | episodes | CG mean | 95% CI (scenario bootstrap) | resolved % "
        "| final consensus | twin at full (raw change) | undefined |",
        "|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    for name, c in cells.items():
        mean, lo, hi = _ci(c.gains, rng)
        lines.append(
            f"| {name} | {c.episodes} | {mean:.1f} | [{lo:.1f}, {hi:.1f}] "
            f"| {100 * c.resolved / max(1, c.episodes):.1f} "
            f"| {statistics.fmean(c.final):.3f} | {c.raw_change} | {c.undefined} |"
        )
    return "\n".join(lines)


def per_scenario(cells: dict[str, Cell]) -> str:
    names = list(cells)
    sids = sorted({sid for c in cells.values() for sid in c.gains})
    lines = ["| scenario | " + " | ".join(names) + " |", "|---|" + "---:|" * len(names)]
    for sid in sids:
        row = []
        for name in names:
            g = cells[name].gains.get(sid, [])
            row.append(f"{statistics.fmean(g):.1f} (n={len(g)})" if g else "n/a")
        lines.append(f"| {sid} | " + " | ".join(row) + " |")
    return "\n".join(lines)


def _pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep:
        raise ValueError(f"--behaviour takes NAME=VALUE, not {text!r}")
    return name.strip(), value.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budget", type=int, default=100)
    ap.add_argument("--caucus", type=int, default=1)
    ap.add_argument("--per-scenario", action="store_true")
    ap.add_argument(
        "--behaviour",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a behaviour parameter away from its default (repeatable)",
    )
    args = ap.parse_args()
    try:
        behaviour = check_overrides(dict(_pair(b) for b in args.behaviour))
    except (BehaviourError, ValueError) as exc:
        ap.exit(2, f"error: {exc}\n")
    for name, value, least in (("seeds", args.seeds, 1), ("budget", args.budget, 1)):
        if value < least:
            ap.exit(2, f"error: --{name} must be at least {least}, got {value}\n")
    if args.caucus < 1:
        ap.exit(2, f"error: --caucus must be at least 1, got {args.caucus}\n")
    cells = asyncio.run(run(args.seeds, args.budget, args.caucus, behaviour))
    proto = get_protocol(PROTOCOL)
    n = sum(1 for s in builtin_scenarios().values() if proto.scenario_problem(s) is None)
    print(
        f"rule mediator, rule parties, roundtable, budget {args.budget}, seeds "
        f"0-{args.seeds - 1}, the {n} built-in scenarios the roundtable plays"
        + (f", behaviour {behaviour}" if behaviour else "")
    )
    print(table(cells))
    if args.per_scenario:
        print()
        print(per_scenario(cells))


if __name__ == "__main__":
    main()
