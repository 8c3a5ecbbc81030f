"""A run owns its agents' memos: the runner makes one set per run and hands it to every
episode it seats, and another run gets another set. (Which set an episode plays with
changes nothing in it: tests/agents/test_rule_memos.py.)"""

from __future__ import annotations

import asyncio
from pathlib import Path

from disputelab.agents.memos import AgentMemos
from disputelab.agents.parties.rule import RuleParty
from disputelab.agents.parties.rule_memos import RuleMemos
from disputelab.episode import Episode
from disputelab.experiments.episodes import Cast, EpisodePlan, seat_agents
from disputelab.experiments.executors import LocalExecutor
from disputelab.experiments.runner import run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.protocols.base import get_protocol
from disputelab.store.sqlite import Store
from tests.helpers import scenario

GRID = ExperimentSpec(
    name="grid",
    scenarios=["tenancy", "workplace"],
    mediators=["rule"],
    replicates=2,
    params={"budget": 20},
)


class RememberingExecutor(LocalExecutor):
    """Plays in the runner's loop, as the default executor does, and keeps the memos it
    was handed for each episode."""

    def __init__(self) -> None:
        self.handed: list[AgentMemos | None] = []

    async def play(
        self,
        store: Store,
        hub: ModelHub,
        run_id: str,
        plan: EpisodePlan,
        memos: AgentMemos | None = None,
    ) -> Episode:
        self.handed.append(memos)
        return await super().play(store, hub, run_id, plan, memos)


def _grid(root: Path) -> RememberingExecutor:
    executor = RememberingExecutor()
    store = Store(root)
    try:
        plan = plan_experiment(GRID, base=root)
        summary = asyncio.run(run_experiment(store, plan, ModelHub(None), executor=executor))
    finally:
        store.close()
    assert summary.done == 8 and not summary.failed
    return executor


def test_every_episode_of_a_grid_plays_with_the_runs_memos_and_another_run_has_its_own(
    tmp_path: Path,
) -> None:
    first, second = _grid(tmp_path / "a"), _grid(tmp_path / "b")
    assert len(first.handed) == 8
    assert first.handed[0] is not None and all(m is first.handed[0] for m in first.handed)
    assert second.handed[0] is not first.handed[0]
    rules = first.handed[0].of(RuleMemos)
    assert any(rules.sizes().values())  # the grid's parties filled them


def _plan(seed: int) -> EpisodePlan:
    proto = get_protocol("roundtable")
    cast = Cast({"parties": "rule", "mediator": "rule"})
    return EpisodePlan(f"e{seed}", scenario("tenancy"), "roundtable", proto.params({}), cast, seed)


def test_the_episodes_seated_with_one_runs_memos_share_them() -> None:
    hub, run = ModelHub(None), AgentMemos()
    one, _ = seat_agents(_plan(0), hub, run)
    two, _ = seat_agents(_plan(1), hub, run)
    alone, _ = seat_agents(_plan(0), hub)
    assert all(isinstance(p, RuleParty) for p in [*one, *two, *alone])
    assert one[0].choice.cand is two[0].choice.cand  # type: ignore[attr-defined]
    assert alone[0].choice.cand is not one[0].choice.cand  # type: ignore[attr-defined]
