"""Build agents from the names users type.

Parties: `rule` (rule policy, template voice), `llm` (the model plays the party), `hybrid`
(the rule policy decides, the model phrases). Mediators: `none`, `rule`, `generic` and
`social` (the last two need a model).
"""

from __future__ import annotations

from disputelab.agents.base import MediatorAgent, PartyAgent, PublicScenario
from disputelab.agents.llm_mediators import GenericMediator, SocialMediator
from disputelab.agents.llm_party import HybridParty, LLMParty
from disputelab.agents.rule_mediator import RuleMediator
from disputelab.agents.rule_party import ReadMemo, RuleParty
from disputelab.llm.base import ChatModel
from disputelab.scenario.schema import Scenario

PARTY_KINDS = ("rule", "llm", "hybrid")
MEDIATOR_KINDS = ("none", "rule", "generic", "social")
LLM_MEDIATORS = ("generic", "social")


class UnknownAgentError(ValueError):
    pass


def make_parties(
    scenario: Scenario, kind: str, seed: int, model: ChatModel | None = None
) -> list[PartyAgent]:
    """One agent per party, in the scenario's speaking order."""
    public = PublicScenario.of(scenario)
    if kind == "rule":
        reads: ReadMemo = {}
        return [RuleParty(scenario, p.id, seed, public, reads) for p in scenario.parties]
    if kind not in PARTY_KINDS:
        raise UnknownAgentError(f"unknown party kind {kind!r}; available: {', '.join(PARTY_KINDS)}")
    if model is None:
        raise UnknownAgentError(f"{kind} parties need a model: pass --model or --parties-model")
    if kind == "llm":
        return [LLMParty(scenario, p.id, model, seed, public) for p in scenario.parties]
    memo: ReadMemo = {}
    return [HybridParty(scenario, p.id, seed, model, public, memo) for p in scenario.parties]


def make_mediator(
    scenario: Scenario, kind: str, model: ChatModel | None = None, seed: int = 0
) -> MediatorAgent | None:
    public = PublicScenario.of(scenario)
    if kind == "none":
        return None
    if kind == "rule":
        return RuleMediator(public)
    if kind in LLM_MEDIATORS:
        if model is None:
            raise UnknownAgentError(
                f"mediator {kind!r} needs a model: pass --model or --mediator-model"
            )
        return (
            GenericMediator(public, model, seed)
            if kind == "generic"
            else SocialMediator(public, model, seed)
        )
    raise UnknownAgentError(f"unknown mediator {kind!r}; available: {', '.join(MEDIATOR_KINDS)}")
