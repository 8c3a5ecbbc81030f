"""The agent kinds of the settlement protocol.

- `settlement-party` (one counsel per party, the opponents of the counsel under test):
  `rule` (eagerness from the party's TKI strategy), `boulware`, `conceder`, `llm` (direct
  model counsel) and `redteam` (the red-team negotiator).
- `settlement-counsel` (the method under test, for the protocol's `side`): `direct` (the
  rule policy, one shot, no look-ahead), `mcts` (planning with memory), and the ablations
  `mcts-no-memory`, `mcts-no-auditor`, `mcts-no-aid`; each with an `llm-` twin in which a
  model writes the moves (`llm-direct`) or the candidates (`llm-mcts...`).
- `settlement-mediator`: `rule` (midpoint on a stall).
"""

from __future__ import annotations

from disputelab.agents.base import PartyAgent
from disputelab.agents.registry import AgentKind, AgentSetup, register_kind
from disputelab.protocols.settlement.agents.counsel import BOULWARE, CONCEDER, Counsel, RuleCounsel
from disputelab.protocols.settlement.agents.llm_counsel import LLMCounsel, ModelProposer
from disputelab.protocols.settlement.agents.planner import PlanningCounsel
from disputelab.protocols.settlement.agents.redteam import RedTeamCounsel
from disputelab.protocols.settlement.agents.staff import RuleMediator

SETTLEMENT_PARTY = "settlement-party"
SETTLEMENT_COUNSEL = "settlement-counsel"
SETTLEMENT_MEDIATOR = "settlement-mediator"
# Ablation kinds: what the system of the counsel under test leaves out.
ABLATIONS = {"no-memory": "memory", "no-auditor": "auditor", "no-aid": "aid"}


def _parties(make: type[Counsel] | None, eagerness: float | None = None):  # type: ignore[no-untyped-def]
    def build(s: AgentSetup) -> list[PartyAgent]:
        out: list[PartyAgent] = []
        for p in s.scenario.parties:
            if make is RedTeamCounsel:
                agent: Counsel = RedTeamCounsel(s.seed)
            elif make is LLMCounsel:
                assert s.model is not None
                agent = LLMCounsel(s.model, s.seed)
            else:
                agent = RuleCounsel(eagerness=eagerness, name="rule")
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
                else RuleCounsel(name="direct")
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
            planner = PlanningCounsel(s.seed, name=kind, proposer=proposer)
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
