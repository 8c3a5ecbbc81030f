"""Build agents from the names users type: `rule` parties; `none` and `rule` mediators."""

from __future__ import annotations

from disputelab.agents.base import MediatorAgent, PartyAgent, PublicScenario
from disputelab.agents.rule_mediator import RuleMediator
from disputelab.agents.rule_party import ReadMemo, RuleParty
from disputelab.scenario.schema import Scenario

PARTY_KINDS = ("rule",)
MEDIATOR_KINDS = ("none", "rule")


class UnknownAgentError(ValueError):
    pass


def make_parties(scenario: Scenario, kind: str, seed: int) -> list[PartyAgent]:
    """One agent per party, in the scenario's speaking order."""
    if kind != "rule":
        raise UnknownAgentError(
            f"unknown party model {kind!r}; available: {', '.join(PARTY_KINDS)}"
        )
    public = PublicScenario.of(scenario)
    reads: ReadMemo = {}
    return [RuleParty(scenario, p.id, seed, public, reads) for p in scenario.parties]


def make_mediator(scenario: Scenario, kind: str) -> MediatorAgent | None:
    if kind == "none":
        return None
    if kind == "rule":
        return RuleMediator(PublicScenario.of(scenario))
    raise UnknownAgentError(f"unknown mediator {kind!r}; available: {', '.join(MEDIATOR_KINDS)}")
