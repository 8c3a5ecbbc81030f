"""The mediator kinds that can lead a staged session: rule and llm."""

from __future__ import annotations

from disputelab.agents.base import Agent
from disputelab.agents.registry import AgentKind, AgentSetup, register_kind
from disputelab.protocols.staged.agents import STAGED_MEDIATOR
from disputelab.protocols.staged.agents.mediators import LLMStagedMediator, RuleStagedMediator


def _split(s: AgentSetup) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(bases the mediator reads, bases appended to its proposals afterwards)."""
    if s.settings.expertise_use == "append":
        return (), s.retrieved
    return s.retrieved, ()


def _llm(s: AgentSetup) -> Agent:
    assert s.model is not None
    temperature = s.settings.mediator_temperature
    shown, appended = _split(s)
    return LLMStagedMediator(
        s.public,
        s.model,
        s.seed,
        shown,
        temperature=0.0 if temperature is None else temperature,
        window=s.settings.window(),
        appended=appended,
    )


def _rule(s: AgentSetup) -> Agent:
    shown, appended = _split(s)
    cite = s.settings.behaviour["legal.cite_retrieved"]
    return RuleStagedMediator(s.public, shown, appended, cite)


register_kind(
    AgentKind(
        STAGED_MEDIATOR,
        "rule",
        "proposes the split-the-difference package and cites what it knows (no model)",
        _rule,
    )
)
register_kind(
    AgentKind(STAGED_MEDIATOR, "llm", "the model leads every stage", _llm, needs_model=True)
)
