"""ProMediate's TLE and ME with a judge: topic mentions and targeted topics come from the
LLM judge (a scripted server on 127.0.0.1 here); a failed judge is NaN with the reason."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

from disputelab.evaluation.promediate import Judged, promediate_scores
from disputelab.evaluation.trackers import oracle
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import Scripted, fake_openai, requested_name
from disputelab.protocols.roundtable.evaluation.promediate_judges import judge_events
from tests.helpers import play, scenario


def _judge(target: str) -> Any:
    """Every line mentions `target` and nothing else; every intervention targets it."""

    def answer(body: dict[str, Any]) -> Scripted:
        schema = body["response_format"]["json_schema"]["schema"]
        if requested_name(body) == "topic_mentions":
            reply: dict[str, Any] = {t: t == target for t in schema["properties"]}
        else:
            reply = {"topics": [target]}
        return Scripted(content=json.dumps(reply))

    return answer


def test_mentions_and_targets_come_from_the_judge(tmp_path: Path) -> None:
    sc = scenario("tenancy")
    ep = play(sc, "rule", budget=40)
    target = sc.topics[1].id
    with fake_openai(_judge(target)) as server:
        hub = ModelHub(tmp_path / "cache.sqlite")
        judge = hub.model(f"openai:j@{server.url}", "judge")
        judged = asyncio.run(judge_events([judge], ep, sc))
        names = [requested_name(r) for r in server.requests]
    spoken = [t for t in ep.turns if t.role in ("party", "mediator") and t.text.strip()]
    mediator = [t for t in ep.turns if t.role == "mediator"]
    assert mediator, "the rule mediator should have intervened"
    # One call per line for all topics; a line said word for word before is a cache hit.
    assert names.count("topic_mentions") == len({(t.speaker, t.text) for t in spoken})
    assert names.count("targeted_topics") == len({t.text for t in mediator})
    assert isinstance(judged.mentions, dict) and list(judged.mentions) == [target]
    assert len(judged.mentions[target]) == len(spoken)
    assert isinstance(judged.targets, list)
    assert all(topics == [target] for _, topics in judged.targets)

    scores = promediate_scores(oracle(ep, sc), ep, judged=judged)
    tle = scores["topic_level_efficiency"]
    assert "from the LLM judge" in tle.explanation
    assert set(tle.detail.get("per_topic", {})) <= {target}
    plain = promediate_scores(oracle(ep, sc), ep)
    assert scores["consensus_change"].value == plain["consensus_change"].value


def test_a_failed_judge_makes_tle_and_me_nan_with_the_reason(tmp_path: Path) -> None:
    sc = scenario("tenancy")
    ep = play(sc, "rule", budget=40)
    with fake_openai(lambda body: Scripted(content="no json here")) as server:
        judge = ModelHub(tmp_path / "cache.sqlite").model(f"openai:j@{server.url}", "judge")
        judged = asyncio.run(judge_events([judge], ep, sc))
    assert isinstance(judged.mentions, str) and "topic-mention judge failed" in judged.mentions
    scores = promediate_scores(oracle(ep, sc), ep, judged=judged)
    for metric in ("topic_level_efficiency", "mediator_effectiveness"):
        r = scores[metric]
        assert math.isnan(r.value) and "judge failed" in r.explanation
    assert not math.isnan(scores["consensus_change"].value)


def test_judged_events_only_on_the_dialogue_line_clock() -> None:
    sc = scenario("tenancy")
    ep = play(sc, "rule", budget=20)
    try:
        promediate_scores(oracle(ep, sc), ep, "party-turn", Judged({}, []))
    except ValueError as exc:
        assert "dialogue-line" in str(exc)
    else:
        raise AssertionError("expected a ValueError")
