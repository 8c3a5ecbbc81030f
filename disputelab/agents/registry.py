"""Build agents from the names users type.

Parties: `rule` (rule policy, template voice), `llm` (the model plays the party), `hybrid`
(the rule policy decides, the model phrases). Mediators: `none`, `rule`, `generic` and
`social` (the last two need a model).
"""

from __future__ import annotations

from collections.abc import Sequence

from disputelab.agents.base import MediatorAgent, PartyAgent, PublicScenario, StagedMediator
from disputelab.agents.legal_mediators import LLMStagedMediator, RuleStagedMediator
from disputelab.agents.llm_mediators import GenericMediator, SocialMediator
from disputelab.agents.llm_party import HybridParty, LLMParty
from disputelab.agents.rule_mediator import RuleMediator
from disputelab.agents.rule_party import ReadMemo, RuleParty
from disputelab.llm.base import ChatModel
from disputelab.scenario.schema import Scenario

PARTY_KINDS = ("rule", "llm", "hybrid")
MEDIATOR_KINDS = ("none", "rule", "generic", "social", "llm")
LLM_MEDIATORS = ("generic", "social", "llm")
# Which mediators each protocol can seat. The staged protocol always has a mediator.
PROTOCOL_MEDIATORS = {
    "roundtable": ("none", "rule", "generic", "social"),
    "staged": ("rule", "llm"),
}


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


def check_mediator(protocol: str, kind: str) -> None:
    """Raise UnknownAgentError when `protocol` cannot seat a `kind` mediator."""
    allowed = PROTOCOL_MEDIATORS.get(protocol, MEDIATOR_KINDS)
    if kind not in allowed:
        raise UnknownAgentError(
            f"the {protocol} protocol takes mediator {' or '.join(allowed)}, not {kind!r}"
        )


def make_staged_mediator(
    scenario: Scenario,
    kind: str,
    model: ChatModel | None = None,
    seed: int = 0,
    retrieved: Sequence[str] = (),
) -> StagedMediator:
    """The mediator who leads a staged episode, holding any retrieved legal bases."""
    check_mediator("staged", kind)
    public = PublicScenario.of(scenario)
    if kind == "rule":
        return RuleStagedMediator(public, retrieved)
    if model is None:
        raise UnknownAgentError(
            f"mediator {kind!r} needs a model: pass --model or --mediator-model"
        )
    return LLMStagedMediator(public, model, seed, retrieved)


def make_mediator(
    scenario: Scenario, kind: str, model: ChatModel | None = None, seed: int = 0
) -> MediatorAgent | None:
    public = PublicScenario.of(scenario)
    check_mediator("roundtable", kind)
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
