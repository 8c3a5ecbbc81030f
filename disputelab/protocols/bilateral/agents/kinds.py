"""The kinds of a two-party price negotiation: bargainers (rule, llm), the remediator
kinds (one per way of choosing exemplars), the moderator and the violation detector.

A remediator kind plays with templates when its seat has no model and with the model's
rewrites when it has one: `--mediator remediator` works offline and with `--model`.
"""

from __future__ import annotations

from disputelab.agents.base import Agent, PartyAgent
from disputelab.agents.registry import AgentKind, AgentSetup, register_kind
from disputelab.protocols.bilateral.agents.llm import LLMBargainer, LLMDetector, LLMModerator
from disputelab.protocols.bilateral.agents.moderator import LexiconDetector, RuleModerator
from disputelab.protocols.bilateral.agents.remediators import LLMRemediator, TemplateRemediator
from disputelab.protocols.bilateral.agents.rule import RuleBargainer

BARGAINER = "bargainer"  # a buyer or seller of one price
REMEDIATOR = "remediator"  # rewrites a violating utterance before it is heard
MODERATOR = "moderator"  # ends the session and reads the deal
DETECTOR = "violation-detector"  # names the norm an utterance breaks, if any


def _rule(s: AgentSetup) -> list[PartyAgent]:
    b = s.settings.behaviour
    return [RuleBargainer(s.scenario, p.id, s.seed, behaviour=b) for p in s.scenario.parties]


def _llm(s: AgentSetup) -> list[PartyAgent]:
    assert s.model is not None
    return [LLMBargainer(s.scenario, p.id, s.model, s.seed) for p in s.scenario.parties]


def _remediator(method: str | None) -> AgentKind:
    def build(s: AgentSetup) -> Agent:
        if s.model is None:
            return TemplateRemediator(s.scenario, s.seed, method)
        return LLMRemediator(s.scenario, s.seed, method, s.model)

    name = {None: "remediator", "zero-shot": "zero-shot"}.get(method, f"{method}-icl")
    about = {
        None: "rewrites violations with the exemplars --exemplars names",
        "zero-shot": "rewrites violations without exemplars (PROMPT)",
        "random": "rewrites with k exemplars drawn at random from the pool (vanilla ICL)",
        "retrieval": "rewrites with the k pool exemplars nearest the dialogue",
    }[method]
    return AgentKind(REMEDIATOR, name, about + "; templates offline", build, uses_model=True)


register_kind(
    AgentKind(BARGAINER, "rule", "concession curve, template voice, offence", _rule, behaviour=True)
)
register_kind(AgentKind(BARGAINER, "llm", "the model plays each side", _llm, needs_model=True))
for _method in (None, "zero-shot", "random", "retrieval"):
    register_kind(_remediator(_method))
register_kind(
    AgentKind(
        MODERATOR, "rule", "reads acceptances and walk-outs", lambda s: RuleModerator(s.scenario)
    )
)
register_kind(
    AgentKind(
        MODERATOR,
        "llm",
        "the model reads the last five utterances",
        lambda s: LLMModerator(s.scenario, s.model, s.seed),  # type: ignore[arg-type]
        needs_model=True,
    )
)
register_kind(
    AgentKind(
        DETECTOR, "lexicon", "flags our phrase banks' violations", lambda s: LexiconDetector()
    )
)
register_kind(
    AgentKind(
        DETECTOR,
        "llm",
        "the model names the violated norm",
        lambda s: LLMDetector(s.scenario, s.model, s.seed),  # type: ignore[arg-type]
        needs_model=True,
    )
)
