"""What a run produces: typed actions, turns and episodes.

These are slotted dataclasses rather than pydantic models because a rule-based episode
creates thousands of them per second; `to_dict`/`from_dict` give the JSON form the store
and reports use.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Literal, NamedTuple

Tone = Literal["warm", "neutral", "hostile"]
Role = Literal["party", "mediator", "system"]


class Signal(StrEnum):
    CONTINUE = "continue"
    CONSENSUS = "consensus"
    WALK_AWAY = "walk_away"


class Status(StrEnum):
    RESOLVED = "resolved"
    IMPASSE = "impasse"
    BUDGET = "budget"
    INCOMPLETE = "incomplete"
    FAILED = "failed"
    WITHDRAWN = "withdrawn"  # a person left the study mid-episode; the turns before stay


Decision = Literal["accept", "uncertain", "reject"]
# The five-point satisfaction scale of AgentMediation, lowest first.
SATISFACTION = ("very low", "low", "medium", "high", "very high")


class Verdict(NamedTuple):
    """A party's answer to a final proposal at closure (the staged protocol)."""

    decision: Decision
    satisfaction: str  # one of SATISFACTION
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"decision": self.decision, "satisfaction": self.satisfaction, "reason": self.reason}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Verdict:
        return Verdict(d["decision"], d["satisfaction"], d.get("reason", ""))


class Stance(NamedTuple):
    """A party's position on one topic: the option it backs and every option it would take.

    A named tuple rather than a dataclass: stances are compared and hashed on every turn,
    and tuple equality runs in C.
    """

    option: str | None
    acceptable: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"option": self.option, "acceptable": list(self.acceptable)}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Stance:
        return Stance(d.get("option"), tuple(dict.fromkeys(d.get("acceptable") or ())))


@dataclass(slots=True)
class Action:
    """One party turn: what it thinks (private), says, stands for per topic, and signals."""

    utterance: str
    stances: dict[str, Stance]
    signal: Signal = Signal.CONTINUE
    thought: str = ""
    tone: Tone = "neutral"
    verdict: Verdict | None = None  # only on closure turns of the staged protocol
    # Amounts proposed for the scenario's numeric terms (term id -> value), and the
    # written clauses of a proposal, for price and settlement negotiations.
    offer: dict[str, float] = field(default_factory=dict)
    clauses: tuple[str, ...] = ()
    # The speaker's strategy when it spoke, (assertiveness, cooperativeness) on 0-10,
    # where the protocol records it (the staged protocol, under an adaptive or drawn one).
    strategy: tuple[float, float] | None = None

    def package(self) -> dict[str, str | None]:
        return {t: s.option for t, s in self.stances.items()}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "thought": self.thought,
            "utterance": self.utterance,
            "stances": {t: s.to_dict() for t, s in self.stances.items()},
            "signal": self.signal.value,
            "tone": self.tone,
        }
        if self.verdict is not None:
            out["verdict"] = self.verdict.to_dict()
        if self.offer:
            out["offer"] = self.offer
        if self.clauses:
            out["clauses"] = list(self.clauses)
        if self.strategy is not None:
            out["strategy"] = list(self.strategy)
        return out

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Action:
        return Action(
            utterance=d["utterance"],
            stances={t: Stance.from_dict(s) for t, s in d.get("stances", {}).items()},
            signal=Signal(d.get("signal", "continue")),
            thought=d.get("thought", ""),
            tone=d.get("tone", "neutral"),
            verdict=Verdict.from_dict(d["verdict"]) if d.get("verdict") else None,
            offer={k: float(v) for k, v in (d.get("offer") or {}).items()},
            clauses=tuple(d.get("clauses") or ()),
            strategy=_point(d.get("strategy")),
        )


def _point(raw: Any) -> tuple[float, float] | None:
    if raw is None:
        return None
    a, c = raw
    return (float(a), float(c))


@dataclass(frozen=True, slots=True)
class Intervention:
    """A mediator's contribution: what it says and, optionally, a package it proposes.

    In the staged protocol the option-generation and closure proposals also carry the
    mediator's points of contention and the legal bases it cites, which the solution
    evaluator scores against the case's gold ones.
    """

    utterance: str
    proposal: dict[str, str] = field(default_factory=dict)
    thought: str = ""
    points: str = ""
    bases: tuple[str, ...] = ()
    offer: dict[str, float] = field(default_factory=dict)  # amounts for numeric terms

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "thought": self.thought,
            "utterance": self.utterance,
            "proposal": self.proposal,
        }
        if self.points or self.bases:
            out["points"] = self.points
            out["bases"] = list(self.bases)
        if self.offer:
            out["offer"] = self.offer
        return out

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Intervention:
        return Intervention(
            d["utterance"],
            dict(d.get("proposal") or {}),
            d.get("thought", ""),
            d.get("points", ""),
            tuple(d.get("bases") or ()),
            {k: float(v) for k, v in (d.get("offer") or {}).items()},
        )


