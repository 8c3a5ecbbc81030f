"""Judge validation as a stored run: play rule-policy episodes (whose consensus is known)
on several scenarios, in a chosen voice, let every tracker read them, and score each
tracker against the oracle on the same aligned points.

The run has kind `validation`; its config holds the inputs. Each episode's tracker
trajectories are stored as scores (evaluator `judge-validation`, one metric per tracker,
the per-topic trajectory, cost and failure in the detail), so `load_validation` rebuilds
the same table from the store without asking any judge again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from disputelab.agents.memos import AgentMemos
from disputelab.episode import Episode, Usage
from disputelab.evaluation.baselines import BASELINES, skill_over
from disputelab.evaluation.trackers import LLM_TRACKERS, Trajectory, oracle, track
from disputelab.evaluation.validation import Aligned, Stat, TrackerFit, align, fit_tracker
from disputelab.experiments.episodes import EpisodePlan, play_episode
from disputelab.llm.models import ModelHub
from disputelab.plan.cast import Cast
from disputelab.protocols.base import DEFAULT_PROTOCOL, get_protocol
from disputelab.scenario.schema import Scenario
from disputelab.store.sqlite import Store

KIND = "validation"
EVALUATOR = "judge-validation"
VERSION = "1"
# Party kinds by voice: all three play the rule policy, so the oracle holds for each.
VOICES = {"template": "rule", "paraphrase": "paraphrase", "hybrid": "hybrid"}
# Trackers that read the stances the rule policy states, which are its hidden stances:
# they reproduce the oracle by construction and say nothing about judging.
READS_ORACLE = ("oracle", "self-report")


@dataclass(frozen=True)
class ValidationPlan:
    """Everything that decides a validation run."""

    scenarios: tuple[str, ...]
    trackers: tuple[str, ...]
    judge_models: tuple[str, ...] = ()
    voice: str = "paraphrase"
    voice_model: str = ""
    episodes: int = 3
    budget: int = 30
    mediator: str = "rule"
    first_seed: int = 0

    def config(self) -> dict[str, Any]:
        return {
            "scenarios": list(self.scenarios),
            "trackers": list(self.trackers),
            "judge_models": list(self.judge_models),
            "voice": self.voice,
            "voice_model": self.voice_model,
            "episodes": self.episodes,
            "budget": self.budget,
            "mediator": self.mediator,
            "first_seed": self.first_seed,
        }

    @staticmethod
    def of(config: dict[str, Any]) -> ValidationPlan:
        """The plan a stored run's config holds."""
        return ValidationPlan(
            tuple(config["scenarios"]),
            tuple(config["trackers"]),
            tuple(config.get("judge_models", ())),
            str(config.get("voice", "template")),
            str(config.get("voice_model", "")),
            int(config["episodes"]),
            int(config["budget"]),
            str(config["mediator"]),
            int(config.get("first_seed", 0)),
        )

    def cast(self) -> Cast:
        models = {"parties": self.voice_model} if self.voice == "hybrid" else {}
        return Cast({"parties": VOICES[self.voice], "mediator": self.mediator}, models)


@dataclass
class ValidationReport:
    """The fits of every tracker on the same aligned points, and what was dropped."""

    run_id: str
    plan: ValidationPlan
    fits: list[TrackerFit]
    considered: int
    dropped: dict[str, int] = field(default_factory=dict)
    scenario_ids: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)  # episodes left out, and why
    # tracker -> statistic ("r", "kappa") -> (its value minus the best baseline's, with a
    # paired CI resampling episodes; that baseline's name)
    skills: dict[str, dict[str, tuple[Stat, str]]] = field(default_factory=dict)


