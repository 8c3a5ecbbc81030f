"""Prompts put what the seats share first, so a scenario's requests share a long prefix."""

from __future__ import annotations

from disputelab.agents.base import PublicScenario
from disputelab.agents.prompts import mediator_system, party_system, scenario_block
from tests.helpers import scenario


def test_every_seat_of_a_scenario_opens_with_the_shared_scenario() -> None:
    s = scenario("tenancy")
    public = PublicScenario.of(s)
    shared = scenario_block(public)
    prompts = [party_system(public, p) for p in s.parties] + [mediator_system(public)]
    assert all(p.startswith(shared) for p in prompts)
    assert len(shared) > 200  # the whole scenario block, not a line of it


def test_a_party_prompt_keeps_its_private_brief_after_the_shared_part() -> None:
    s = scenario("tenancy")
    public = PublicScenario.of(s)
    party = s.parties[0]
    prompt = party_system(public, party)
    assert prompt.index(party.objective) > len(scenario_block(public))
    assert party.objective not in mediator_system(public)
