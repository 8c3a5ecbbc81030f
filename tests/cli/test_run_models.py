"""`disputelab run --model A --model B`: one case played with each model on the same seed,
paired as a spec's model axis pairs them, so that `disputelab compare RUN` ranks them;
a single `--model` runs as it always did."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from disputelab.cli import app
from disputelab.llm.testing import fake_openai
from disputelab.store.sqlite import Store
from tests.compare.stubs import AGREEMENT, agreeing

runner = CliRunner()
RUN = ["run", "tenancy", "--mediator", "rule", "--budget", "3", "--seed", "4"]


@pytest.fixture
def models() -> Iterator[list[str]]:
    """Two scripted models, stub-a and stub-b, each behind its own endpoint on 127.0.0.1."""
    with ExitStack() as stack:
        names = ["stub-a", "stub-b"]
        servers = [stack.enter_context(fake_openai(agreeing(AGREEMENT[n]))) for n in names]
        yield [f"openai:{n}@{s.url}" for n, s in zip(names, servers, strict=True)]


def _invoke(store: Path, *args: str) -> Result:
    return runner.invoke(app, ["--store", str(store), "--timeout", "5", *args])


def _with_models(models: list[str]) -> list[str]:
    return [a for m in models for a in ("--model", m)]


def _episodes(store: Path) -> tuple[str, dict[str, dict[str, Any]], dict[str, Any]]:
    s = Store(store, writable=False)
    try:
        run_id = s.resolve_run("last")
        headers = {r.episode_id: r for r in s.episode_headers(run_id)}
        agents = {eid: {**r.episode.agents, "seed": r.episode.seed} for eid, r in headers.items()}
        return run_id, agents, next(r for r in s.runs() if r["run_id"] == run_id)
    finally:
        s.close()


def test_two_models_play_the_same_case_and_seed_each(tmp_path: Path, models: list[str]) -> None:
    result = _invoke(tmp_path, *RUN, *_with_models(models))
    assert result.exit_code == 0, result.output

    run_id, agents, run = _episodes(tmp_path)
    assert run["planned"] == run["complete"] == 4
    assert set(agents) == {
        f"{run_id}-{arm}@openai:{m}" for arm in ("unmediated", "rule") for m in ("stub-a", "stub-b")
    }
    for eid, ep in agents.items():
        backbone = eid.rsplit("@", 1)[1]
        assert ep["backbone"] == backbone and ep["seed"] == 4
        assert ep["parties_model"].startswith(f"{backbone}@")  # the factor is recorded
    assert f"compare {run_id}" in " ".join(result.stdout.split())
    used = [line for line in result.stdout.splitlines() if line.startswith("model use")]
    assert [line.split(":", 1)[0] for line in used] == ["model use, parties (openai"] * 2
    assert [m in line for line in used for m in models] == [True, False, False, True]


def test_compare_ranks_the_models_of_such_a_run(tmp_path: Path, models: list[str]) -> None:
    assert _invoke(tmp_path, *RUN, *_with_models(models)).exit_code == 0
    run_id = _episodes(tmp_path)[0]

    result = _invoke(tmp_path, "compare", run_id, "--format", "json")

    assert result.exit_code == 0, result.output
    board = json.loads(result.stdout)["leaderboard"]
    assert [row["arm"] for row in board] == ["openai:stub-b", "openai:stub-a"]


# The config a single `--model` run of RUN stored before runs took several models, key
# for key and in this order (MODEL: the model's name).
SINGLE_CONFIG = (
    '{"scenario": "tenancy", "parties": "llm", "mediator": "rule", "parties_model": "MODEL", '
    '"judge_model": "MODEL", "seed": 4, "context": 12, "parties_temperature": 0.7, '
    '"mediator_temperature": null, "party_style": "persona", "party_memory": false, '
    '"culture_statement": "scores", "disclosure": "negotiator", "behaviour": {}, '
    '"budget": 3, "budget_per_party_topic": 0, "turn_counting": "party", '
    '"stop_on_consensus": true, "mediator_every_turn": false, "social_when_call": false, '
    '"mediator_consensus_state": false, "turn_taking": "cyclic", "thoughts": 2, '
    '"caucus": 0, "condition": "general"}'
)


def test_one_model_runs_and_is_stored_as_before(tmp_path: Path, models: list[str]) -> None:
    assert _invoke(tmp_path, *RUN, "--model", models[0]).exit_code == 0

    run_id, agents, run = _episodes(tmp_path)
    assert set(agents) == {f"{run_id}-unmediated", f"{run_id}-rule"}
    assert all("backbone" not in ep for ep in agents.values())
    assert run["label"] == "tenancy/rule/seed4"
    s = Store(tmp_path, writable=False)
    try:
        config = s.run_info(run_id)[1]
    finally:
        s.close()
    assert json.dumps(config) == SINGLE_CONFIG.replace("MODEL", models[0])


def _no_runs(store: Path) -> bool:
    s = Store(store)
    try:
        return not s.runs()
    finally:
        s.close()


def test_a_model_given_twice_is_one_line_and_exit_2(tmp_path: Path, models: list[str]) -> None:
    result = _invoke(tmp_path, *RUN, *_with_models([models[0], models[1], models[0]]))

    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: --model: {models[0]} given more than once; each model is compared once"
    ]
    assert _no_runs(tmp_path)


def test_the_dry_run_lists_each_model_of_the_parties(tmp_path: Path, models: list[str]) -> None:
    result = _invoke(tmp_path, *RUN, *_with_models(models), "--dry-run")

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "run tenancy (roundtable): condition general, seed 4, 2 models compared, 4 episodes"
    )
    assert "  episodes: RUN-unmediated@openai:stub-a, RUN-rule@openai:stub-a, " in result.stdout
    assert f"  models, parties: {models[0]}, {models[1]}" in lines
    assert lines[-1] == "  dry run: nothing was run or stored"
    assert _no_runs(tmp_path)
