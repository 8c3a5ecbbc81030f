"""The party kinds users can name: rule, llm and hybrid."""

from __future__ import annotations

from disputelab.agents.base import PartyAgent
from disputelab.agents.parties.llm import HybridParty, LLMParty
from disputelab.agents.parties.rule import ReadMemo, RuleParty
from disputelab.agents.registry import PARTY, AgentKind, AgentSetup, register_kind


def _rule(s: AgentSetup) -> list[PartyAgent]:
    # One memo of how each public turn reads, shared by the parties of an episode.
    reads: ReadMemo = {}
    return [RuleParty(s.scenario, p.id, s.seed, s.public, reads) for p in s.scenario.parties]


def _llm(s: AgentSetup) -> list[PartyAgent]:
    assert s.model is not None
    return [LLMParty(s.scenario, p.id, s.model, s.seed, s.public) for p in s.scenario.parties]


def _hybrid(s: AgentSetup) -> list[PartyAgent]:
    assert s.model is not None
    memo: ReadMemo = {}
    return [
        HybridParty(s.scenario, p.id, s.seed, s.model, s.public, memo) for p in s.scenario.parties
    ]


register_kind(AgentKind(PARTY, "rule", "rule policy with a template voice (no model)", _rule))
register_kind(AgentKind(PARTY, "llm", "the model plays each party", _llm, needs_model=True))
register_kind(
    AgentKind(
        PARTY, "hybrid", "the rule policy decides, the model phrases", _hybrid, needs_model=True
    )
)
