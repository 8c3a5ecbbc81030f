"""The agent kinds of the settlement protocol.

- `settlement-party` (one counsel per party, the opponents of the counsel under test):
  `rule` (eagerness from the party's TKI strategy), `boulware`, `conceder`, `llm` (direct
  model counsel) and `redteam` (the red-team negotiator).
- `settlement-counsel` (the method under test, for the protocol's `side`): `direct` (the
  rule policy, one shot, no look-ahead), `mcts` (planning with memory), and the ablations
  `mcts-no-memory`, `mcts-no-auditor`, `mcts-no-aid`; each with an `llm-` twin in which a
  model writes the moves (`llm-direct`) or the candidates (`llm-mcts...`).
- `settlement-mediator`: `rule` (midpoint on a stall), `llm` (the model proposes a figure
  between the standing offers).
- `settlement-outcome` (the outcome analyst's BATNA), `settlement-auditor` (the compliance
  audit at VERIFY) and `settlement-memory` (RoT distillation for a planning counsel that
  keeps memory): `rule` and `llm` each. A model kind's calls are charged to its seat's
  role (`outcome`, `auditor`, `memory`), and `models: {ROLE: M}` gives it its model.
"""

from __future__ import annotations

from collections.abc import Callable

from disputelab.agents.base import Agent, PartyAgent
from disputelab.agents.registry import AgentKind, AgentSetup, register_kind
from disputelab.llm.base import ChatModel
from disputelab.protocols.settlement.agents.auditor import RuleAuditor
from disputelab.protocols.settlement.agents.counsel import BOULWARE, CONCEDER, Counsel, RuleCounsel
from disputelab.protocols.settlement.agents.llm_auditor import LLMAuditor
from disputelab.protocols.settlement.agents.llm_counsel import LLMCounsel, ModelProposer
from disputelab.protocols.settlement.agents.llm_memory import ModelDistiller
from disputelab.protocols.settlement.agents.llm_staff import LLMMediator, LLMOutcomeAnalyst
from disputelab.protocols.settlement.agents.memory import RuleDistiller
from disputelab.protocols.settlement.agents.planner import PlanningCounsel
from disputelab.protocols.settlement.agents.redteam import RedTeamCounsel
from disputelab.protocols.settlement.agents.staff import OutcomeAnalyst, RuleMediator

SETTLEMENT_PARTY = "settlement-party"
SETTLEMENT_COUNSEL = "settlement-counsel"
SETTLEMENT_MEDIATOR = "settlement-mediator"
SETTLEMENT_OUTCOME = "settlement-outcome"
SETTLEMENT_AUDITOR = "settlement-auditor"
SETTLEMENT_MEMORY = "settlement-memory"
# Ablation kinds: what the system of the counsel under test leaves out.
ABLATIONS = {"no-memory": "memory", "no-auditor": "auditor", "no-aid": "aid"}


def _parties(make: type[Counsel] | None, eagerness: float | None = None):  # type: ignore[no-untyped-def]
    def build(s: AgentSetup) -> list[PartyAgent]:
        out: list[PartyAgent] = []
        b = s.settings.behaviour
        for p in s.scenario.parties:
            if make is RedTeamCounsel:
                agent: Counsel = RedTeamCounsel(s.seed)
            elif make is LLMCounsel:
                assert s.model is not None
                agent = LLMCounsel(s.model, s.seed)
            else:
                agent = RuleCounsel(eagerness=eagerness, name="rule", behaviour=b)
            agent.party_id = p.id
            out.append(agent)
        return out

    return build


register_kind(
    AgentKind(
        SETTLEMENT_PARTY,
        "rule",
        "time-dependent counsel, eagerness from the party's strategy",
        _parties(RuleCounsel),
        behaviour=True,
    )
)
register_kind(
    AgentKind(
        SETTLEMENT_PARTY,
        "boulware",
        "rule counsel that concedes late",
        _parties(RuleCounsel, BOULWARE),
    )
)
register_kind(
    AgentKind(
        SETTLEMENT_PARTY,
        "conceder",
        "rule counsel that concedes early",
        _parties(RuleCounsel, CONCEDER),
    )
)
register_kind(
    AgentKind(
        SETTLEMENT_PARTY,
        "llm",
        "the model is counsel, one call per turn",
        _parties(LLMCounsel),
        needs_model=True,
    )
)
register_kind(
    AgentKind(
        SETTLEMENT_PARTY,
        "redteam",
        "red-team negotiator: five attack modes (no model)",
        _parties(RedTeamCounsel),
    )
)


