"""The curation pipeline: read seeds, recast each into a scenario, keep only hard ones.

A seed is recast by a model (`ModelRecaster`) or offline by rules (`rules.RuleRecaster`);
a seed that nearly repeats an earlier one is set aside before either (`dedup.py`).

A scenario is hard when rule parties, left without a mediator, fail to settle it in most
replays (SoCRATES step 3: a mediator can only be credited for a dispute that would not
resolve on its own). A dispute that no package could ever settle is rejected too: it is
not hard but hopeless, and no mediator could do anything with it. Seeds run concurrently
up to a bound; one seed's failure is logged and never stops the others.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from disputelab.agents.memos import AgentMemos
from disputelab.agents.registry import build_parties
from disputelab.agents.settings import AgentSettings, Disclosure
from disputelab.agents.utility import preference_table
from disputelab.curation.dedup import DEFAULT_SIMILARITY, NearDuplicates
from disputelab.curation.recast import RecastFailed, RecastSettings, recast
from disputelab.curation.sources import FileSeedSource, Seed, SeedError, SeedSource, expand_paths
from disputelab.episode import Episode, Status
from disputelab.llm.base import ChatModel
from disputelab.protocols.base import DEFAULT_PROTOCOL
from disputelab.protocols.play import play
from disputelab.scenario.inputs import make_user_dir
from disputelab.scenario.io import save_scenario
from disputelab.scenario.schema import Scenario

Stage = Literal["read", "duplicate", "recast", "validate", "filter"]
REJECTED_LOG = "rejected.jsonl"


@dataclass(frozen=True)
class CurationConfig:
    """Knobs of one curation run; the defaults follow SoCRATES where it says anything."""

    concurrency: int = 4
    replay_seeds: tuple[int, ...] = (0, 1, 2)
    min_unresolved: int = 2  # keep when at least this many replays fail to resolve
    budget: int = 100  # party turns per replay
    recast: RecastSettings = field(default_factory=RecastSettings)
    # What the rule parties state at the table: the default negotiator, or `full` (their
    # whole acceptable sets, as every rule episode did before issue 14).
    disclosure: Disclosure = "negotiator"
    # Word-three-gram Jaccard similarity at which a seed repeats an earlier one; above 1
    # turns the check off.
    duplicate_similarity: float = DEFAULT_SIMILARITY


@runtime_checkable
class Recaster(Protocol):
    """What turns a seed into a scenario; raise RecastFailed for a seed it cannot use."""

    async def recast_seed(self, seed: Seed) -> Scenario: ...


@dataclass(frozen=True)
class ModelRecaster:
    """Recast by a chat model (`recast.recast`), with its re-ask bounds."""

    model: ChatModel
    settings: RecastSettings = field(default_factory=RecastSettings)

    async def recast_seed(self, seed: Seed) -> Scenario:
        scenario, _ = await recast(seed, self.model, self.settings)
        return scenario


@dataclass(frozen=True)
class Accepted:
    seed_id: str
    origin: str
    scenario_id: str
    path: Path
    outcomes: tuple[str, ...]  # replay statuses, in replay-seed order


@dataclass(frozen=True)
class Rejected:
    seed_id: str
    origin: str
    stage: Stage
    reason: str  # one line

    def to_json(self) -> str:
        return json.dumps(
            {
                "seed_id": self.seed_id,
                "origin": self.origin,
                "stage": self.stage,
                "reason": self.reason,
            },
            ensure_ascii=False,
        )


Verdict = Accepted | Rejected


@dataclass
class CurationResult:
    """What a run kept (written as YAML) and what it turned down (logged with the reason)."""

    out_dir: Path
    accepted: list[Accepted] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)

    @property
    def rejected_log(self) -> Path:
        return self.out_dir / REJECTED_LOG


@dataclass(frozen=True)
class FilterVerdict:
    outcomes: tuple[str, ...]
    reason: str | None  # None: keep it


def agreement_zone(s: Scenario) -> tuple[int, int]:
    """(packages every party accepts and values at least at its fallback, all packages):
    the zone of possible agreement a mediator could steer the parties into."""
    tables = [(preference_table(s, p), p.fallback.utility) for p in s.parties]
    ok = np.ones(len(tables[0][0].packages), dtype=bool)
    for table, floor in tables:
        # Rule parties never accept a package worth less than walking away.
        ok &= table.feasible & (table.utility >= floor - 1e-9)
    return int(ok.sum()), len(ok)


def hopeless_reason(s: Scenario) -> str | None:
    """Why no package could ever settle the dispute, or None if one could."""
    if agreement_zone(s)[0]:
        return None
    return (
        "no package is acceptable to every party above its fallback, so not even a "
        "mediator could settle it"
    )


async def impasse_filter(s: Scenario, config: CurationConfig) -> FilterVerdict:
    """Replay the scenario unmediated with rule parties (stating what
    `config.disclosure` says); keep it if it mostly fails."""
    try:
        hopeless = hopeless_reason(s)
        if hopeless:
            return FilterVerdict((), f"rule parties cannot play it: {hopeless}")
        outcomes: list[str] = []
        memos = AgentMemos()  # the replays of one scenario share what they work out
        settings = AgentSettings(disclosure=config.disclosure)
        params = {"budget": config.budget, "disclosure": config.disclosure}
        for seed in config.replay_seeds:
            ep = Episode(s.id, DEFAULT_PROTOCOL, seed, {"parties": "rule", "mediator": "none"})
            parties = build_parties(s, "rule", seed, settings=settings, memos=memos)
            ep = await play(DEFAULT_PROTOCOL, s, parties, {}, params, ep)
            outcomes.append(ep.outcome.status.value if ep.outcome else Status.INCOMPLETE.value)
    except (ValueError, IndexError) as exc:
        return FilterVerdict((), f"rule parties cannot play it: {_one_line(str(exc))}")
    unresolved = sum(o != Status.RESOLVED.value for o in outcomes)
    if unresolved >= config.min_unresolved:
        return FilterVerdict(tuple(outcomes), None)
    resolved = len(outcomes) - unresolved
    return FilterVerdict(
        tuple(outcomes),
        f"too easy: resolved without a mediator in {resolved} of {len(outcomes)} replays "
        f"(seeds {', '.join(map(str, config.replay_seeds))}); kept only if at least "
        f"{config.min_unresolved} fail to resolve",
    )


async def curate(
    sources: Iterable[SeedSource | str | Path],
    model: ChatModel | Recaster,
    out_dir: str | Path,
    config: CurationConfig | None = None,
    on_verdict: Callable[[Verdict], None] | None = None,
) -> CurationResult:
    """Recast every seed into a scenario and keep the hard ones as YAML in `out_dir`.

    `model` is a chat model to recast with, or any `Recaster` (`RuleRecaster()` needs no
    model). A seed whose text nearly repeats an earlier seed's is rejected (stage
    "duplicate") before it is recast. Paths among `sources` are read as seed files or
    directories of them, one source per file, so one bad file is rejected (stage "read")
    while the rest go on. Every rejection is appended to `out_dir/rejected.jsonl`
    (started afresh each run) as it happens; `on_verdict` sees each outcome as it is
    decided.
    """
    config = config or CurationConfig()
    recaster: Recaster = (
        model if isinstance(model, Recaster) else ModelRecaster(model, config.recast)
    )
    out = make_user_dir(out_dir)
    result = CurationResult(out)
    with (out / REJECTED_LOG).open("w", encoding="utf-8") as log:

        def report(v: Verdict) -> None:
            if isinstance(v, Rejected):
                result.rejected.append(v)
                log.write(v.to_json() + "\n")
                log.flush()
            else:
                result.accepted.append(v)
            if on_verdict is not None:
                on_verdict(v)

        seeds = await _gather_seeds(_as_sources(sources, report), report)
        distinct = _distinct(seeds, config.duplicate_similarity, report)
        gate = asyncio.Semaphore(max(1, config.concurrency))

        async def one(seed: Seed) -> None:
            async with gate:
                report(await _process(seed, recaster, out, config))

        await asyncio.gather(*(one(s) for s in distinct))
    order = {s.id: i for i, s in enumerate(seeds)}
    result.accepted.sort(key=lambda a: order.get(a.seed_id, -1))
    result.rejected.sort(key=lambda r: order.get(r.seed_id, -1))
    return result


def _as_sources(
    items: Iterable[SeedSource | str | Path], report: Callable[[Verdict], None]
) -> list[SeedSource]:
    sources: list[SeedSource] = []
    for item in items:
        if not isinstance(item, str | Path):
            sources.append(item)
            continue
        try:
            sources += [FileSeedSource([p]) for p in expand_paths([item])]
        except SeedError as exc:
            report(Rejected("-", str(item), "read", str(exc)))
    return sources


async def _gather_seeds(
    sources: Sequence[SeedSource], report: Callable[[Verdict], None]
) -> list[Seed]:
    seeds: list[Seed] = []
    seen: dict[str, str] = {}
    for source in sources:
        try:
            got = await source.seeds()
        except SeedError as exc:
            report(Rejected("-", _describe(source), "read", _one_line(str(exc))))
            continue
        except Exception as exc:  # a caller's own source fails alone
            reason = _one_line(f"{type(exc).__name__}: {exc}")
            report(Rejected("-", _describe(source), "read", reason))
            continue
        for s in got:
            if s.id in seen:
                report(
                    Rejected(
                        s.id,
                        s.origin,
                        "read",
                        f"seed id {s.id!r} repeats {seen[s.id]}; give each seed its own id",
                    )
                )
                continue
            seen[s.id] = s.origin
            seeds.append(s)
    return seeds


def _distinct(seeds: list[Seed], threshold: float, report: Callable[[Verdict], None]) -> list[Seed]:
    """The seeds that repeat no earlier one; each near-duplicate is reported."""
    seen = NearDuplicates(threshold)
    kept: list[Seed] = []
    for s in seeds:
        match = seen.match(s.id, s.text)
        if match is None:
            kept.append(s)
            continue
        other, score = match
        reason = (
            f"near-duplicate of seed {other!r}: {score:.0%} of their word three-grams are "
            f"shared (the limit is {threshold:.0%})"
        )
        report(Rejected(s.id, s.origin, "duplicate", reason))
    return kept


async def _process(seed: Seed, recaster: Recaster, out: Path, config: CurationConfig) -> Verdict:
    stage: Stage = "recast"
    try:
        scenario = await recaster.recast_seed(seed)
        stage = "filter"
        verdict = await impasse_filter(scenario, config)
        if verdict.reason is not None:
            return Rejected(seed.id, seed.origin, "filter", verdict.reason)
        path = out / f"{scenario.id}.yaml"
        save_scenario(scenario, path)
        return Accepted(seed.id, seed.origin, scenario.id, path, verdict.outcomes)
    except RecastFailed as exc:
        return Rejected(seed.id, seed.origin, exc.stage, exc.reason)
    except Exception as exc:  # one seed's surprise must not sink the batch
        return Rejected(seed.id, seed.origin, stage, _one_line(f"{type(exc).__name__}: {exc}"))


def _describe(source: SeedSource) -> str:
    if isinstance(source, FileSeedSource):
        return ", ".join(str(p) for p in source.paths)
    return type(source).__name__


def _one_line(text: str) -> str:
    return " ".join(text.split())
