"""Agent settings reach the requests: the context window, each role's temperature, the
party style, party memory, mediator consultation, the social when-call, two-call verdicts
and the culture statement. Every test runs real episodes over HTTP to the scripted
server and reads the request bodies it recorded."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from disputelab.agents.base import PublicScenario, PublicTurn
from disputelab.agents.prompts import dialogue_block, party_system
from disputelab.agents.settings import RECENT_TURNS
from disputelab.experiments.episodes import RunResult, run_single
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import (
    FakeOpenAI,
    Scripted,
    fake_openai,
    fill,
    requested_name,
    requested_schema,
)
from disputelab.plan.cast import Cast
from disputelab.scenario.cultures import hofstede
from disputelab.store.sqlite import Store
from tests.helpers import scenario


def answer(body: dict[str, Any]) -> Scripted:
    """Any role: a valid reply; each party thought names the turn it was asked at."""
    schema = requested_schema(body)
    reply = fill(schema, text="Let us keep talking.")
    if requested_name(body) == "party_action":
        user = body["messages"][-1]["content"]
        turn = next(w for w in user.split("party turn ")[1:]).split(" ")[0]
        reply["thought"], reply["signal"] = f"thought at turn {turn}", "continue"
    if requested_name(body) == "when":
        reply["should_speak"], reply["rating"] = True, 2.0
    return Scripted(content=json.dumps(reply))


def run(
    tmp_path: Path,
    server: FakeOpenAI,
    params: dict[str, Any],
    mediator: str = "none",
    protocol: str = "roundtable",
) -> RunResult:
    model = f"openai:m@{server.url}"
    cast = Cast({"parties": "llm", "mediator": mediator}, {"parties": model, "mediator": model})
    store = Store(tmp_path)
    hub = ModelHub(store.root / "cache.sqlite")
    return asyncio.run(run_single(store, scenario(), cast, 5, protocol, params, hub=hub))


def requests_named(server: FakeOpenAI, name: str) -> list[dict[str, Any]]:
    return [r for r in server.requests if requested_name(r) == name]


def dialogue_lines(body: dict[str, Any]) -> list[str]:
    """The dialogue lines of a request's user message (speaker: words)."""
    user = body["messages"][-1]["content"]
    block = user.split("(most recent last):\n", 1)[1].split("\n\n", 1)[0]
    return [line for line in block.splitlines() if ": " in line]