@dataclass(frozen=True)
class _StoredTrajectory:
    """A tracker's trajectory in the shape the store keeps scores."""

    trajectory: Trajectory

    @property
    def value(self) -> float:
        final = self.trajectory.overall()
        return final[-1] if final else math.nan

    @property
    def explanation(self) -> str:
        return self.trajectory.failure or "consensus after the last party turn"

    @property
    def detail(self) -> dict[str, Any]:
        t = self.trajectory
        return {
            # JSON has no NaN: undefined points are stored as null.
            "by_topic": {
                k: [None if math.isnan(v) else v for v in vs] for k, vs in t.by_topic.items()
            },
            "calls": t.calls,
            "input_tokens": t.input_tokens,
            "output_tokens": t.output_tokens,
            "failure": t.failure,
            "cached": t.cached,
        }


def _trajectory_of(detail: dict[str, Any]) -> Trajectory:
    by_topic = {
        k: [math.nan if v is None else float(v) for v in vs] for k, vs in detail["by_topic"].items()
    }
    return Trajectory(
        by_topic,
        int(detail.get("calls", 0)),
        int(detail.get("input_tokens", 0)),
        int(detail.get("output_tokens", 0)),
        detail.get("failure"),
        int(detail.get("cached", 0)),
    )


@dataclass(frozen=True)
class _Spent:
    """Judge usage and cost so far, from the hub's ledger; subtract two readings."""

    usage: Usage
    cost_usd: float | None

    def __sub__(self, before: _Spent) -> _Spent:
        u, b = self.usage, before.usage
        cost = (
            None
            if self.cost_usd is None or before.cost_usd is None
            else self.cost_usd - before.cost_usd
        )
        usage = Usage(
            u.calls - b.calls, u.input_tokens - b.input_tokens, u.output_tokens - b.output_tokens
        )
        return _Spent(usage, cost)

    def cost(self, input_tokens: int | None, output_tokens: int | None) -> float | None:
        return self.cost_usd  # already priced by the hub


def _judge_spent(hub: ModelHub) -> _Spent:
    r = hub.ledger.roles.get("judge")
    if r is None:
        return _Spent(Usage(), 0.0)
    return _Spent(Usage(r.calls, r.input_tokens, r.output_tokens), r.cost_usd)


async def validate_judge(
    store: Store,
    hub: ModelHub,
    scenarios: Sequence[Scenario],
    plan: ValidationPlan,
    progress: Callable[[int, int], None] | None = None,
) -> ValidationReport:
    """Play the plan's episodes into a new `validation` run, track each one with every
    tracker, store the trajectories, and score the trackers against the oracle."""
    proto = get_protocol(DEFAULT_PROTOCOL)
    # Full disclosure: the ground truth is then in what parties say, so a tracker that
    # reads the dialogue can recover it, and what is measured is the reading.
    params = proto.params({"budget": plan.budget, "disclosure": "full"})
    for sc in scenarios:
        problem = proto.scenario_problem(sc)
        if problem is not None:
            raise ValueError(f"{sc.id}: {problem}")
    label = f"{'+'.join(s.id for s in scenarios)}/{plan.voice}/{','.join(plan.trackers)}"
    run_id = store.create_run(KIND, label, plan.config())
    store.set_plan(run_id, len(scenarios) * plan.episodes)
    judges = [hub.model(m, "judge") for m in plan.judge_models]
    judge_name = ",".join(plan.judge_models)
    total, done = len(scenarios) * plan.episodes * (1 + len(plan.trackers)), 0
    memos = AgentMemos()  # the run's, shared by its episodes
    for sc in scenarios:
        for seed in range(plan.first_seed, plan.first_seed + plan.episodes):
            eid = f"{run_id}-{sc.id}-s{seed}"
            episode_plan = EpisodePlan(eid, sc, proto.name, params, plan.cast(), seed)
            episode = await play_episode(store, hub, run_id, episode_plan, memos=memos)
            done += 1
            if progress is not None:
                progress(done, total)
            for name in plan.trackers:
                await _track_and_store(store, hub, eid, name, episode, sc, judges, judge_name)
                done += 1
                if progress is not None:
                    progress(done, total)
    return load_validation(store, run_id)


