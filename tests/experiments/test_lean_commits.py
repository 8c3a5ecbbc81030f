"""Turns are committed in groups, and finished episodes are scored from memory; neither
changes what is stored."""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from disputelab.episode import Turn
from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.registry import (
    EVALUATORS,
    EpisodeToScore,
    Evaluator,
    ScoringContext,
    register_evaluator,
)
from disputelab.experiments.episodes import (
    ExtraScoring,
    TurnCommits,
    commit_interval,
    scenario_json,
    score_protocol,
)
from disputelab.experiments.judging import evaluate_run, scoring_options
from disputelab.experiments.runner import extra_scoring, run_experiment
from disputelab.llm.models import ModelHub
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec, grid_episodes
from disputelab.protocols.base import get_protocol
from disputelab.scenario.conditions import apply_condition
from disputelab.scenario.io import scenario_to_data
from disputelab.store.sqlite import Store, compact_json
from tests.helpers import play, scenario, stored_turns


def _stored_turns(store: Store, eid: str) -> int:
    return len(stored_turns(store.db, eid))


def _started(tmp_path: Path) -> tuple[Store, list[Turn], Callable[[], None]]:
    """A store, an episode's turns, and the call that registers the episode."""
    store = Store(tmp_path / "runs")
    run = store.create_run("run")
    episode = play(scenario(), budget=10)
    return store, episode.turns, lambda: store.start_episode("e", run, episode, {})


def _registered(store: Store) -> bool:
    return store.db.execute("SELECT 1 FROM episodes WHERE episode_id='e'").fetchone() is not None


def test_with_no_interval_every_turn_is_committed_as_it_comes(tmp_path: Path) -> None:
    store, turns, start = _started(tmp_path)
    commits = TurnCommits(store, "e", start, every_s=0)
    for n, turn in enumerate(turns, 1):
        commits.add(turn)
        assert _stored_turns(store, "e") == n and _registered(store)


def test_a_short_episode_is_not_in_the_store_until_its_flush_writes_it_whole(
    tmp_path: Path,
) -> None:
    store, turns, start = _started(tmp_path)
    commits = TurnCommits(store, "e", start, every_s=3600)
    for turn in turns:
        commits.add(turn)
    assert _stored_turns(store, "e") == 0 and not _registered(store)
    commits.commit()
    assert _stored_turns(store, "e") == len(turns) and _registered(store)


def _transactions(statements: list[str]) -> list[list[str]]:
    """The statements of each write transaction, from a connection's trace."""
    out: list[list[str]] = []
    current: list[str] | None = None
    for statement in statements:
        if statement.startswith("BEGIN"):
            current = []
        elif statement == "COMMIT" and current is not None:
            out.append(current)
            current = None
        elif current is not None:
            current.append(statement)
    return out


def test_a_played_episode_is_written_in_one_transaction_and_scored_in_another(
    tmp_path: Path,
) -> None:
    """Start, turns (one chunk), usage and end of a rule episode go in one commit, its
    scores in one."""
    store = Store(tmp_path / "runs")
    statements: list[str] = []
    store.db.set_trace_callback(statements.append)
    spec = ExperimentSpec(
        name="one", scenarios=["workplace"], mediators=["none"], budget=20, replicates=1
    )
    asyncio.run(run_experiment(store, plan_experiment(spec, base=tmp_path), ModelHub(None)))
    store.db.set_trace_callback(None)
    txs = _transactions(statements)
    writes = ("INTO turn", "INTO episodes", "UPDATE episodes")
    episode = [t for t in txs if any(w in s for s in t for w in writes)]
    assert len(episode) == 1
    assert any("INSERT OR REPLACE INTO episodes" in s for s in episode[0])
    assert sum("INSERT INTO turn_chunks" in s for s in episode[0]) == 1
    assert not any("INTO turns" in s or "INTO strings" in s for s in episode[0])
    assert any(s.startswith("UPDATE episodes SET status") for s in episode[0])
    assert sum(any("INTO scores" in s for s in t) for t in txs) == 1


def test_a_commit_that_fails_keeps_the_start_and_turns_for_the_next(tmp_path: Path) -> None:
    store, turns, start = _started(tmp_path)
    commits = TurnCommits(store, "e", start, every_s=3600)
    for turn in turns:
        commits.add(turn)

    def disk_full() -> None:
        raise OSError("no space left on device")

    with pytest.raises(OSError):
        commits.commit(disk_full)
    assert not _registered(store) and _stored_turns(store, "e") == 0
    commits.commit(lambda: store.fail_episode("e", "OSError: no space left on device"))
    assert _registered(store) and _stored_turns(store, "e") == len(turns)
    assert store.load_episode("e").status == "failed"


