"""The session every protocol plays through: the agent check, per-listener delivery,
usage charged to any role, and forks that roll forward without touching the original."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from disputelab.agents.base import TurnContext
from disputelab.agents.registry import build_parties
from disputelab.episode import Action, Episode, Intervention, Stance, Turn, Usage
from disputelab.llm.models import ModelHub
from disputelab.protocols.session import Session, update_consensus
from disputelab.scenario.schema import Scenario
from tests.helpers import scenario


def _session(s: Scenario, seed: int = 0, sink: list[Turn] | None = None) -> Session:
    ep = Episode(s.id, "test", seed, {})
    return Session(s, build_parties(s, "rule", seed), ep, sink.append if sink is not None else None)


def _advance(session: Session, party_turns: int, budget: int = 60) -> None:
    """Let the parties speak in turn, as a cyclic protocol would."""
    for _ in range(party_turns):
        agent = session.parties[session.party_turn % session.n]
        ctx = TurnContext(session.party_turn, budget, session.n)
        action = asyncio.run(agent.act(session.view(agent.party_id), ctx))
        session.party_spoke(agent, action, 0.0)


def _said(session: Session) -> list[tuple[str, str]]:
    return [(t.speaker, t.text) for t in session.episode.turns]


def test_agents_must_match_the_scenarios_parties() -> None:
    s = scenario("tenancy")
    parties = build_parties(s, "rule", 0)[:1]
    with pytest.raises(ValueError, match="do not match the scenario's parties"):
        Session(s, parties, Episode(s.id, "test", 0, {}))


def test_every_listener_shares_one_view_until_a_delivery_differs() -> None:
    session = _session(scenario("tenancy"))
    _advance(session, 2)
    assert session.view("tenant") is session.view("landlord") is session.view("mediator")
    agent = session.parties[0]
    action = Action("You are being unreasonable!", {})
    turn = session.party_spoke(agent, action, 0.0, delivered={"landlord": "I see it differently."})
    assert turn.text == "You are being unreasonable!"
    assert turn.delivered == {"landlord": "I see it differently."}
    assert session.view("landlord")[-1].text == "I see it differently."
    assert session.view("mediator")[-1].text == "You are being unreasonable!"
    # Earlier turns reach every listener as they were said.
    assert [t.text for t in session.view("landlord")[:2]] == [t for _, t in _said(session)[:2]]
    _advance(session, 1)
    assert session.view("landlord")[-1] == session.view("tenant")[-1]


def test_usage_is_charged_to_whatever_role_spent_it() -> None:
    session = _session(scenario("tenancy"))

    class Counsel:
        def __init__(self) -> None:
            self.usage: Usage | None = Usage(calls=2, input_tokens=30, output_tokens=9)

        def take_usage(self) -> Usage | None:
            usage, self.usage = self.usage, None
            return usage

    counsel = Counsel()
    session.seat_spoke("counsel:tenant", counsel, Intervention("Hold at 1,250."), 0.0)
    session.seat_spoke("counsel:tenant", counsel, None, 0.0)  # silent: nothing new to charge
    total = session.episode.usage["counsel:tenant"]
    assert (total.calls, total.input_tokens, total.output_tokens) == (2, 30, 9)
    assert session.episode.turns[-1].usage is not None


def test_a_fork_rolls_forward_without_touching_the_original_or_the_store() -> None:
    s = scenario("workplace")
    stored: list[Turn] = []
    session = _session(s, seed=5, sink=stored)
    _advance(session, 7)
    fork, _ = session.fork()
    _advance(fork, 20)
    assert len(stored) == 7 and len(session.episode.turns) == 7
    assert fork.party_turn == 27 and session.party_turn == 7
    _advance(session, 20)
    # The original goes on exactly as if it had never been forked...
    straight = _session(s, seed=5)
    _advance(straight, 27)
    assert _said(session) == _said(straight)
    assert session.consensus == straight.consensus
    # ...and the fork, rolled from the same position with the same seeds, saw the same future.
    assert _said(fork) == _said(straight)
    assert len(stored) == 27


def test_a_fork_shares_models_and_the_scenario_and_copies_extra_agents() -> None:
    s = scenario("tenancy")
    session = _session(s)

    class Planner:
        def __init__(self) -> None:
            self.memory: list[str] = []

    planner = Planner()
    fork, copies = session.fork([planner])
    assert fork.scenario is session.scenario
    assert copies[id(planner)] is not planner
    copies[id(planner)].memory.append("rolled forward")
    assert planner.memory == []


def test_a_fork_of_llm_parties_shares_their_models(tmp_path: Path) -> None:
    s = scenario("tenancy")
    hub = ModelHub(tmp_path / "cache.sqlite")
    model = hub.model("openai:m@http://127.0.0.1:9/v1", "parties")
    session = Session(s, build_parties(s, "llm", 0, model), Episode(s.id, "test", 0, {}))
    fork, _ = session.fork()
    for original, copy in zip(session.parties, fork.parties, strict=True):
        assert copy is not original
        assert copy.model is original.model  # type: ignore[attr-defined]


def test_the_oracle_keeps_its_vector_while_nothing_moves_and_makes_a_new_one_when_it_does() -> None:
    topics = ["rent", "repairs"]
    a = {"rent": Stance("A", ("A",)), "repairs": Stance("X", ("X", "Y"))}
    b = {"rent": Stance("B", ("B",)), "repairs": Stance("Y", ("Y",))}
    hidden = {"p1": a, "p2": b}
    first = update_consensus(None, topics, hidden, "p1", a)
    assert update_consensus(first, topics, hidden, "p1", dict(a)) is first  # restated
    moved = update_consensus(first, topics, hidden, "p1", {**a, "repairs": Stance("Y", ("Y",))})
    assert moved is not first and first == {"rent": 0.0, "repairs": 0.5}  # left as it was
    assert moved["repairs"] == 1.0 and moved["rent"] == first["rent"]
