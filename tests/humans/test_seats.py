"""A person takes any seat a person can take, and sees exactly what that seat's view
allows: its own brief and the dialogue as delivered to it, never another party's data
or a turn said in private to someone else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from disputelab.agents.base import PublicTurn, TurnContext
from disputelab.agents.registry import PARTY, build_parties, is_hosted
from disputelab.api.play import play
from disputelab.humans import HUMAN, HumanSeatError, Move, SeatPrompt, no_human_seats, validate
from disputelab.protocols.base import PROTOCOLS
from disputelab.scenario.library import resolve_scenario
from disputelab.scenario.schema import Scenario


class Recorded:
    """A person who presses Enter at every choice, and the prompts they were shown."""

    def __init__(self) -> None:
        self.prompts: list[SeatPrompt] = []

    async def move(self, prompt: SeatPrompt) -> Move:
        self.prompts.append(prompt)
        return validate(prompt, {})


def test_every_seat_of_every_protocol_has_a_human_kind_or_says_why_not() -> None:
    closed = no_human_seats()
    for name, proto in PROTOCOLS.items():
        for seat in proto.seats:
            if seat.interface in closed:
                assert len(closed[seat.interface]) > 20, f"{name} {seat.role}: no reason"
                assert HUMAN not in seat.kinds()
            else:
                assert HUMAN in seat.kinds(), f"{name} seat {seat.role} has no human kind"
                assert is_hosted(seat.interface, HUMAN)
                assert HUMAN not in seat.kinds(hosted=False)  # no run seats one alone


def _own_words(scenario: Scenario, party_id: str) -> list[str]:
    p = scenario.party(party_id)
    return [p.objective, p.fallback.description, p.private_notes]


def test_a_party_prompt_holds_its_own_brief_and_no_other_partys() -> None:
    scenario = resolve_scenario("tenancy")
    person = Recorded()
    (tenant,) = build_parties(scenario, HUMAN, 0, interface=PARTY, hosts={"parties:tenant": person})
    said = PublicTurn(0, 1, "landlord", "party", "The rent goes up.")
    import asyncio

    asyncio.run(tenant.act([said], TurnContext(1, 10, 2)))
    (prompt,) = person.prompts
    assert all(w in prompt.brief for w in _own_words(scenario, "tenant") if w)
    assert not any(w in prompt.brief for w in _own_words(scenario, "landlord") if w)
    assert [line.text for line in prompt.transcript] == ["The rent goes up."]
    assert prompt.seat.key == "parties:tenant" and prompt.seat.party_id == "tenant"


@pytest.mark.parametrize(
    ("sid", "seat", "own", "options"),
    [
        ("tenancy", "parties:tenant", "tenant", {"mediator": "rule"}),
        ("tenancy", "mediator", None, {}),
        ("tenancy", "mediator", None, {"protocol": "staged", "budget": 1}),
        ("tenancy", "parties:landlord", "landlord", {"protocol": "staged", "budget": 1}),
        ("settle-gym-slip", "counsel", "marsh", {"protocol": "settlement"}),
        ("settle-gym-slip", "mediator", None, {"protocol": "settlement", "budget": 12}),
        ("product-sale", "parties:buyer", "buyer", {"protocol": "bilateral", "budget": 2}),
        (
            "product-sale",
            "mediator",
            None,
            {"protocol": "bilateral", "params": {"violation_prob": 1.0}},
        ),
    ],
)
def test_no_seat_a_person_takes_is_shown_another_partys_brief(
    tmp_path: Path, sid: str, seat: str, own: str | None, options: dict[str, Any]
) -> None:
    person = Recorded()
    budget = options.pop("budget", 4)
    result = play(sid, seat=seat, source=person, store=tmp_path, budget=budget, **options)
    assert result.episode.outcome is not None
    scenario = resolve_scenario(sid)
    if own is not None:
        assert person.prompts and scenario.party(own).objective in person.prompts[0].brief
    for other in (p.id for p in scenario.parties if p.id != own):
        for prompt in person.prompts:
            assert not any(w in prompt.brief for w in _own_words(scenario, other) if w), other


def test_a_turn_said_in_private_never_reaches_another_partys_seat(tmp_path: Path) -> None:
    person = Recorded()
    result = play(
        "tenancy",
        seat="parties:tenant",
        source=person,
        store=tmp_path,
        mediator="rule",
        budget=30,
        params={"caucus": 1},
    )
    private = {t.index for t in result.episode.turns if t.stage == "caucus"}
    assert private  # the landlord met the mediator alone
    for prompt in person.prompts:
        heard = {line.index for line in prompt.transcript}
        assert not heard & private
        assert (
            heard == {t.index for t in result.episode.turns[: max(heard, default=-1) + 1]} - private
        )


def test_the_buyer_hears_the_rewrite_and_never_what_the_seller_said(tmp_path: Path) -> None:
    person = Recorded()
    result = play(
        "product-sale",
        seat="parties:buyer",
        source=person,
        store=tmp_path,
        protocol="bilateral",
        mediator="remediator",
        budget=4,
        params={"violation_prob": 1.0},
    )
    rewritten = {t.index: t for t in result.episode.turns if t.delivered}
    assert rewritten
    last = person.prompts[-1]
    for line in last.transcript:
        if line.index in rewritten:
            turn = rewritten[line.index]
            assert line.text == turn.delivered["buyer"] and line.text != turn.text


def test_a_human_seat_with_nothing_to_host_it_is_refused() -> None:
    with pytest.raises(HumanSeatError, match="seat parties:tenant is a person's"):
        build_parties(resolve_scenario("tenancy"), HUMAN, 0, interface=PARTY, hosts={})
