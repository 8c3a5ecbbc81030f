"""Private caucus turns: a party's words to the mediator reach only the two of them, are
recorded with the episode, and are held after every K-th mediator turn."""

from __future__ import annotations

import asyncio

from disputelab.agents.base import TurnContext
from disputelab.agents.registry import build_agent, build_parties
from disputelab.episode import Action, Episode, Stance, Turn
from disputelab.protocols.play import play
from disputelab.protocols.roundtable.agents import MEDIATOR
from disputelab.protocols.roundtable.caucus import due, hold_caucus
from disputelab.protocols.session import Session
from tests.helpers import scenario


def _session(sink: list[Turn]) -> Session:
    s = scenario("tenancy")
    return Session(s, build_parties(s, "rule", 0), Episode(s.id, "test", 0, {}), sink.append)


def test_a_confided_turn_reaches_its_audience_only_and_is_recorded() -> None:
    stored: list[Turn] = []
    session = _session(stored)
    tenant = session.parties[0]
    ctx = TurnContext(0, 10, 2)
    session.party_spoke(tenant, asyncio.run(tenant.act(session.view("tenant"), ctx)), 0.0)
    secret = Action("Between us: B would do.", {"rent": Stance("A", ("B",))})
    turn = session.confide("tenant", secret, ("tenant", "mediator"))
    assert turn.role == "system" and turn.speaker == "tenant" and turn.stage == "caucus"
    assert stored[-1] is turn and session.episode.turns[-1] is turn
    assert session.view("mediator")[-1].text == "Between us: B would do."
    assert session.view("mediator")[-1].stances["rent"].acceptable == ("B",)
    assert session.view("tenant")[-1].text == "Between us: B would do."
    assert all(t.turn_index != turn.index for t in session.view("landlord"))
    # No clock moves, no stated stance changes, and later turns reach everyone.
    assert session.party_turn == 1 and "rent" not in session.stated.get("landlord", {})
    assert session.stated["tenant"]["rent"] != Stance("A", ("B",))
    landlord = session.parties[1]
    ctx = TurnContext(1, 10, 2)
    session.party_spoke(landlord, asyncio.run(landlord.act(session.view("landlord"), ctx)), 0.0)
    last = session.episode.turns[-1].index
    assert all(
        session.view(who)[-1].turn_index == last for who in ("tenant", "landlord", "mediator")
    )
    # A stored turn keeps the marker, so the episode record shows who heard it.
    assert Turn.from_dict(turn.to_dict()).stage == "caucus"


def test_hold_caucus_meets_every_party_that_can_caucus() -> None:
    session = _session([])
    assert hold_caucus(session) == 2
    assert [t.speaker for t in session.episode.turns] == ["tenant", "landlord"]


def test_a_caucus_is_due_after_every_kth_mediator_turn() -> None:
    assert [due(2, k) for k in range(6)] == [False, False, True, False, True, False]
    assert not any(due(0, k) for k in range(6))


def _caucuses_after(every: int) -> tuple[int, int]:
    s = scenario("tenancy")
    params = {"budget": 60, "caucus": every}
    med = build_agent(MEDIATOR, "rule", s, 0)
    ep = asyncio.run(play("roundtable", s, build_parties(s, "rule", 0), {"mediator": med}, params))
    mediator_turns = sum(t.role == "mediator" for t in ep.turns)
    caucus_turns = sum(t.stage == "caucus" for t in ep.turns)
    return mediator_turns, caucus_turns


def test_the_roundtable_holds_caucuses_on_its_schedule() -> None:
    for every in (0, 1, 3):
        mediator_turns, caucus_turns = _caucuses_after(every)
        assert mediator_turns > 3
        expected = 0 if every == 0 else (mediator_turns // every) * 2  # two parties
        assert caucus_turns == expected


def test_caucus_turns_are_not_lines_of_the_dialogue_for_promediate() -> None:
    from disputelab.evaluation.promediate import episode_events, on_dialogue_lines, table_lines

    s = scenario("tenancy")
    params = {"budget": 60, "caucus": 1}
    med = build_agent(MEDIATOR, "rule", s, 0)
    ep = asyncio.run(play("roundtable", s, build_parties(s, "rule", 0), {"mediator": med}, params))
    lines = table_lines(ep)
    assert any(t.stage == "caucus" for t in ep.turns)
    assert not any(t.stage == "caucus" for t in lines)
    assert len(on_dialogue_lines([0.0] * (ep.party_turns + 1), ep)) == len(lines) + 1
    found = episode_events(ep, [t.id for t in s.topics], "dialogue-line")
    said = [i for i, t in enumerate(lines, start=1) if t.role == "mediator"]
    assert found.mediator_lines == said
