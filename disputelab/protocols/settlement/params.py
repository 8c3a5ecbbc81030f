"""The settlement protocol's parameters: every hyperparameter the paper leaves open is a
documented default here, with its source (a spec section or 'assumption')."""

from __future__ import annotations

from typing import Literal, cast

from pydantic import Field, field_validator, model_validator

from disputelab.protocols.agent_params import BehaviourOverrides
from disputelab.protocols.base import ProtocolParams
from disputelab.protocols.settlement.agents.model import Side, Weights
from disputelab.protocols.settlement.agents.redteam import LEVELS, MODES


class SettlementParams(ProtocolParams):
    round_limit: int = Field(
        default=12,
        ge=2,
        le=200,
        description="Round limit T in counsel turns, both sides counted (spec 3: one round = one "
        "counsel turn; the red-team schedule implies T >= 6; 12 is an assumption).",
    )
    # Plain strings checked below: a Literal of these long words would widen the type
    # column of `disputelab run --help` for every protocol's options.
    side: str = Field(
        default="plaintiff",
        description="Whose counsel is the method under test: plaintiff or defendant (assumption).",
    )
    opener: str = Field(
        default="plaintiff",
        description="Who makes the first offer: plaintiff or defendant (spec 3 suggests "
        "the plaintiff).",
    )

    @field_validator("side", "opener")
    @classmethod
    def _a_side(cls, v: str) -> str:
        if v not in ("plaintiff", "defendant"):
            raise ValueError(f"must be plaintiff or defendant, not {v[:40]!r}")
        return v

    batna_source: Literal["analyst", "judgment"] = Field(
        default="analyst",
        description="analyst: the outcome analyst estimates J; judgment: J is the known award "
        "(the paper's Tried subset; leaks the Acc@tau reference).",
    )
    walk_away: Literal["batna", "scenario"] = Field(
        default="batna",
        description="batna: each counsel walks away at its side's BATNA reservation, the "
        "model the analyst and the metrics use; scenario: at the scenario's own walk-away, "
        "which may lie outside the BATNA's ZOPA (surplus is then unbounded).",
    )
    award_share: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description="Analyst's J = admitted + award_share x (claim - admitted) (assumption).",
    )
    p_win: float = Field(
        default=0.8, gt=0, le=1, description="Plaintiff's win probability (assumption)."
    )
    cost_share: float = Field(
        default=0.08,
        ge=0,
        le=1,
        description="Each side's litigation cost as a share of J (assumption).",
    )
    candidates: int = Field(
        default=3,
        ge=1,
        le=6,
        description="Root candidates K per planning turn (the paper gives no K; 3 is ours).",
    )
    simulations: int = Field(
        default=8,
        ge=1,
        le=500,
        description="Tree simulations (rollouts) per planning turn; at least one per root "
        "candidate runs whatever the value (8, as RoT's bargaining search).",
    )
    depth: int = Field(
        default=2,
        ge=1,
        le=8,
        description="Tree depth: own moves chosen by UCB, each with the modelled reply, "
        "before the rollout (the paper: a shallow search; 2 is ours).",
    )
    rollout_model: Literal["off", "counsel"] = Field(
        default="off",
        description="counsel: rollouts ask the counsel's model for the other side's offers "
        "(a model counsel only; charged to counsel.rollout); off: the rule model.",
    )
    rollout_calls: int = Field(
        default=4,
        ge=1,
        le=200,
        description="Model calls the rollouts may make per counsel turn under "
        "rollout_model: counsel; the rule model answers after that.",
    )
    rollout_rounds: int = Field(
        default=3, ge=1, le=10, description="Rollout length L (spec 4.2: 3; paper 2-4)."
    )
    ucb_c: float = Field(
        default=1.0,
        gt=0,
        le=10,
        description="UCB exploration constant c (the paper gives none; 1.0 for values on [0, 1]).",
    )
    ucb_eps: float = Field(
        default=1e-6, gt=0, le=1, description="UCB stabiliser epsilon (spec 4.2: 1e-6)."
    )
    w_settle: float = Field(
        default=0.25, ge=0, le=1, description="Weight of m_settle (spec 4.2: uniform)."
    )
    w_surplus: float = Field(
        default=0.25, ge=0, le=1, description="Weight of m_surplus (spec 4.2: uniform)."
    )
    w_fair: float = Field(
        default=0.25, ge=0, le=1, description="Weight of m_fair (spec 4.2: uniform)."
    )
    w_comp: float = Field(
        default=0.25, ge=0, le=1, description="Weight of m_comp (spec 4.2: uniform)."
    )
    max_model_calls: int = Field(
        default=1,
        ge=0,
        le=20,
        description="Model calls a model-writing counsel may make per turn (assumption).",
    )
    memory: Literal["episode", "store"] = Field(
        default="episode",
        description="episode: RoT memory starts empty every episode (spec 5.3 setting a); "
        "store: it persists in the store across episodes and experiments (setting b; "
        "`disputelab memory reset` clears it).",
    )
    stall_turns: int = Field(
        default=4,
        ge=2,
        le=50,
        description="Counsel turns without the gap narrowing before the mediator steps in "
        "(assumption).",
    )
    red_team_modes: str = Field(
        default=",".join(MODES), description="Red-team modes, comma-separated (spec 8.3)."
    )
    red_team_level: Literal["low", "mid", "high"] = Field(
        default="low",
        description="The red team's starting intensity (assumption; spec 8.4 escalates).",
    )

    behaviour: BehaviourOverrides = Field(
        default_factory=dict,
        description="Behaviour parameters of the rule counsel set away from their defaults, "
        "by name (settlement.eagerness.MODE; `disputelab conditions parameters`; "
        "`run --behaviour NAME=VALUE`).",
    )

    @field_validator("red_team_modes")
    @classmethod
    def _known_modes(cls, v: str) -> str:
        modes = [m.strip() for m in v.split(",") if m.strip()]
        bad = [m for m in modes if m not in MODES]
        if bad or not modes:
            raise ValueError(
                f"unknown red-team mode {', '.join(bad) or '(none)'}; use {', '.join(MODES)}"
            )
        return ",".join(modes)

    @model_validator(mode="after")
    def _weights(self) -> SettlementParams:
        if self.w_settle + self.w_surplus + self.w_fair + self.w_comp <= 0:
            raise ValueError(
                "the value weights w_settle, w_surplus, w_fair, w_comp must not all be 0"
            )
        return self

    def tested(self) -> Side:
        return cast(Side, self.side)

    def first(self) -> Side:
        return cast(Side, self.opener)

    def weights(self) -> Weights:
        return Weights(self.w_settle, self.w_surplus, self.w_fair, self.w_comp).normalised()

    def modes(self) -> tuple[str, ...]:
        return tuple(self.red_team_modes.split(","))

    def level(self) -> int:
        return LEVELS.index(self.red_team_level)