@dataclass(slots=True)
class Usage:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Thought:
    """A party's private candidate thought under motivated turn-taking.

    `rating` is the intrinsic motivation to voice it (1-5) after the silence boost, `raw`
    the rating before it; `stimuli` name what prompted it (`CON#<turn>` for an utterance,
    `MEM#<n>` for a memory, `THO#<id>` for an earlier thought).
    """

    id: str
    party: str
    text: str
    rating: float
    raw: float
    reason: str = ""
    stimuli: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "party": self.party,
            "text": self.text,
            "rating": self.rating,
            "raw": self.raw,
            "reason": self.reason,
            "stimuli": list(self.stimuli),
        }

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Thought:
        return Thought(
            d["id"],
            d["party"],
            d["text"],
            float(d["rating"]),
            float(d.get("raw", d["rating"])),
            d.get("reason", ""),
            tuple(d.get("stimuli") or ()),
        )


SelectionRule = Literal["predicted", "self-selected", "interrupted", "fallback"]


@dataclass(slots=True)
class TurnChoice:
    """How a party turn's speaker was chosen under motivated turn-taking.

    `thoughts` holds every party's new thoughts of that round (private: they never reach
    another agent's view); `selected` the motivation of each party that selected a thought;
    `rule` says why the speaker won; `calls` the model calls the round's thinking took.
    """

    predicted: str  # a party id, or "anyone"
    rule: SelectionRule
    motivation: float  # the spoken thought's rating
    thought_id: str
    thoughts: dict[str, list[Thought]] = field(default_factory=dict)
    selected: dict[str, float] = field(default_factory=dict)
    calls: int = 0

    @property
    def interrupted(self) -> bool:
        return self.rule == "interrupted"

    def to_dict(self) -> dict[str, Any]:
        return {
            "predicted": self.predicted,
            "rule": self.rule,
            "motivation": self.motivation,
            "thought_id": self.thought_id,
            "thoughts": {p: [t.to_dict() for t in ts] for p, ts in self.thoughts.items()},
            "selected": self.selected,
            "calls": self.calls,
        }

    @staticmethod
    def from_dict(d: dict[str, Any]) -> TurnChoice:
        return TurnChoice(
            d["predicted"],
            d["rule"],
            float(d["motivation"]),
            d.get("thought_id", ""),
            {p: [Thought.from_dict(t) for t in ts] for p, ts in (d.get("thoughts") or {}).items()},
            {p: float(v) for p, v in (d.get("selected") or {}).items()},
            int(d.get("calls", 0)),
        )


@dataclass(slots=True)
class Turn:
    """One entry of the dialogue.

    `index` counts every turn; `party_turn` counts party turns completed once this turn is
    done, which is the clock the SoCRATES metrics run on. `consensus` is the oracle's
    per-topic consensus after this turn, when the parties' hidden states are known.
    """

    index: int
    party_turn: int
    speaker: str
    role: Role
    text: str
    action: Action | None = None
    intervention: Intervention | None = None
    consensus: dict[str, float] | None = None
    latency_s: float = 0.0
    usage: Usage | None = None
    stage: str = ""  # the staged protocol's stage; empty for single-stage protocols
    # What each listener received, for listeners who heard something other than `text`.
    delivered: dict[str, str] | None = None
    # How this party turn's speaker was chosen, under motivated turn-taking only.
    choice: TurnChoice | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "index": self.index,
            "party_turn": self.party_turn,
            "speaker": self.speaker,
            "role": self.role,
            "text": self.text,
            "action": self.action.to_dict() if self.action else None,
            "intervention": self.intervention.to_dict() if self.intervention else None,
            "consensus": self.consensus,
            "latency_s": self.latency_s,
            "usage": self.usage.to_dict() if self.usage else None,
            "stage": self.stage,
        }
        if self.delivered:
            out["delivered"] = self.delivered
        if self.choice is not None:
            out["turn_taking"] = self.choice.to_dict()
        return out

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Turn:
        return Turn(
            index=d["index"],
            party_turn=d["party_turn"],
            speaker=d["speaker"],
            role=d["role"],
            text=d["text"],
            action=Action.from_dict(d["action"]) if d.get("action") else None,
            intervention=Intervention.from_dict(d["intervention"])
            if d.get("intervention")
            else None,
            consensus=d.get("consensus"),
            latency_s=d.get("latency_s", 0.0),
            usage=Usage(**d["usage"]) if d.get("usage") else None,
            stage=d.get("stage") or "",
            delivered=d.get("delivered") or None,
            choice=TurnChoice.from_dict(d["turn_taking"]) if d.get("turn_taking") else None,
        )


@dataclass(slots=True)
class Outcome:
    status: Status
    stop_reason: str
    agreement: dict[str, str | None] = field(default_factory=dict)
    # The agreed value of each numeric term (a price, a settlement amount); a term the
    # parties settled without a readable amount is absent, never a guessed value.
    amounts: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status.value,
            "stop_reason": self.stop_reason,
            "agreement": self.agreement,
        }
        if self.amounts:
            out["amounts"] = self.amounts
        return out


@dataclass(slots=True)
class Episode:
    """A whole simulated dialogue and everything needed to score it again later."""

    scenario_id: str
    protocol: str
    seed: int
    agents: dict[str, str]
    condition: str = "general"
    turns: list[Turn] = field(default_factory=list)
    outcome: Outcome | None = None
    initial_consensus: dict[str, float] | None = None
    wall_time_s: float = 0.0
    usage: dict[str, Usage] = field(default_factory=dict)  # model usage per role

    @property
    def party_turns(self) -> int:
        return self.turns[-1].party_turn if self.turns else 0

    def intervention_positions(self) -> list[int]:
        """Party turns completed before each mediator intervention."""
        return [t.party_turn for t in self.turns if t.role == "mediator"]
