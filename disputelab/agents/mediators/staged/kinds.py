"""The mediator kinds that can lead a staged session: rule and llm."""

from __future__ import annotations

from disputelab.agents.base import Agent
from disputelab.agents.mediators.staged.legal import LLMStagedMediator, RuleStagedMediator
from disputelab.agents.registry import STAGED_MEDIATOR, AgentKind, AgentSetup, register_kind


def _llm(s: AgentSetup) -> Agent:
    assert s.model is not None
    temperature = s.settings.mediator_temperature
    return LLMStagedMediator(
        s.public,
        s.model,
        s.seed,
        s.retrieved,
        temperature=0.0 if temperature is None else temperature,
        window=s.settings.window(),
    )


register_kind(
    AgentKind(
        STAGED_MEDIATOR,
        "rule",
        "proposes the split-the-difference package and cites what it knows (no model)",
        lambda s: RuleStagedMediator(s.public, s.retrieved),
    )
)
register_kind(
    AgentKind(STAGED_MEDIATOR, "llm", "the model leads every stage", _llm, needs_model=True)
)
