"""The turn-taking predictor kinds: rule (reads the dialogue) and llm (asks a model)."""

from __future__ import annotations

from disputelab.agents.base import Agent
from disputelab.agents.registry import AgentKind, AgentSetup, register_kind
from disputelab.protocols.roundtable.agents import TURN_PREDICTOR
from disputelab.protocols.roundtable.agents.predictors import LLMPredictor, RulePredictor


def _llm(s: AgentSetup) -> Agent:
    assert s.model is not None
    return LLMPredictor(s.public, s.model, s.seed)


register_kind(
    AgentKind(
        TURN_PREDICTOR,
        "rule",
        "expects a party named in the latest utterance, else the most opposed one to answer",
        lambda s: RulePredictor(s.public),
    )
)
register_kind(
    AgentKind(
        TURN_PREDICTOR,
        "llm",
        "asks a model who speaks next, from the last five utterances",
        _llm,
        needs_model=True,
    )
)
