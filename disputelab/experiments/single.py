"""One `disputelab run`: a mediated episode and its matched unmediated twin, stored and scored."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from disputelab.agents.registry import (
    LLM_MEDIATORS,
    check_mediator,
    make_mediator,
    make_parties,
    make_staged_mediator,
)
from disputelab.episode import Episode, Turn
from disputelab.evaluation import agentmediation, socrates
from disputelab.evaluation.metrics import MetricResult
from disputelab.llm.base import ChatModel
from disputelab.llm.models import ModelHub
from disputelab.protocols.roundtable import DEFAULT_BUDGET, RoundTable
from disputelab.protocols.staged import DEFAULT_ROUNDS, Staged
from disputelab.scenario.io import scenario_to_data
from disputelab.scenario.schema import Scenario
from disputelab.store.sqlite import Store


@dataclass(frozen=True)
class Agents:
    """Who plays each role: agent kinds and, for LLM roles, model names."""

    parties: str = "rule"  # rule | llm | hybrid
    mediator: str = "none"  # none | rule | generic | social
    parties_model: str = "rule"
    mediator_model: str = "rule"
    judge_model: str = "rule"

    def describe(self, mediator: str | None = None) -> dict[str, str]:
        med = self.mediator if mediator is None else mediator
        out = {"parties": self.parties, "mediator": med}
        if self.parties != "rule":
            out["parties_model"] = self.parties_model
        if med in LLM_MEDIATORS:
            out["mediator_model"] = self.mediator_model
        if self.judge_model != "rule":
            out["judge_model"] = self.judge_model
        return out


@dataclass
class RunResult:
    run_id: str
    episode: Episode
    episode_id: str
    baseline: Episode | None
    baseline_id: str | None
    scores: dict[str, MetricResult]
    baseline_scores: dict[str, MetricResult] | None = None
    hub: ModelHub | None = field(default=None, repr=False)


def _model(hub: ModelHub, spec: str, role: str) -> ChatModel | None:
    return None if spec == "rule" else hub.model(spec, role)


async def play_episode(
    store: Store,
    hub: ModelHub,
    run_id: str,
    episode_id: str,
    scenario: Scenario,
    agents: Agents,
    mediator: str,
    seed: int,
    budget: int,
    condition: str = "general",
    arm: str = "",
    matched_episode_id: str | None = None,
    protocol: str = "roundtable",
    rounds: int = DEFAULT_ROUNDS,
    retrieved: Sequence[str] = (),
) -> Episode:
    """Play and commit one episode of `protocol`, turn by turn."""
    check_mediator(protocol, mediator)
    episode = Episode(scenario.id, protocol, seed, agents.describe(mediator), condition)
    party_model = _model(hub, agents.parties_model, "parties") if agents.parties != "rule" else None
    mediator_model = (
        _model(hub, agents.mediator_model, "mediator") if mediator in LLM_MEDIATORS else None
    )
    parties = make_parties(scenario, agents.parties, seed, party_model)
    store.start_episode(
        episode_id, run_id, episode, scenario_to_data(scenario), arm, matched_episode_id
    )

    def sink(turn: Turn) -> None:
        store.append_turn(episode_id, turn)

    try:
        if protocol == "staged":
            staged = make_staged_mediator(scenario, mediator, mediator_model, seed, retrieved)
            await Staged(rounds).run(scenario, parties, staged, episode, on_turn=sink)
        else:
            med = make_mediator(scenario, mediator, mediator_model, seed)
            await RoundTable(budget).run(scenario, parties, med, episode, on_turn=sink)
    except Exception as exc:
        store.fail_episode(episode_id, f"{type(exc).__name__}: {exc}")
        raise
    # Usage first: once an episode is marked complete, a resume skips it, so usage written
    # after that point would be lost to a kill in between.
    models = {"parties": agents.parties_model, "mediator": agents.mediator_model}
    store.record_usage(
        episode_id,
        {
            role: (models.get(role, "?"), usage, hub.price(models.get(role, "?")))
            for role, usage in episode.usage.items()
        },
    )
    store.finish_episode(episode_id, episode)
    return episode


async def run_matched_async(
    store: Store,
    scenario: Scenario,
    agents: Agents | None = None,
    seed: int = 0,
    budget: int = DEFAULT_BUDGET,
    condition: str = "general",
    hub: ModelHub | None = None,
    mediator: str | None = None,
) -> RunResult:
    agents = agents or Agents(mediator=mediator or "none")
    hub = hub or ModelHub(Path(store.root) / "cache.sqlite")
    run_id = store.create_run(
        "run",
        label=f"{scenario.id}/{agents.mediator}/seed{seed}",
        config={
            "scenario": scenario.id,
            **agents.describe(),
            "seed": seed,
            "budget": budget,
            "condition": condition,
        },
    )
    baseline: Episode | None = None
    baseline_id: str | None = None
    baseline_scores: dict[str, MetricResult] | None = None
    if agents.mediator != "none":
        baseline_id = f"{run_id}-unmediated"
        baseline = await play_episode(
            store,
            hub,
            run_id,
            baseline_id,
            scenario,
            agents,
            "none",
            seed,
            budget,
            condition,
            "unmediated",
        )
        baseline_scores = socrates.score_episode(baseline, None)
        store.add_scores(baseline_id, socrates.EVALUATOR, socrates.VERSION, baseline_scores)
    mediated = agents.mediator != "none"
    episode_id = f"{run_id}-{agents.mediator}" if mediated else f"{run_id}-unmediated"
    episode = await play_episode(
        store,
        hub,
        run_id,
        episode_id,
        scenario,
        agents,
        agents.mediator,
        seed,
        budget,
        condition,
        "mediated" if mediated else "unmediated",
        baseline_id,
    )
    scores = socrates.score_episode(episode, baseline)
    store.add_scores(episode_id, socrates.EVALUATOR, socrates.VERSION, scores)
    return RunResult(
        run_id, episode, episode_id, baseline, baseline_id, scores, baseline_scores, hub
    )


async def run_staged_async(
    store: Store,
    scenario: Scenario,
    agents: Agents,
    seed: int = 0,
    rounds: int = DEFAULT_ROUNDS,
    condition: str = "general",
    hub: ModelHub | None = None,
    retrieved: Sequence[str] = (),
) -> RunResult:
    """One staged mediation, stored and scored with the AgentMediation metrics. Staged
    metrics need no unmediated twin, so none is run."""
    hub = hub or ModelHub(Path(store.root) / "cache.sqlite")
    run_id = store.create_run(
        "run",
        label=f"{scenario.id}/staged/{agents.mediator}/seed{seed}",
        config={
            "scenario": scenario.id,
            "protocol": "staged",
            **agents.describe(),
            "seed": seed,
            "rounds": rounds,
            "condition": condition,
            "retrieved": list(retrieved),
        },
    )
    episode_id = f"{run_id}-{agents.mediator}"
    episode = await play_episode(
        store,
        hub,
        run_id,
        episode_id,
        scenario,
        agents,
        agents.mediator,
        seed,
        DEFAULT_BUDGET,
        condition,
        "mediated",
        None,
        protocol="staged",
        rounds=rounds,
        retrieved=retrieved,
    )
    scores = agentmediation.score_staged(episode, scenario)
    store.add_scores(episode_id, agentmediation.EVALUATOR, agentmediation.VERSION, scores)
    return RunResult(run_id, episode, episode_id, None, None, scores, None, hub)


def run_matched(store: Store, scenario: Scenario, **kwargs: object) -> RunResult:
    return asyncio.run(run_matched_async(store, scenario, **kwargs))  # type: ignore[arg-type]