async def _track_and_store(
    store: Store,
    hub: ModelHub,
    episode_id: str,
    name: str,
    episode: Episode,
    scenario: Scenario,
    judges: Sequence[Any],
    judge_name: str,
) -> None:
    before = _judge_spent(hub)
    trajectory = await track(name, episode, scenario, judges if name in LLM_TRACKERS else ())
    spent = _judge_spent(hub) - before
    if spent.usage.calls > trajectory.calls:
        # A judge that failed part-way returns a NaN trajectory without the calls it made;
        # the ledger has them, and they are part of what judging cost.
        u = spent.usage
        trajectory.calls, trajectory.input_tokens, trajectory.output_tokens = (
            u.calls,
            u.input_tokens,
            u.output_tokens,
        )
    judge = judge_name if name in LLM_TRACKERS else ""
    store.add_scores(episode_id, EVALUATOR, VERSION, {name: _StoredTrajectory(trajectory)}, judge)
    if spent.usage.calls:
        # Charged per tracker, beside the episode's own calls (a hybrid voice's).
        store.record_usage(
            episode_id, {f"judge:{EVALUATOR}:{name}": (judge_name, spent.usage, spent)}
        )


def load_validation(store: Store, run_id: str) -> ValidationReport:
    """The validation table of a stored run, rebuilt from its episodes and trajectories."""
    kind, config = store.run_info(run_id)
    if kind != KIND:
        raise ValueError(f"run {run_id} is a {kind or 'missing'} run, not a judge validation")
    plan = ValidationPlan.of(config)
    truth: list[Trajectory] = []
    tracked: dict[str, list[Trajectory]] = {name: [] for name in plan.trackers}
    incomplete: list[str] = []
    scenario_ids: list[str] = []
    for eid in store.episode_ids(run_id):
        record = store.load_episode(eid)
        stored = {
            s.metric: _trajectory_of(s.detail)
            for s in store.scores(eid)
            if s.evaluator == EVALUATOR and s.version == VERSION
        }
        missing = [n for n in plan.trackers if n not in stored]
        if not record.complete or missing:
            why = "did not finish" if not record.complete else f"no {', '.join(missing)}"
            incomplete.append(f"{eid}: {why}")
            continue
        sc = Scenario.model_validate(record.scenario)
        scenario_ids.append(sc.id)
        truth.append(oracle(record.episode, sc))
        for name in plan.trackers:
            tracked[name].append(stored[name])
        for name, baseline in BASELINES.items():
            tracked.setdefault(name, []).append(baseline(record.episode, sc))
    return _report(run_id, plan, truth, tracked, incomplete, sorted(set(scenario_ids)))


def _report(
    run_id: str,
    plan: ValidationPlan,
    truth: list[Trajectory],
    tracked: dict[str, list[Trajectory]],
    incomplete: list[str],
    scenario_ids: list[str],
) -> ValidationReport:
    aligned: Aligned = align(truth, tracked)
    judge = ",".join(plan.judge_models) or "-"
    fits = [
        fit_tracker(
            name,
            judge if name in LLM_TRACKERS else "-",
            name in READS_ORACLE,
            aligned,
            tracked[name],
        )
        for name in tracked
    ]
    return ValidationReport(
        run_id,
        plan,
        fits,
        aligned.considered,
        dict(aligned.dropped.most_common()),
        scenario_ids,
        incomplete,
        _skills(aligned, plan.trackers),
    )


def _skills(aligned: Aligned, trackers: Sequence[str]) -> dict[str, dict[str, tuple[Stat, str]]]:
    """Each tracker's r and kappa minus the best baseline's, paired on the same points."""
    clusters = [p.episode for p in aligned.points]
    base = {n: aligned.tracked[n] for n in BASELINES if n in aligned.tracked}
    return {
        name: {
            s: skill_over(aligned.tracked[name], base, aligned.oracle, clusters, s)
            for s in ("r", "kappa")
        }
        for name in trackers
        if name != "oracle"
    }
