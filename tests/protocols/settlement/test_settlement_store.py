"""The settlement protocol through the runner and the command line: with `memory: store`
what one episode's counsel learnt is on disk for the next episode (and the next
experiment), and `disputelab run` plays a case offline and prints its BATNA and amount."""

from __future__ import annotations

import asyncio
from pathlib import Path

from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.experiments.episodes import run_single
from disputelab.llm.models import ModelHub
from disputelab.plan.cast import Cast
from disputelab.protocols.settlement.agents.memory import MemoryFile
from disputelab.scenario.library import builtin_scenarios
from disputelab.store.sqlite import Store


def _run(store: Store, sid: str, memory: str) -> list[str]:
    """The planning counsel's thoughts (its candidates and their values) in one episode."""
    cast = Cast({"parties": "boulware", "counsel": "mcts", "mediator": "rule"}, {})
    sc = builtin_scenarios()[sid]
    result = asyncio.run(
        run_single(store, sc, cast, 0, "settlement", {"memory": memory}, hub=ModelHub(None))
    )
    return [
        t.action.thought for t in result.episode.turns if t.speaker == sc.parties[0].id and t.action
    ]


def test_stored_memory_outlives_the_episode_and_reaches_the_next_case(tmp_path: Path) -> None:
    store = Store(tmp_path)
    _run(store, "settle-dismissal-pregnancy", "store")
    counts = MemoryFile(tmp_path).counts()
    assert counts and sum(counts.values()) > 0
    thoughts = _run(store, "settle-unpaid-overtime", "store")  # same dispute family: labour
    assert any("memory-C" in t for t in thoughts)  # a case card from the other case
    assert sum(MemoryFile(tmp_path).counts().values()) > sum(counts.values())


def test_episode_memory_leaves_nothing_in_the_store(tmp_path: Path) -> None:
    _run(Store(tmp_path), "settle-dismissal-pregnancy", "episode")
    assert MemoryFile(tmp_path).counts() == {}


def test_the_run_command_plays_a_settlement_offline(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["--store", str(tmp_path), "run", "settle-gym-slip", "--protocol", "settlement"]
    )
    assert result.exit_code == 0, result.output
    assert "BATNA: J 16,000" in result.output
    assert "success" in result.output and "acc20" in result.output