def _counsel(kind: str, model_writes: bool):  # type: ignore[no-untyped-def]
    planning = kind.startswith("mcts")
    ablated = next((what for suffix, what in ABLATIONS.items() if kind.endswith(suffix)), "")

    def build(s: AgentSetup) -> Counsel:
        agent: Counsel
        if not planning:
            agent = (
                LLMCounsel(s.model, s.seed, name="direct")
                if model_writes and s.model
                else RuleCounsel(name="direct", behaviour=s.settings.behaviour)
            )
        else:
            proposer: ModelProposer | None = None
            if model_writes:
                from disputelab.protocols.settlement.agents.llm_counsel import ModelOpponent
                from disputelab.protocols.settlement.agents.llm_counsel import (
                    ModelProposer as Proposer,
                )

                assert s.model is not None
                proposer = Proposer(s.model, s.seed)
            planner = PlanningCounsel(
                s.seed, name=kind, proposer=proposer, behaviour=s.settings.behaviour
            )
            if model_writes:
                # Asked only under rollout_model: counsel; `models: {counsel.rollout: M}`
                # gives the rollouts a model (and a meter) of their own.
                rollout = s.call_models.get("rollout", s.model)
                assert rollout is not None
                planner.rollout_opponent = ModelOpponent(rollout, s.seed)
            planner.uses_memory = ablated != "memory"
            agent = planner
        agent.uses_auditor = ablated != "auditor"
        agent.uses_aid = ablated != "aid"
        return agent

    return build


_HELP = {
    "direct": "one-shot counsel, no look-ahead (the rule policy offline)",
    "mcts": "planning counsel: K candidates, UCB tree search, rollouts, RoT memory",
    "mcts-no-memory": "planning counsel without RoT memory",
    "mcts-no-auditor": "planning counsel in a system without the compliance auditor",
    "mcts-no-aid": "planning counsel in a system without legal aid",
}
for _name, _help in _HELP.items():
    register_kind(AgentKind(SETTLEMENT_COUNSEL, _name, _help, _counsel(_name, False)))
for _name, _help in _HELP.items():
    register_kind(
        AgentKind(
            SETTLEMENT_COUNSEL,
            f"llm-{_name}",
            f"{_help}; the model writes the moves",
            _counsel(_name, True),
            needs_model=True,
            calls=("rollout",) if _name.startswith("mcts") else (),
        )
    )
register_kind(
    AgentKind(
        SETTLEMENT_MEDIATOR,
        "rule",
        "proposes the midpoint when talks stall",
        lambda s: RuleMediator(),
    )
)
register_kind(
    AgentKind(
        SETTLEMENT_MEDIATOR,
        "llm",
        "on a stall the model proposes a figure between the standing offers",
        lambda s: LLMMediator(_model(s), s.seed),
        needs_model=True,
    )
)


def _model(s: AgentSetup) -> ChatModel:
    assert s.model is not None  # the registry refuses a needs_model kind without one
    return s.model


_STAFF: tuple[tuple[str, str, str, Callable[[AgentSetup], Agent]], ...] = (
    (
        SETTLEMENT_OUTCOME,
        "rule",
        "BATNA from award_share, p_win, cost_share",
        lambda s: OutcomeAnalyst(),
    ),
    (
        SETTLEMENT_OUTCOME,
        "llm",
        "the model estimates J, p_win and costs from the case file",
        lambda s: LLMOutcomeAnalyst(_model(s), s.seed),
    ),
    (
        SETTLEMENT_AUDITOR,
        "rule",
        "the compliance rules (EL, AMB, NW, ILL, ENF, VOL)",
        lambda s: RuleAuditor(),
    ),
    (
        SETTLEMENT_AUDITOR,
        "llm",
        "the model gives each clause ok, revise or unverifiable",
        lambda s: LLMAuditor(_model(s), s.seed),
    ),
    (
        SETTLEMENT_MEMORY,
        "rule",
        "RoT memory entries written by template",
        lambda s: RuleDistiller(),
    ),
    (
        SETTLEMENT_MEMORY,
        "llm",
        "RoT memory entries worded as guidance by the model",
        lambda s: ModelDistiller(_model(s), s.seed),
    ),
)
for _interface, _kind, _help, _build in _STAFF:
    register_kind(AgentKind(_interface, _kind, _help, _build, needs_model=_kind == "llm"))
