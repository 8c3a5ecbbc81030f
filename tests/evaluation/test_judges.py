"""Rubric judges: reasoning before the label, majority over judges, NaN with a reason on
failure, every call cached, scores stored and versioned beside the old ones."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.evaluation.judges import level_judgement, majority, mediator_intelligence_ratings
from disputelab.llm.openai_backend import OpenAICompatible
from disputelab.llm.testing import Scripted, fake_openai
from disputelab.store.sqlite import Store
from tests.helpers import play, scenario


def _judge(url: str, name: str = "judge") -> OpenAICompatible:
    return OpenAICompatible(name, url, api_key_env=None)


def test_majority_breaks_ties_toward_the_middle() -> None:
    assert majority(["high", "high", "low"]) == "high"
    assert majority(["very low", "very high"]) == "very low"  # median of two: the lower
    assert majority(["low", "medium", "high"]) == "medium"


def test_level_judgement_combines_judges_by_majority() -> None:
    replies = {"a": "high", "b": "high", "c": "very low"}

    def answer(body: dict[str, Any]) -> Scripted:
        label = replies[body["model"]]
        return Scripted(content=json.dumps({"reasoning": "because", "label": label}))

    with fake_openai(answer) as server:
        judges = [_judge(server.url, n) for n in "abc"]
        r = asyncio.run(level_judgement(judges, "Rate consensus.", "A: hi\nB: hello"))
        schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert r.value == 75.0 and r.detail["labels"] == ["high", "high", "very low"]
    assert next(iter(schema["properties"])) == "reasoning"  # reasoning comes before the label


def test_a_judge_that_never_answers_usably_gives_nan_with_the_reason() -> None:
    with fake_openai(lambda b: Scripted(content='{"label": "superb"}')) as server:
        r = asyncio.run(level_judgement([_judge(server.url)], "Rate.", "A: hi"))
    assert math.isnan(r.value) and "judge failed" in r.explanation


def test_mediator_intelligence_rates_each_intervention_window() -> None:
    s = scenario("workplace")
    ep = play(s, "rule", seed=0, budget=20)
    n = len(ep.intervention_positions())
    reply = {
        "reasoning": "r",
        "perception_alignment": 4,
        "emotional_dynamics": -1,
        "cognitive_challenges": 2,
        "communication_breakdowns": -1,
    }
    with fake_openai(lambda b: Scripted(content=json.dumps(reply))) as server:
        ratings = asyncio.run(mediator_intelligence_ratings([_judge(server.url)], ep, s))
        assert server.calls == n
    assert isinstance(ratings, list) and len(ratings) == n
    assert ratings[0]["emotional_dynamics"] == -1 and ratings[0]["perception_alignment"] == 4


def test_evaluate_with_judges_stores_versioned_scores_and_caches_calls(
    tmp_path: Path,
) -> None:
    reply = {"reasoning": "r", "label": "medium"}
    with fake_openai(lambda b: Scripted(content=json.dumps(reply))) as server:
        runner = CliRunner()
        base = ["--store", str(tmp_path)]
        assert runner.invoke(app, [*base, "run", "tenancy", "--mediator", "rule"]).exit_code == 0
        judge = f"openai:j@{server.url}"
        args = [*base, "evaluate", "last", "--evaluator", "outcome-judges", "--judge-model", judge]
        first = runner.invoke(app, args)
        calls = server.calls
        again = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert calls == 2 * 2  # two episodes, two rubrics
    assert server.calls == calls  # the second evaluation came from the cache
    assert "0 calls" in " ".join(again.output.split())
    store = Store(tmp_path)
    eid = store.episode_ids(store.resolve_run("last"))[-1]
    rows = [s for s in store.scores(eid) if s.evaluator == "outcome-judges"]
    assert {s.metric for s in rows} == {"consensus_judge", "litigation_risk_judge"}
    assert all(s.judge_model == judge and s.version == "1" and s.value == 50.0 for s in rows)
    assert any(s.evaluator == "socrates-oracle" for s in store.scores(eid))
