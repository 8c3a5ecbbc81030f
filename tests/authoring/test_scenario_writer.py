"""The LLM scenario writer behind `parties:+1` and `history:x5`, over real HTTP to a
scripted local server."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from disputelab.authoring.scenario_writer import (
    apply_condition_with_model,
    normalise_weights,
    party_schema,
    write_extra_party,
    write_history,
)
from disputelab.llm.base import ChatModel, ModelReplyError
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import FakeOpenAI, Scripted, fake_openai, fill
from disputelab.scenario.conditions import SOCRATES_CONDITIONS, ConditionError, apply_condition
from disputelab.scenario.schema import Scenario
from tests.helpers import play, scenario

NEIGHBOUR: dict[str, Any] = {
    "name": "Priya Natt",
    "role": "downstairs neighbour",
    "relation": "Her ceiling shares the damp wall; she rents from the same landlord.",
    "objective": "Get the wall fixed properly before the damp reaches her flat.",
    "fallback": {"description": "Complain to the council's housing team.", "utility": 0.3},
    "strategy": "collaborating",
    "reactivity": 0.2,
    "traits": ["practical", "worried about her children"],
    "topics": {
        "repairs": {"ranking": ["A", "B"], "unacceptable": ["C", "D"], "weight": 55},
        "arrears": {"ranking": ["B", "C", "A"], "unacceptable": ["D"], "weight": 10},
        "rent": {"ranking": ["B", "A", "C"], "unacceptable": ["D"], "weight": 20},
        "lease": {"ranking": ["B", "C"], "unacceptable": ["A"], "weight": 15},
    },
}
ENTRIES = [
    {"date": "Autumn 2021", "text": "Mira moved in and the flat was freshly painted. " * 30},
    {"date": "Winter 2022", "text": "Harold waived a late fee after a bank error. " * 30},
    {"date": "Summer 2023", "text": "Mira repainted the hallway and kept the receipts. " * 30},
    {"date": "November last year", "text": "Water first came through the wall. " * 30},
]


def reply(data: object) -> Scripted:
    return Scripted(content=json.dumps(data))


def schema_name(body: dict[str, Any]) -> str:
    return str(((body.get("response_format") or {}).get("json_schema") or {}).get("name"))


def by_schema(body: dict[str, Any]) -> Scripted:
    """Answer whichever writer is asking, validly."""
    return reply({"entries": ENTRIES} if schema_name(body) == "history" else NEIGHBOUR)


def writer(server: FakeOpenAI, cache: Path | None = None) -> ChatModel:
    return ModelHub(cache).model(f"openai:writer@{server.url}", "writer")


def last_user(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def test_a_written_party_joins_the_scenario_and_rule_agents_can_play_it() -> None:
    base = scenario("tenancy")
    with fake_openai() as server:
        server.script(reply(NEIGHBOUR))
        out = asyncio.run(write_extra_party(base, writer(server)))
        body = server.requests[0]
    assert [p.id for p in out.parties] == ["tenant", "landlord", "priya-natt"]
    new = out.party("priya-natt")
    assert (new.name, new.persona.strategy, new.fallback.utility) == (
        "Priya Natt",
        "collaborating",
        0.3,
    )
    assert new.weights == {"repairs": 55, "arrears": 10, "rent": 20, "lease": 15}
    assert new.preferences["repairs"].unacceptable == ["C", "D"]
    assert Scenario.model_validate(out.model_dump()) == out
    assert base == scenario("tenancy"), "the original is left untouched"
    # Deterministic and cacheable: temperature 0, a fixed seed, option ids as enums.
    assert (body["temperature"], body["seed"]) == (0.0, 0)
    topic = body["response_format"]["json_schema"]["schema"]["properties"]["topics"]
    assert topic["properties"]["lease"]["properties"]["ranking"]["items"]["enum"] == ["A", "B", "C"]
    prompt = last_user(body)
    assert "Two-year fixed lease" in prompt and "lease (" in prompt
    for p in base.parties:
        assert p.private_notes not in prompt
    # Each existing party's first choices are named by topic id, not by a model's repr.
    tenant = base.party("tenant")
    firsts = ", ".join(f"{t.id}={tenant.preferences[t.id].ranking[0]}" for t in base.topics)
    assert f"[{firsts}]" in prompt and "options=[" not in prompt
    ep = play(out, budget=30)
    assert {"tenant", "landlord", "priya-natt"} <= {t.speaker for t in ep.turns}


def test_weights_are_normalised_and_missing_options_become_acceptable_last() -> None:
    odd = copy.deepcopy(NEIGHBOUR)
    for t, w in zip(odd["topics"], (3, 1, 1, 0), strict=True):
        odd["topics"][t]["weight"] = w
    odd["topics"]["rent"] = {"ranking": ["B"], "unacceptable": ["D"], "weight": 1}
    with fake_openai() as server:
        server.script(reply(odd))
        new = asyncio.run(write_extra_party(scenario("tenancy"), writer(server))).parties[-1]
    assert new.weights == {"repairs": 59, "arrears": 20, "rent": 20, "lease": 1}
    assert new.preferences["rent"].ranking == ["B", "A", "C"]


def test_a_reply_filled_from_the_schema_alone_still_makes_a_valid_party() -> None:
    s = scenario("workplace")
    # `fill` puts every weight at 100 and the first option in both lists.
    with fake_openai() as server:
        server.script(reply(fill(party_schema(s))))
        out = asyncio.run(write_extra_party(s, writer(server)))
    new = out.parties[-1]
    assert sum(new.weights.values()) == 100 and len(set(new.weights.values())) <= 2
    assert all(new.preferences[t.id].ranking[0] == t.options[0].id for t in s.topics)


@pytest.mark.parametrize(
    ("total", "raw", "expected"),
    [
        (100, {"a": 1, "b": 1, "c": 1}, {"a": 34, "b": 33, "c": 33}),
        (100, {"a": 1000, "b": 0.01}, {"a": 99, "b": 1}),
        (10, {"a": 5, "b": 5}, {"a": 5, "b": 5}),
    ],
)
def test_normalised_weights_are_positive_and_sum_to_the_total(
    total: int, raw: dict[str, float], expected: dict[str, int]
) -> None:
    assert normalise_weights(raw, total) == expected


def test_an_unknown_option_is_re_asked_with_the_error() -> None:
    bad = copy.deepcopy(NEIGHBOUR)
    bad["topics"]["rent"]["ranking"] = ["B", "Z"]
    with fake_openai() as server:
        server.script(reply(bad), reply(NEIGHBOUR))
        out = asyncio.run(write_extra_party(scenario("tenancy"), writer(server)))
        follow_up = last_user(server.requests[1])
    assert server.calls == 2 and len(out.parties) == 3
    assert "topics.rent.ranking names unknown option 'Z'; options are A, B, C, D" in follow_up


def test_a_copy_of_an_existing_party_is_re_asked() -> None:
    s = scenario("tenancy")
    twin = copy.deepcopy(NEIGHBOUR)
    tenant = s.party("tenant")
    for t in s.topics:
        pref = tenant.preferences[t.id]
        twin["topics"][t.id].update(ranking=pref.ranking, unacceptable=pref.unacceptable)
    with fake_openai() as server:
        server.script(reply(twin), reply(NEIGHBOUR))
        asyncio.run(write_extra_party(s, writer(server)))
        assert f"copy {tenant.name}'s on every topic" in last_user(server.requests[1])


def test_a_model_that_never_fits_raises_a_one_line_error() -> None:
    with fake_openai(lambda body: Scripted(content="Sure!\nHere is a party:\nnone")) as server:
        with pytest.raises(ModelReplyError) as err:
            asyncio.run(write_extra_party(scenario("tenancy"), writer(server)))
        assert server.calls == 3
    message = str(err.value)
    assert "\n" not in message and message.startswith("parties:+1: ")


def test_write_history_prepends_the_models_dated_entries() -> None:
    base = scenario("tenancy")
    with fake_openai() as server:
        server.script(reply({"entries": ENTRIES}))
        out = asyncio.run(write_history(base, writer(server)))
        body = server.requests[0]
    assert len(out.history) >= 3 * len(base.history)
    assert out.history.startswith("Autumn 2021: Mira moved in")
    assert out.history.endswith(base.history), "the original history stays as the last state"
    assert "November last year: Water first came through the wall." in out.history
    assert (out.background, out.parties) == (base.background, base.parties)
    assert body["response_format"]["json_schema"]["name"] == "history"
    assert "in English" in last_user(body) and base.background in last_user(body)


def test_a_history_too_short_is_re_asked_once_then_refused() -> None:
    short = {"entries": [{"date": "2020", "text": "Things happened."}] * 4}
    with fake_openai() as server:
        server.script(reply(short), reply({"entries": ENTRIES}))
        asyncio.run(write_history(scenario("tenancy"), writer(server)))
        assert "write longer, more detailed entries" in last_user(server.requests[1])
    with fake_openai(lambda body: reply(short)) as server:
        with pytest.raises(ModelReplyError, match=r"^history:x5: .*it needs at least \d+"):
            asyncio.run(write_history(scenario("tenancy"), writer(server)))
        assert server.calls == 2


def test_a_chinese_scenario_is_asked_in_chinese_and_answered_in_chinese() -> None:
    zh = scenario("tenancy").model_copy(update={"language": "zh"})
    chinese = {
        "entries": [
            {"date": f"202{i}年", "text": "双方为房屋漏水争执不下。" * 80} for i in range(4)
        ]
    }
    with fake_openai() as server:
        server.script(reply({"entries": ENTRIES}), reply(chinese), reply(NEIGHBOUR))
        out = asyncio.run(write_history(zh, writer(server)))
        party_out = asyncio.run(write_extra_party(zh, writer(server)))
        asks = [last_user(server.requests[i]) for i in (0, 2)]
        follow_up = last_user(server.requests[1])
    assert "用中文" in asks[0] and "文字内容请用中文" in asks[1]
    assert "write them in Chinese" in follow_up
    assert out.history.startswith("2020年: 双方") and len(party_out.parties) == 3


@pytest.mark.parametrize("spec", [*SOCRATES_CONDITIONS, "history:x5,parties:+1,posture:avoiding"])
def test_without_a_model_it_is_exactly_apply_condition(spec: str) -> None:
    s = scenario("community-centre")
    assert asyncio.run(apply_condition_with_model(s, spec, None)) == apply_condition(s, spec)


def test_a_composed_spec_calls_the_model_once_per_written_condition() -> None:
    base = scenario("tenancy")
    with fake_openai(by_schema) as server:
        out = asyncio.run(
            apply_condition_with_model(base, "history:x5,parties:+1,culture:US-CN", writer(server))
        )
        names = [schema_name(b) for b in server.requests]
        party_prompt = last_user(server.requests[1])
    assert names == ["history", "extra_party"]
    assert "Autumn 2021" in party_prompt, "left to right: the party sees the longer history"
    assert out.parties[-1].name == "Priya Natt" and out.history.startswith("Autumn 2021")
    assert [p.persona.culture and p.persona.culture.name for p in out.parties] == [
        "United States",
        "China",
        "United States",
    ]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("parties:+2", "parties:+2: use parties:+1"),
        ("parties:+1,history:x9", "history:x9: use history:x5"),
        ("parties:+1,vibes:high", "unknown condition 'vibes'"),
    ],
)
def test_a_bad_condition_fails_before_any_request(spec: str, message: str) -> None:
    with fake_openai(by_schema) as server:
        with pytest.raises(ConditionError, match=re.escape(message)):
            asyncio.run(apply_condition_with_model(scenario("tenancy"), spec, writer(server)))
        assert server.calls == 0


def test_a_rerun_is_served_from_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    base = scenario("tenancy")
    with fake_openai(by_schema) as server:
        first = asyncio.run(apply_condition_with_model(base, "parties:+1", writer(server, cache)))
        assert server.calls == 1
        # A fresh hub on the same cache file, as a re-run in a new process would have.
        again = asyncio.run(apply_condition_with_model(base, "parties:+1", writer(server, cache)))
        assert server.calls == 1
    assert again == first
