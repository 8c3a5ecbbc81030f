"""The party kinds users can name: rule, llm and hybrid."""

from __future__ import annotations

from disputelab.agents.base import PartyAgent
from disputelab.agents.parties.llm import HybridParty, LLMParty
from disputelab.agents.parties.rule import RuleParty
from disputelab.agents.parties.rule_memos import ReadMemo, RuleMemos
from disputelab.agents.registry import PARTY, AgentKind, AgentSetup, register_kind
from disputelab.scenario.schema import Persona, Scenario


def general_parties(scenario: Scenario) -> Scenario:
    """The scenario with every party's style taken away, for the `general` party style:
    the neutral strategy (compromising: a linear concession curve), the default
    reactivity, and no culture or traits. Briefs, weights and rankings stay."""
    neutral = Persona()
    parties = [
        p.model_copy(
            update={
                "persona": p.persona.model_copy(
                    update={
                        "strategy": neutral.strategy,
                        "assertiveness": None,
                        "cooperativeness": None,
                        "strategy_update": neutral.strategy_update,
                        "reactivity": neutral.reactivity,
                        "culture": None,
                        "traits": [],
                    }
                )
            }
        )
        for p in scenario.parties
    ]
    return scenario.model_copy(update={"parties": parties})


def _policy_scenario(s: AgentSetup) -> Scenario:
    """The scenario a rule policy plays: as written, or without styles for `general`."""
    return general_parties(s.scenario) if s.settings.party_style == "general" else s.scenario


def _rule(s: AgentSetup) -> list[PartyAgent]:
    # One memo of how each public turn reads, shared by the parties of an episode.
    reads: ReadMemo = {}
    sc = _policy_scenario(s)
    b, told = s.settings.behaviour, s.settings.disclosure
    memos = s.memos.of(RuleMemos)
    return [RuleParty(sc, p.id, s.seed, s.public, reads, b, told, memos=memos) for p in sc.parties]


def _llm(s: AgentSetup) -> list[PartyAgent]:
    assert s.model is not None
    return [
        LLMParty(s.scenario, p.id, s.model, s.seed, s.public, s.settings, s.embedder)
        for p in s.scenario.parties
    ]


def _hybrid(s: AgentSetup) -> list[PartyAgent]:
    assert s.model is not None
    memo: ReadMemo = {}
    sc = _policy_scenario(s)
    memos = s.memos.of(RuleMemos)
    return [
        HybridParty(sc, p.id, s.seed, s.model, s.public, memo, s.settings, memos)
        for p in sc.parties
    ]


register_kind(
    AgentKind(
        PARTY, "rule", "rule policy with a template voice (no model)", _rule, hidden_state=True
    )
)
register_kind(
    AgentKind(PARTY, "llm", "the model plays each party", _llm, needs_model=True, embeds=True)
)
register_kind(
    AgentKind(
        PARTY,
        "hybrid",
        "the rule policy decides, the model phrases",
        _hybrid,
        needs_model=True,
        hidden_state=True,
    )
)
