"""Consensus trackers, judge failures, re-scoring a stored run, and judge validation."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.evaluation.evaluators import tracker_scores
from disputelab.evaluation.trackers import (
    labels_agree,
    oracle,
    per_turn,
    self_report,
    topic_localized,
)
from disputelab.experiments.validation import ValidationPlan, validate_judge
from disputelab.llm.concurrency import sequential
from disputelab.llm.models import ModelHub
from disputelab.llm.openai_backend import OpenAICompatible
from disputelab.llm.testing import Scripted, fake_openai, fill
from disputelab.store.sqlite import Store
from tests.helpers import play, scenario


def test_self_report_reproduces_the_oracle_on_rule_parties(tmp_path: Path) -> None:
    store = Store(tmp_path)
    hub = ModelHub(tmp_path / "cache.sqlite")
    names = ("tenancy", "workplace", "community-centre")
    plan = ValidationPlan(names, ("self-report",), voice="template", episodes=6, budget=40)
    report = asyncio.run(validate_judge(store, hub, [scenario(s) for s in names], plan))
    (a,) = [f for f in report.fits if f.tracker == "self-report"]  # the rest: baselines
    assert math.isclose(a.pearson.value, 1.0, abs_tol=1e-12)
    assert a.mae.value == 0.0 and a.calls_per_episode == 0


def test_self_report_is_undefined_until_every_party_has_spoken() -> None:
    s = scenario("community-centre")
    traj = self_report(play(s, "none", seed=0, budget=8), s)
    overall = traj.overall()
    assert all(math.isnan(x) for x in overall[:4]) and not math.isnan(overall[4])


def _judge(url: str) -> OpenAICompatible:
    return OpenAICompatible("judge", url, api_key_env=None)


def _event(turn: int, score: int, **stances: str) -> dict[str, Any]:
    return {"turn": turn, "reasoning": "r", "score": score, "stances": stances}


def test_topic_localized_scores_located_turns_and_carries_them_forward() -> None:
    s = scenario("tenancy")
    ep = play(s, "none", seed=0, budget=6)
    events = {
        "events": [
            _event(2, 3, tenant="A", landlord="C"),
            _event(5, 5, tenant="B", landlord="B"),
        ]
    }
    with fake_openai(lambda body: Scripted(content=json.dumps(events))) as server:
        traj = asyncio.run(topic_localized(ep, s, _judge(server.url)))
        assert server.calls == len(s.topics)  # one judge pass per topic
        schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    # before turn 2: 1 -> 0.0; turns 2-4: 3 -> 0.5; turns 5-6: 5 -> 1.0
    assert traj.by_topic["rent"] == [0.0, 0.0, 0.5, 0.5, 0.5, 1.0, 1.0]
    assert traj.calls == 4 and traj.failure is None
    stances = schema["properties"]["events"]["items"]["properties"]["stances"]
    assert stances["required"] == ["tenant", "landlord"]
    assert stances["properties"]["tenant"]["enum"] == ["A", "B", "C", "D", "none"]


def test_topic_localized_carries_each_partys_option_label_and_derives_agreement() -> None:
    s = scenario("tenancy")
    ep = play(s, "none", seed=0, budget=6)
    events = {
        "events": [
            _event(1, 1, tenant="A", landlord="none"),
            _event(3, 2, tenant="A", landlord="C"),
            _event(5, 4, tenant="B", landlord="B"),
        ]
    }
    with fake_openai(lambda body: Scripted(content=json.dumps(events))) as server:
        traj = asyncio.run(topic_localized(ep, s, _judge(server.url)))
    nobody: dict[str, str | None] = {"tenant": None, "landlord": None}
    assert traj.stances["repairs"] == [
        nobody,
        {"tenant": "A", "landlord": None},  # 'none' is no stance, not an option
        {"tenant": "A", "landlord": None},
        {"tenant": "A", "landlord": "C"},
        {"tenant": "A", "landlord": "C"},
        {"tenant": "B", "landlord": "B"},
        {"tenant": "B", "landlord": "B"},
    ]
    # agreed only once both parties name the same option; the score is kept alongside
    assert traj.label_agreement["repairs"] == [0.0] * 5 + [1.0, 1.0]
    assert traj.by_topic["repairs"][-1] == 0.75
    agreed = tracker_scores(traj, ep, None)["topics_agreed_by_label"]
    assert agreed.value == 1.0  # the stub judged every topic alike
    assert agreed.detail["final_stances"]["rent"] == {"tenant": "B", "landlord": "B"}


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        (_event(2, 3, tenant="Z", landlord="A"), "party 'tenant' has stance 'Z', not one of"),
        (_event(2, 3, tenant="A"), "no stance for party 'landlord'"),
        (_event(2, 3, tenant="A", landlord="A", lodger="B"), "unknown party 'lodger'"),
    ],
    ids=["invalid-option-label", "missing-party", "unknown-party"],
)
def test_a_judge_stance_outside_the_topic_labels_gives_nan_with_the_reason(
    bad: dict[str, Any], why: str
) -> None:
    s = scenario("tenancy")
    ep = play(s, "none", seed=0, budget=4)
    reply = json.dumps({"events": [_event(1, 2, tenant="A", landlord="B"), bad]})
    with fake_openai(lambda body: Scripted(content=reply)) as server, sequential():
        traj = asyncio.run(topic_localized(ep, s, _judge(server.url)))
        asked = server.calls
    # One topic after another, the failing first topic ends the pass: its call, asked
    # again twice with the problem named. (Together, the other topics' calls are spent.)
    assert asked == 3
    assert traj.failure is not None and "judge failed on repairs" in traj.failure
    assert why in traj.failure
    assert all(math.isnan(x) for x in traj.overall())
    assert all(math.isnan(x) for xs in traj.label_agreement.values() for x in xs)
    agreed = tracker_scores(traj, ep, None)["topics_agreed_by_label"]
    assert math.isnan(agreed.value) and why in agreed.explanation


def test_a_judge_asked_again_after_a_bad_label_is_used_when_it_corrects_itself() -> None:
    s = scenario("tenancy")
    ep = play(s, "none", seed=0, budget=4)
    bad = Scripted(content=json.dumps({"events": [_event(2, 3, tenant="Q", landlord="A")]}))
    good = Scripted(content=json.dumps({"events": [_event(2, 5, tenant="A", landlord="A")]}))
    # The scripted bad reply goes to the first call to arrive: one topic after another,
    # that is the first topic's, and its retry is the second call.
    with fake_openai(lambda body: good) as server, sequential():
        server.script(bad)
        traj = asyncio.run(topic_localized(ep, s, _judge(server.url)))
        retry = server.requests[1]["messages"][-1]["content"]
    assert "'Q', not one of A, B, C, D, none" in retry
    assert traj.failure is None and traj.label_agreement["repairs"] == [0.0, 0.0, 1.0, 1.0, 1.0]


@given(st.lists(st.sampled_from(["A", "B", None]), max_size=5))
def test_labels_agree_exactly_when_every_party_names_one_and_the_same_option(
    labels: list[str | None],
) -> None:
    expected = len(labels) > 0 and None not in labels and len(set(labels)) == 1
    assert labels_agree(labels) is expected


def test_a_failed_judge_gives_nan_with_the_reason_never_zero() -> None:
    s = scenario("tenancy")
    ep = play(s, "none", seed=0, budget=4)
    with fake_openai(lambda body: Scripted(content="no idea")) as server:
        traj = asyncio.run(topic_localized(ep, s, _judge(server.url)))
    assert traj.failure and "judge failed" in traj.failure
    assert all(math.isnan(x) for x in traj.overall())


def test_per_turn_extracts_attitudes_and_scores_pairs_on_mentioned_topics() -> None:
    s = scenario("workplace")
    ep = play(s, "none", seed=0, budget=3)

    def answer(body: dict[str, Any]) -> Scripted:
        name = body["response_format"]["json_schema"]["name"]
        schema = body["response_format"]["json_schema"]["schema"]
        if name == "attitudes":
            reply = {"attitudes": {t.id: "no mention" for t in s.topics}}
            reply["attitudes"][s.topics[0].id] = "wants option A"
            return Scripted(content=json.dumps(reply))
        return Scripted(content=json.dumps(fill(schema)))  # every dimension at its max, 1

    with fake_openai(answer) as server:
        traj = asyncio.run(per_turn(ep, s, _judge(server.url), from_preferences=False))
        calls = server.calls
    first = s.topics[0].id
    # 3 utterances, each 1 attitude call + 2 pair calls on the one mentioned topic
    assert calls == 3 * (1 + 2)
    assert traj.by_topic[first][0] == 0.0  # nothing said yet
    # after turn 1, pairs (1,2) and (1,3) are scored 1.0, pair (2,3) still 0: 2/3
    assert traj.by_topic[first][1] == 2 / 3 and traj.by_topic[first][3] == 1.0
    assert traj.by_topic[s.topics[1].id] == [0.0] * 4


def test_oracle_tracker_matches_the_recorded_trajectory() -> None:
    s = scenario("workplace")
    ep = play(s, "rule", seed=1, budget=20)
    traj = oracle(ep, s)
    assert len(traj.overall()) == ep.party_turns + 1


def test_evaluate_rescores_a_stored_run_and_keeps_the_old_scores(tmp_path: Path) -> None:
    runner = CliRunner()
    store_args = ["--store", str(tmp_path)]
    assert (
        runner.invoke(app, [*store_args, "run", "workplace", "--mediator", "rule"]).exit_code == 0
    )
    result = runner.invoke(app, [*store_args, "evaluate", "last", "--evaluator", "self-report"])
    assert result.exit_code == 0, result.output
    assert "final_consensus" in result.output
    store = Store(tmp_path)
    (eid, *_) = [e for e in store.episode_ids(store.resolve_run("last")) if e.endswith("-rule")]
    evaluators = {s.evaluator for s in store.scores(eid)}
    assert {"socrates-oracle", "tracker:self-report"} <= evaluators
    by = {(s.evaluator, s.metric): s.value for s in store.scores(eid)}
    assert (
        by[("tracker:self-report", "final_consensus")] == by[("socrates-oracle", "final_consensus")]
    )


def test_evaluate_and_validate_judge_refuse_bad_input_in_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    r = runner.invoke(app, ["--store", str(tmp_path), "evaluate", "last"])
    assert r.exit_code == 2 and "no store at" in r.output
    r = runner.invoke(app, ["validate-judge", "--tracker", "topic-localized"])
    assert r.exit_code == 2 and "need a judge" in r.output
    r = runner.invoke(app, ["validate-judge", "--tracker", "vibes"])
    assert r.exit_code == 2 and "unknown tracker 'vibes'" in r.output


def test_validate_judge_prints_r_mae_and_cost(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        app, ["--store", str(tmp_path), "validate-judge", "--episodes", "3", "--budget", "20"]
    )
    assert r.exit_code == 0, r.output
    assert "self-report" in r.output and "1.000" in r.output and "not a judge" in r.output
    # Nothing is cut to fit the terminal: every column name is there in full.
    assert "…" not in r.output and "outcome r" in r.output and "calls/ep" in r.output


def test_per_turn_starts_from_the_preference_profiles_as_promediate_does() -> None:
    s = scenario("tenancy")
    ep = play(s, "none", seed=0, budget=2)
    prompts: list[str] = []

    def answer(body: dict[str, Any]) -> Scripted:
        prompts.append(body["messages"][-1]["content"])
        schema = body["response_format"]["json_schema"]["schema"]
        if body["response_format"]["json_schema"]["name"] == "attitudes":
            return Scripted(
                content=json.dumps({"attitudes": {t.id: "no mention" for t in s.topics}})
            )
        return Scripted(content=json.dumps(fill(schema)))

    with fake_openai(answer) as server:
        traj = asyncio.run(per_turn(ep, s, _judge(server.url)))
        calls = server.calls
    # t = 0: 4 topics x 1 pair scored from the profiles; then 2 attitude calls, no mentions
    assert calls == 4 + 2
    assert "prefers" in prompts[0] and "rejects" in prompts[0]
    assert [traj.by_topic["rent"][i] for i in range(3)] == [1.0, 1.0, 1.0]


def test_the_topic_judge_may_locate_at_most_one_event_per_party_turn() -> None:
    from disputelab.evaluation.trackers import topic_reply_schema

    events = topic_reply_schema(["a", "b"], ["A", "B"], turns=8)["properties"]["events"]
    assert events["maxItems"] == 8  # a grammar-held model cannot loop past the dialogue
    assert "maxItems" not in topic_reply_schema(["a", "b"], ["A", "B"])["properties"]["events"]