def test_a_batch_that_fails_leaves_nothing_behind(tmp_path: Path) -> None:
    store, turns, start = _started(tmp_path)
    with pytest.raises(RuntimeError), store.batch():
        start()
        store.append_turns("e", turns)
        raise RuntimeError("the disk filled up")
    assert not _registered(store) and _stored_turns(store, "e") == 0
    with store.batch():  # and the store takes the next batch as usual
        start()
    assert _registered(store)


def test_a_long_episode_commits_once_the_interval_has_passed(tmp_path: Path) -> None:
    store, turns, start = _started(tmp_path)
    commits = TurnCommits(store, "e", start, every_s=0.05)
    commits.add(turns[0])
    assert _stored_turns(store, "e") == 0
    time.sleep(0.06)  # a lower bound only: more time can only commit sooner
    commits.add(turns[1])
    assert _stored_turns(store, "e") == 2


@pytest.mark.parametrize(("value", "ok"), [("0", True), ("2.5", True), ("-1", False), ("x", False)])
def test_the_interval_comes_from_the_environment_and_is_checked(
    monkeypatch: pytest.MonkeyPatch, value: str, ok: bool
) -> None:
    monkeypatch.setenv("DISPUTELAB_COMMIT_EVERY_S", value)
    if ok:
        assert commit_interval() == float(value)
    else:
        with pytest.raises(ValueError, match="DISPUTELAB_COMMIT_EVERY_S must be"):
            commit_interval()


def _small_grid(name: str, turn_taking: str, evaluators: list[str] | None = None) -> ExperimentSpec:
    """Two scenarios x two conditions x two replicates, rule-mediated and twins."""
    return ExperimentSpec(
        name=name,
        scenarios=["tenancy", "workplace"],
        conditions=["general", "posture:competing"],
        mediators=["rule"],
        replicates=2,
        evaluators=evaluators or [],
        params={"budget": 30, "turn_taking": turn_taking},
    )


@pytest.mark.parametrize("turn_taking", ["cyclic", "motivated"])
def test_scores_from_memory_equal_scores_from_the_reloaded_episodes(
    tmp_path: Path, turn_taking: str
) -> None:
    spec = _small_grid("mem", turn_taking)
    store = Store(tmp_path / "runs")
    asyncio.run(run_experiment(store, plan_experiment(spec, base=tmp_path), ModelHub(None)))
    protocol = get_protocol(spec.protocol)
    fresh = Store(tmp_path / "rescored")
    fresh.create_run("experiment", run_id="mem")
    for ep in grid_episodes(spec, ["tenancy", "workplace"]):
        record = store.load_episode(ep.episode_id)
        twin = store.load_episode(ep.baseline_id).episode if ep.baseline_id else None
        conditioned = apply_condition(scenario(ep.scenario_id), ep.condition)
        item = EpisodeToScore(record.episode, conditioned, twin, ep.episode_id, ep.baseline_id)
        fresh.start_episode(ep.episode_id, "mem", record.episode, {})
        reloaded = asyncio.run(score_protocol(fresh, ep.episode_id, item, protocol))
        stored = {s.metric: s for s in store.scores(ep.episode_id)}
        assert set(stored) == set(reloaded), ep.episode_id
        for metric, result in reloaded.items():
            a, b = stored[metric].value, result.value
            assert (math.isnan(a) and math.isnan(b)) or a == b, (ep.episode_id, metric)
            assert stored[metric].explanation == result.explanation


def test_a_grids_episodes_store_their_cells_conditioned_scenario(tmp_path: Path) -> None:
    spec = ExperimentSpec(name="cells", scenarios=["tenancy"], mediators=["rule"], replicates=3)
    store = Store(tmp_path / "runs")
    asyncio.run(run_experiment(store, plan_experiment(spec, base=tmp_path), ModelHub(None)))
    rows = store.db.execute("SELECT episode_id, scenario, scenario_ref FROM episodes")
    records = [store.load_episode(eid) for eid, _, _ in rows.fetchall()]
    conditioned = apply_condition(scenario("tenancy"), "general")
    assert all(r.scenario == scenario_to_data(conditioned) for r in records)
    assert json.loads(scenario_json(conditioned)) == scenario_to_data(conditioned)


