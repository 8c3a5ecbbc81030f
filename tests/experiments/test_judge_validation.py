"""Judge validation as a stored run: rule-policy episodes on several scenarios, voiced in
templates, paraphrases or a model's words, every tracker on the same aligned points."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

from disputelab.evaluation.baselines import BASELINES
from disputelab.evaluation.trackers import oracle, self_report
from disputelab.experiments.validation import (
    EVALUATOR,
    ValidationPlan,
    load_validation,
    validate_judge,
)
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai, fill
from disputelab.store.sqlite import Store
from tests.helpers import scenario

TEMPLATE_ONLY = ("could live with", "would also be workable", "nothing else works")


def _validate(tmp_path: Path, plan: ValidationPlan) -> tuple[Store, Any]:
    store = Store(tmp_path)
    hub = ModelHub(tmp_path / "cache.sqlite")
    scenarios = [scenario(s) for s in plan.scenarios]
    steps: list[tuple[int, int]] = []
    report = asyncio.run(
        validate_judge(store, hub, scenarios, plan, lambda d, t: steps.append((d, t)))
    )
    n = len(plan.scenarios) * plan.episodes
    assert steps[-1] == (n * (1 + len(plan.trackers)),) * 2  # progress reaches its total
    return store, report


def test_self_report_reads_the_oracle_on_every_voice_and_is_flagged(tmp_path: Path) -> None:
    for voice in ("template", "paraphrase"):
        plan = ValidationPlan(
            ("tenancy", "workplace", "community-centre"),
            ("self-report",),
            voice=voice,
            episodes=2,
            budget=16,
        )
        _, report = _validate(tmp_path / voice, plan)
        fit, *baselines = report.fits
        assert [b.tracker for b in baselines] == list(BASELINES)
        assert fit.reads_oracle and fit.episodes == 6
        assert math.isclose(fit.pearson.value, 1.0) and fit.mae.value == 0.0
        assert fit.kappa.value == 1.0 and fit.calls_per_episode == 0
        assert report.scenario_ids == ["community-centre", "tenancy", "workplace"]
        # Dropped points are the turns before every party spoke, and nothing else.
        assert list(report.dropped) == ["self-report: undefined until every party has spoken"]
        assert fit.points + sum(report.dropped.values()) == report.considered


def test_the_paraphrase_voice_never_recites_acceptable_options(tmp_path: Path) -> None:
    plan = ValidationPlan(("workplace",), ("self-report",), voice="paraphrase", budget=20)
    store, report = _validate(tmp_path, plan)
    texts = []
    for eid in store.episode_ids(report.run_id):
        rec = store.load_episode(eid)
        s = scenario("workplace")
        # The policy is the rule one: the oracle is defined and self-report equals it.
        truth, stated = oracle(rec.episode, s), self_report(rec.episode, s)
        assert truth.failure is None
        assert [x for x in stated.overall() if not math.isnan(x)] == truth.overall()[
            -len([x for x in stated.overall() if not math.isnan(x)]) :
        ]
        texts += [t.text for t in rec.episode.turns if t.role == "party"]
    assert texts and not any(p in t for t in texts for p in TEMPLATE_ONLY)
    assert len(set(texts)) > len(texts) // 2  # paraphrases vary


def test_the_stored_run_rebuilds_the_same_table(tmp_path: Path) -> None:
    plan = ValidationPlan(("tenancy", "workplace"), ("self-report",), episodes=2, budget=12)
    store, report = _validate(tmp_path, plan)
    kind, config = store.run_info(report.run_id)
    assert kind == "validation" and ValidationPlan.of(config) == plan
    again = load_validation(store, report.run_id)
    assert again.fits == report.fits and again.dropped == report.dropped


def _judge_answer(body: dict[str, Any]) -> Scripted:
    """A judge that locates turn 2 at 2 and turn 5 at 4; any other schema filled."""
    fmt = body["response_format"]["json_schema"]
    if fmt["name"] == "topic_events":
        parties = fmt["schema"]["properties"]["events"]["items"]["properties"]["stances"]
        stances = dict.fromkeys(parties["required"], "none")
        events = [
            {"turn": 2, "reasoning": "r", "score": 2, "stances": stances},
            {"turn": 5, "reasoning": "r", "score": 4, "stances": stances},
        ]
        return Scripted(content=json.dumps({"events": events}), prompt_tokens=100)
    return Scripted(content=json.dumps(fill(fmt["schema"], text="Fair enough, let's go on.")))


def test_a_judge_through_a_server_is_scored_on_the_points_self_report_defines(
    tmp_path: Path,
) -> None:
    with fake_openai(_judge_answer) as server:
        model = f"openai:judge@{server.url}"
        plan = ValidationPlan(
            ("tenancy", "workplace", "community-centre"),
            ("self-report", "topic-localized"),
            (model,),
            voice="paraphrase",
            episodes=2,
            budget=8,
        )
        store, report = _validate(tmp_path, plan)
    mine, judge, *_ = report.fits
    assert mine.points == judge.points > 0  # the same aligned points
    assert judge.judge == model and not judge.reads_oracle
    # One judge pass per topic: 4 topics in each scenario.
    assert judge.calls_per_episode == 4 and judge.tokens_per_episode == 4 * (100 + 7)
    stored = [
        s
        for e in store.episode_ids(report.run_id)
        for s in store.scores(e)
        if s.evaluator == EVALUATOR and s.metric == "topic-localized"
    ]
    assert len(stored) == 6 and all(s.judge_model == model for s in stored)
    first = store.episode_ids(report.run_id)[0]
    (usage,) = [u for u in store.usage(first) if u["role"] == f"judge:{EVALUATOR}:topic-localized"]
    assert usage["calls"] == 4 and usage["input_tokens"] == 400


def test_a_failing_judge_drops_points_with_its_reason(tmp_path: Path) -> None:
    with fake_openai(lambda body: Scripted(content="no idea")) as server:
        plan = ValidationPlan(
            ("tenancy",),
            ("self-report", "topic-localized"),
            (f"openai:judge@{server.url}",),
            episodes=2,
            budget=6,
        )
        _, report = _validate(tmp_path, plan)
    mine, judge, *_ = report.fits
    assert mine.points == judge.points == 0
    assert any("topic-localized: judge failed" in why for why in report.dropped)
    assert math.isnan(judge.pearson.value) and judge.pearson.why
    assert judge.failures and math.isnan(judge.kappa.value) and judge.kappa.why
    # The calls a failed judge made still count in its cost.
    assert judge.calls_per_episode > 0


def test_hybrid_parties_voice_the_rule_moves_through_a_model(tmp_path: Path) -> None:
    with fake_openai(_judge_answer) as server:
        model = f"openai:judge@{server.url}"
        plan = ValidationPlan(
            ("tenancy",),
            ("self-report", "topic-localized"),
            (model,),
            voice="hybrid",
            voice_model=model,
            episodes=1,
            budget=6,
        )
        store, report = _validate(tmp_path, plan)
    (eid,) = store.episode_ids(report.run_id)
    turns = store.load_episode(eid).episode.turns
    assert {t.text for t in turns if t.role == "party"} == {"Fair enough, let's go on."}
    assert report.fits[0].reads_oracle and report.fits[1].points == report.fits[0].points