def test_by_default_an_agent_reads_the_last_twelve_turns(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        run(tmp_path, server, {"budget": 16})
    last = requests_named(server, "party_action")[-1]
    assert len(dialogue_lines(last)) == RECENT_TURNS


def test_context_zero_shows_each_agent_the_whole_dialogue(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        run(tmp_path, server, {"budget": 16, "context": 0})
    last = requests_named(server, "party_action")[-1]
    assert len(dialogue_lines(last)) == 15  # every turn before the sixteenth


def test_a_window_of_four_turns(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        run(tmp_path, server, {"budget": 10, "context": 4})
    assert len(dialogue_lines(requests_named(server, "party_action")[-1])) == 4


def test_a_closing_proposal_keeps_the_opening_in_view_past_the_window() -> None:
    public = PublicScenario.of(scenario())
    talk = [PublicTurn(i, i, "ana", "party", f"line {i}") for i in range(20)]
    talk[3] = talk[3]._replace(role="mediator", proposal={"repairs": "a"}, text="first proposal")
    text = dialogue_block(public, talk, window=5, keep_first=4)
    assert "first proposal" in text and "line 0" in text and "line 19" in text
    assert "line 10" not in text and "11 turns left out" in text


def test_each_role_gets_its_own_temperature(tmp_path: Path) -> None:
    params = {"budget": 4, "parties_temperature": 0.0, "mediator_temperature": 0.3}
    with fake_openai(answer) as server:
        run(tmp_path, server, params, mediator="generic")
    parties = requests_named(server, "party_action")
    mediator = requests_named(server, "when") + requests_named(server, "how")
    assert parties and mediator
    assert {r["temperature"] for r in parties} == {0.0}
    assert {r["temperature"] for r in mediator} == {0.3}


def test_default_temperatures_are_unchanged(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        run(tmp_path, server, {"budget": 4}, mediator="generic")
    assert {r["temperature"] for r in requests_named(server, "party_action")} == {0.7}
    assert {r["temperature"] for r in requests_named(server, "when")} == {0.6}


def test_a_general_party_has_no_style_persona_or_culture() -> None:
    s = scenario()
    party = s.parties[0].model_copy(deep=True)
    party.persona.culture = hofstede()["KR"]
    party.persona.traits = ["blunt"]
    public = PublicScenario.of(s)
    persona = party_system(public, party)
    general = party_system(public, party, style="general")
    assert "Your style" in persona and "Hofstede" in persona and "blunt" in persona
    for absent in ("Your style", "reactivity", "Hofstede", "blunt"):
        assert absent not in general
    assert party.objective in general  # the brief itself stays


def test_the_described_culture_statement_names_the_culture_and_each_dimension() -> None:
    s = scenario()
    party = s.parties[0].model_copy(deep=True)
    party.persona.culture = hofstede()["KR"]
    text = party_system(PublicScenario.of(s), party, culture="described")
    assert "South Korea" in text or "Korea" in text
    for dimension in ("power distance", "individualism", "uncertainty avoidance", "indulgence"):
        assert dimension in text
    assert "uncertainty avoidance 85" in text


def test_party_memory_feeds_back_the_partys_own_thoughts_only(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        run(tmp_path, server, {"budget": 6, "party_memory": True})
    asks = requests_named(server, "party_action")
    n = len(scenario().parties)
    first, again = asks[0]["messages"][-1]["content"], asks[n]["messages"][-1]["content"]
    assert "earlier private thoughts" not in first
    # The first party speaks again at turn n + 1: it recalls its own first thought, and
    # none of the thoughts the other parties had in between.
    assert "thought at turn 1" in again
    assert all(f"thought at turn {k}" not in again for k in range(2, n + 1))


def test_without_party_memory_no_thought_is_fed_back(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        run(tmp_path, server, {"budget": 6})
    assert all(
        "thought at turn" not in r["messages"][-1]["content"]
        for r in requests_named(server, "party_action")
    )


def test_a_mediator_consulted_every_turn_deliberates_after_each_party_turn(
    tmp_path: Path,
) -> None:
    with fake_openai(answer) as server:
        run(tmp_path / "a", server, {"budget": 7}, mediator="generic")
        after_round = len(requests_named(server, "when"))
        server.requests.clear()
        run(tmp_path / "b", server, {"budget": 7, "mediator_every_turn": True}, "generic")
        every_turn = len(requests_named(server, "when"))
    assert every_turn == 6  # after every party turn but the last
    assert after_round < every_turn


def test_the_social_when_call_comes_first_and_can_keep_the_mediator_silent(
    tmp_path: Path,
) -> None:
    params = {"budget": 7, "social_when_call": True, "mediator_every_turn": True}
    with fake_openai(answer) as server:
        result = run(tmp_path, server, params, mediator="social")
    assert len(requests_named(server, "when")) == 6
    assert not requests_named(server, "candidates"), "a rating of 2 never passes 3.5"
    assert not result.episode.intervention_positions()


def test_the_mediator_can_be_shown_the_stated_consensus_state(tmp_path: Path) -> None:
    params = {"budget": 4, "mediator_consensus_state": True}
    with fake_openai(answer) as server:
        run(tmp_path, server, params, mediator="generic")
    asks = requests_named(server, "when")
    assert asks and "Where the parties stand" in asks[-1]["messages"][-1]["content"]


def test_two_call_verdicts_ask_acceptance_then_satisfaction(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        result = run(tmp_path, server, {"rounds": 1, "verdict_calls": "two"}, "llm", "staged")
    accept, satisfy = requests_named(server, "acceptance"), requests_named(server, "satisfaction")
    n = len(scenario().parties)
    assert len(accept) == n and len(satisfy) == n and not requests_named(server, "verdict")
    assert "very high" in satisfy[0]["messages"][-1]["content"]  # the anchors are there
    verdicts = [t.action.verdict for t in result.episode.turns if t.action and t.action.verdict]
    assert len(verdicts) == n


def test_one_call_verdicts_stay_the_default(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        run(tmp_path, server, {"rounds": 1}, "llm", "staged")
    assert requests_named(server, "verdict") and not requests_named(server, "acceptance")


def test_a_profile_temperature_fills_only_a_temperature_the_run_left_unset() -> None:
    from disputelab.protocols.agent_params import agent_settings
    from disputelab.protocols.base import get_protocol

    proto = get_protocol("roundtable")
    profile = {"parties_temperature": 0.2, "mediator_temperature": 0.9}
    unset = agent_settings(proto.params({}), profile)
    assert unset.parties_temperature == 0.2 and unset.mediator_temperature == 0.9
    given = agent_settings(proto.params({"parties_temperature": 0.5}), profile)
    assert given.parties_temperature == 0.5 and given.mediator_temperature == 0.9
    assert agent_settings(proto.params({})).parties_temperature == 0.7