def test_an_episode_started_with_scenario_json_stores_what_its_data_would(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "runs")
    run = store.create_run("run")
    episode = play(scenario(), budget=4)
    store.start_episode("by-data", run, episode, scenario_to_data(scenario()))
    store.start_episode("by-text", run, episode, scenario_json(scenario()))
    rows = store.db.execute("SELECT scenario, scenario_ref FROM episodes ORDER BY episode_id")
    (data_text, data_ref), (text_text, text_ref) = rows.fetchall()
    assert data_text == compact_json(scenario_to_data(scenario()))
    assert (text_text, text_ref) in {(data_text, data_ref), ("", text_ref)}
    assert store.load_episode("by-text").scenario == store.load_episode("by-data").scenario


def _score_rows(store: Store, evaluators: tuple[str, ...]) -> dict[tuple[str, ...], tuple]:
    marks = ",".join("?" * len(evaluators))
    rows = store.db.execute(
        "SELECT episode_id, evaluator, metric, version, judge_model, value, explanation,"
        f" detail FROM scores WHERE evaluator IN ({marks})",
        evaluators,
    )
    return {tuple(r[:3]): tuple(r[3:]) for r in rows}


def test_quick_extra_evaluators_score_from_memory_what_a_pass_after_the_run_would(
    tmp_path: Path,
) -> None:
    spec = _small_grid("extras", "motivated", evaluators=["self-report", "turn-taking"])
    assert extra_scoring(plan_experiment(spec, base=tmp_path)).evaluators == (
        "self-report",
        "turn-taking",
    )
    store = Store(tmp_path / "runs")
    turn_reads: list[str] = []
    store.db.set_trace_callback(
        lambda sql: (
            turn_reads.append(sql)
            if sql.startswith("SELECT") and ("FROM turns" in sql or "data FROM turn_chunks" in sql)
            else None
        )
    )
    asyncio.run(run_experiment(store, plan_experiment(spec, base=tmp_path), ModelHub(None)))
    store.db.set_trace_callback(None)
    assert turn_reads == []  # nothing played here was read back to be scored
    stored_names = ("tracker:self-report", "turn-taking")
    as_played = _score_rows(store, stored_names)
    assert len({eid for eid, _, _ in as_played}) == 16  # every episode, both evaluators
    for name in spec.evaluators:
        asyncio.run(evaluate_run(store, "extras", name, ModelHub(None), []))
    assert _score_rows(store, stored_names) == as_played


def test_extra_evaluators_that_call_a_judge_or_take_long_score_after_the_run() -> None:
    spec = ExperimentSpec(
        name="later",
        scenarios=["tenancy"],
        mediators=["rule"],
        evaluators=["self-report", "outcome-judges", "points-bertscore", "promediate"],
        models={"judge": "local"},
        bert_model="bert-base-chinese",
    )
    extras = extra_scoring(plan_experiment(spec))
    # promediate needs no judge, but judges topic mentions when a judge is given
    assert extras.evaluators == ("self-report",)
    assert extras.judge_name == "local"  # stored as a pass of `evaluate` would store it
    unjudged = spec.model_copy(update={"models": {}, "evaluators": ["promediate"]})
    assert extra_scoring(plan_experiment(unjudged)).evaluators == ("promediate",)


def test_an_extra_evaluator_that_fails_costs_no_protocol_score(tmp_path: Path) -> None:
    async def broken(item: EpisodeToScore, ctx: ScoringContext) -> dict[str, MetricResult]:
        raise RuntimeError("a bug in the extra evaluator")

    register_evaluator(Evaluator("probe-broken", "1", "always fails", broken))
    try:
        store = Store(tmp_path / "runs")
        run = store.create_run("run")
        episode = play(scenario(), budget=6)
        store.start_episode("e", run, episode, {})
        protocol = get_protocol("roundtable")
        extras = ExtraScoring(("self-report", "probe-broken"), scoring_options())
        item = EpisodeToScore(episode, scenario())
        with pytest.raises(RuntimeError, match="a bug in the extra"):
            asyncio.run(score_protocol(store, "e", item, protocol, extras=extras))
    finally:
        EVALUATORS.unregister("probe-broken")
    stored = {s.evaluator for s in store.scores("e")}
    assert stored == {"socrates-oracle", "tracker:self-report"}  # all but the broken one
