"""Re-scoring with a judge charges the judge's calls to the episode, under their own role."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.testing import Scripted, fake_openai, fill
from disputelab.report.render import run_markdown
from disputelab.store.sqlite import Store


def test_judge_calls_are_stored_per_episode_under_the_evaluators_role(tmp_path: Path) -> None:
    reply = {"reasoning": "r", "label": "high"}
    with fake_openai(lambda b: Scripted(content=json.dumps(reply))) as server:
        runner = CliRunner()
        base = ["--store", str(tmp_path)]
        assert runner.invoke(app, [*base, "run", "tenancy", "--mediator", "rule"]).exit_code == 0
        judge = f"openai:j@{server.url}"
        args = [*base, "evaluate", "--evaluator", "outcome-judges", "--judge-model", judge]
        assert runner.invoke(app, args).exit_code == 0
    store = Store(tmp_path)
    run_id = store.resolve_run("last")
    for eid in store.episode_ids(run_id):
        (row,) = [u for u in store.usage(eid) if u["role"] == "judge:outcome-judges"]
        # two rubrics per episode; the scripted server reports 11 tokens in and 7 out
        assert (row["model"], row["calls"]) == (judge, 2)
        assert (row["input_tokens"], row["output_tokens"]) == (22, 14)
    assert "judge:outcome-judges" in run_markdown(store, run_id)


def test_evaluate_on_an_experiment_prints_means_per_condition_and_arm(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: ev\nscenarios: [tenancy, workplace]\nconditions: [general, posture:competing]\n"
        "replicates: 2\nbudget: 20\n",
        encoding="utf-8",
    )
    runner = CliRunner()
    base = ["--store", str(tmp_path / "s")]
    assert runner.invoke(app, [*base, "experiment", str(spec)]).exit_code == 0
    table = runner.invoke(app, [*base, "evaluate", "ev", "--evaluator", "self-report"])
    assert table.exit_code == 0, table.output
    flat = " ".join(table.output.split())
    assert "mean per condition and arm" in flat
    assert "n: 4" in flat or "│ 4 " in flat  # a record per cell, or a table row
    assert flat.count("posture:competing") == 2  # one line per arm, not per episode
    rows = (
        runner.invoke(
            app, [*base, "evaluate", "ev", "--evaluator", "self-report", "--format", "csv"]
        )
        .output.strip()
        .splitlines()
    )
    assert rows[0].startswith("episode,condition,arm,final_consensus")
    assert len(rows) == 1 + 16


def test_judge_calls_per_episode_agree_with_the_usage_stored_for_it(tmp_path: Path) -> None:
    def answer(body: dict[str, object]) -> Scripted:
        fmt = body.get("response_format") or {}
        assert isinstance(fmt, dict)
        schema = (fmt.get("json_schema") or {}).get("schema") or {"type": "object"}
        return Scripted(content=json.dumps(fill(schema, text="r")))

    with fake_openai(answer) as server:
        runner = CliRunner()
        base = ["--store", str(tmp_path)]
        run = [*base, "run", "tenancy", "--mediator", "rule", "--budget", "6"]
        assert runner.invoke(app, run).exit_code == 0
        judge = f"openai:j@{server.url}"
        args = [*base, "evaluate", "--evaluator", "topic-localized", "--judge-model", judge]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    store = Store(tmp_path)
    total = 0
    for eid in store.episode_ids(store.resolve_run("last")):
        (calls,) = [s.value for s in store.scores(eid) if s.metric == "judge_calls"]
        used = [u["calls"] for u in store.usage(eid) if u["role"] == "judge:topic-localized"]
        assert calls == (used[0] if used else 0)
        total += int(calls)
    assert total == server.calls
    assert f"{total} calls to the model" in " ".join(result.output.split())


def test_the_promediate_evaluator_scores_stated_stances_on_dialogue_lines_dropping_undefined(
    tmp_path: Path,
) -> None:
    # Self-report is undefined until all three workplace parties have spoken. Under full
    # disclosure rule parties state their true stances (as negotiators, the default, they
    # keep them private: issue 14), so once defined it equals the consensus the protocol
    # recorded after each line; mediator lines carry the state before them.
    runner = CliRunner()
    base = ["--store", str(tmp_path)]
    run = [*base, "run", "workplace", "--mediator", "rule", "--budget", "40"]
    run += ["--disclosure", "full"]
    assert runner.invoke(app, run).exit_code == 0
    args = [*base, "evaluate", "--evaluator", "promediate", "--tracker", "self-report"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    store = Store(tmp_path)
    (eid,) = [e for e in store.episode_ids(store.resolve_run("last")) if "unmediated" not in e]
    episode = store.load_episode(eid).episode
    assert episode.intervention_positions(), "the rule mediator should speak in 40 turns"
    spoken: set[str] = set()
    states: list[float] = []
    for turn in episode.turns:
        if turn.role == "party":
            spoken.add(turn.speaker)
        if len(spoken) < 3:
            continue
        c = turn.consensus
        states.append(sum(c.values()) / len(c) if c is not None else states[-1])
    expected = 100 * (sum(states[-10:]) / 10 - sum(states[:10]) / 10)
    (cc,) = [s for s in store.scores(eid) if s.metric == "consensus_change"]
    assert cc.value == pytest.approx(expected)
