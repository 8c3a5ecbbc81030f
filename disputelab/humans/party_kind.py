"""The human kind of the shared `party` seat (the roundtable's and the staged protocol's
parties): a plug-in module of its own, so that it is listed after the agents' party
kinds whichever module is imported first."""

from __future__ import annotations

from disputelab.agents.base import PartyAgent, PublicScenario
from disputelab.agents.registry import PARTY, AgentSetup
from disputelab.humans.kinds import human_party_kind
from disputelab.humans.parties import HumanParty
from disputelab.humans.source import MoveSource
from disputelab.scenario.schema import Party


def _party(
    public: PublicScenario, party: Party, source: MoveSource, setup: AgentSetup
) -> PartyAgent:
    return HumanParty(public, party, source, setup.role or "parties")


human_party_kind(PARTY, "a person plays the party: stances, signal and words at each turn", _party)
