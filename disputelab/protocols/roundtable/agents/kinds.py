"""The proactive mediator kinds users can name: rule, generic and social."""

from __future__ import annotations

from disputelab.agents.base import Agent
from disputelab.agents.registry import AgentKind, AgentSetup, register_kind
from disputelab.protocols.roundtable.agents import MEDIATOR
from disputelab.protocols.roundtable.agents.llm import GenericMediator, SocialMediator
from disputelab.protocols.roundtable.agents.rule import RuleMediator


def _generic(s: AgentSetup) -> Agent:
    assert s.model is not None
    return GenericMediator(s.public, s.model, s.seed, s.settings, s.call_models.get("when"))


def _social(s: AgentSetup) -> Agent:
    assert s.model is not None
    when = s.call_models.get("when")
    return SocialMediator(s.public, s.model, s.seed, settings=s.settings, when_model=when)


register_kind(
    AgentKind(
        MEDIATOR,
        "rule",
        "steps in on a consensus drop, hostility or a stall (no model)",
        lambda s: RuleMediator(s.public),
    )
)
register_kind(
    AgentKind(
        MEDIATOR,
        "generic",
        "LLM mediator: when to speak, then what",
        _generic,
        needs_model=True,
        calls=("when",),
    )
)
register_kind(
    AgentKind(
        MEDIATOR,
        "social",
        "LLM mediator that also reads the parties' emotions",
        _social,
        needs_model=True,
        calls=("when",),  # asked only with social_when_call
    )
)
