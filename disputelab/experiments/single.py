"""One `disputelab run`: a mediated episode and its matched unmediated twin, stored and scored."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from disputelab.agents.registry import make_mediator, make_parties
from disputelab.episode import Episode
from disputelab.evaluation import socrates
from disputelab.evaluation.metrics import MetricResult
from disputelab.protocols.roundtable import DEFAULT_BUDGET, RoundTable
from disputelab.scenario.io import scenario_to_data
from disputelab.scenario.schema import Scenario
from disputelab.store.sqlite import Store


@dataclass
class RunResult:
    run_id: str
    episode: Episode
    episode_id: str
    baseline: Episode | None
    baseline_id: str | None
    scores: dict[str, MetricResult]
    baseline_scores: dict[str, MetricResult] | None = None


async def play_episode(
    store: Store,
    run_id: str,
    episode_id: str,
    scenario: Scenario,
    mediator: str,
    parties_model: str,
    seed: int,
    budget: int,
    condition: str = "general",
    arm: str = "",
    matched_episode_id: str | None = None,
) -> Episode:
    """Play and commit one roundtable episode, turn by turn."""
    episode = Episode(
        scenario.id,
        RoundTable.name,
        seed,
        {"parties": parties_model, "mediator": mediator},
        condition,
    )
    store.start_episode(
        episode_id, run_id, episode, scenario_to_data(scenario), arm, matched_episode_id
    )
    try:
        await RoundTable(budget).run(
            scenario,
            make_parties(scenario, parties_model, seed),
            make_mediator(scenario, mediator),
            episode,
            on_turn=lambda turn: store.append_turn(episode_id, turn),
        )
    except Exception as exc:
        store.fail_episode(episode_id, f"{type(exc).__name__}: {exc}")
        raise
    store.finish_episode(episode_id, episode)
    return episode


async def run_matched_async(
    store: Store,
    scenario: Scenario,
    mediator: str = "none",
    parties_model: str = "rule",
    seed: int = 0,
    budget: int = DEFAULT_BUDGET,
    condition: str = "general",
) -> RunResult:
    run_id = store.create_run(
        "run",
        label=f"{scenario.id}/{mediator}/seed{seed}",
        config={
            "scenario": scenario.id,
            "mediator": mediator,
            "parties": parties_model,
            "seed": seed,
            "budget": budget,
            "condition": condition,
        },
    )
    baseline: Episode | None = None
    baseline_id: str | None = None
    baseline_scores: dict[str, MetricResult] | None = None
    if mediator != "none":
        baseline_id = f"{run_id}-unmediated"
        baseline = await play_episode(
            store,
            run_id,
            baseline_id,
            scenario,
            "none",
            parties_model,
            seed,
            budget,
            condition,
            "unmediated",
        )
        baseline_scores = socrates.score_episode(baseline, None)
        store.add_scores(baseline_id, socrates.EVALUATOR, socrates.VERSION, baseline_scores)
    episode_id = f"{run_id}-{mediator}" if mediator != "none" else f"{run_id}-unmediated"
    episode = await play_episode(
        store,
        run_id,
        episode_id,
        scenario,
        mediator,
        parties_model,
        seed,
        budget,
        condition,
        "mediated" if baseline else "unmediated",
        baseline_id,
    )
    scores = socrates.score_episode(episode, baseline)
    store.add_scores(episode_id, socrates.EVALUATOR, socrates.VERSION, scores)
    return RunResult(run_id, episode, episode_id, baseline, baseline_id, scores, baseline_scores)


def run_matched(store: Store, scenario: Scenario, **kwargs: object) -> RunResult:
    return asyncio.run(run_matched_async(store, scenario, **kwargs))  # type: ignore[arg-type]
