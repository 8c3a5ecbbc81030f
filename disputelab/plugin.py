"""What a plug-in package imports to add protocols, agent kinds and evaluators.

A plug-in is a module that registers what it defines as it is imported, and names
itself under the `disputelab.plugins` entry-point group of its package's metadata:

    [project.entry-points."disputelab.plugins"]
    show-of-hands = "show_of_hands"

`@protocol` registers a `DisputeProtocol` subclass (its `Params`, `seats`, `play`),
`@agent_kind(INTERFACE, NAME, ...)` a builder of agents for a seat, and
`@evaluator(NAME, VERSION, ...)` a scorer of complete episodes. Everything listed here
is the stable surface for plug-ins; `tests/plugins/show_of_hands` in the repository is
a complete one.

A model backend is a plug-in of its own kind, found under the `disputelab.models` group
by the prefix its entry point is named for (`myco = "myco_models:endpoint"` answers
`myco/MODEL[@URL]`): a function of a `ModelRequest` returning an `Endpoint` or just a
`ChatModel`. `read_key` looks a key up as disputelab's own backends do (the environment,
then `.env`); `tests/plugins/echo_models` is a complete one.
"""

from __future__ import annotations

from disputelab.agents.base import (
    Agent,
    MediatorAgent,
    PartyAgent,
    PublicScenario,
    PublicTurn,
    TurnContext,
    UsageReporter,
)
from disputelab.agents.registry import PARTY, AgentKind, AgentSetup, agent_kind, register_kind
from disputelab.episode import Action, Episode, Intervention, Outcome, Signal, Stance, Status, Usage
from disputelab.evaluation.metrics import MetricResult
from disputelab.evaluation.registry import (
    EpisodeToScore,
    Evaluator,
    ScoringContext,
    evaluator,
    register_evaluator,
)
from disputelab.llm.base import ChatModel, ChatRequest, ChatResponse
from disputelab.llm.endpoint import Endpoint
from disputelab.llm.keys import read_key
from disputelab.llm.model_plugins import ModelRequest
from disputelab.llm.wrappers import Prices
from disputelab.protocols.base import (
    DisputeProtocol,
    ProtocolParams,
    ReportLayout,
    Seat,
    protocol,
    register_protocol,
)
from disputelab.protocols.session import Session
from disputelab.scenario.schema import Scenario

__all__ = [
    "PARTY",
    "Action",
    "Agent",
    "AgentKind",
    "AgentSetup",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "DisputeProtocol",
    "Endpoint",
    "Episode",
    "EpisodeToScore",
    "Evaluator",
    "Intervention",
    "MediatorAgent",
    "MetricResult",
    "ModelRequest",
    "Outcome",
    "PartyAgent",
    "Prices",
    "ProtocolParams",
    "PublicScenario",
    "PublicTurn",
    "ReportLayout",
    "Scenario",
    "ScoringContext",
    "Seat",
    "Session",
    "Signal",
    "Stance",
    "Status",
    "TurnContext",
    "Usage",
    "UsageReporter",
    "agent_kind",
    "evaluator",
    "protocol",
    "read_key",
    "register_evaluator",
    "register_kind",
    "register_protocol",
]
