"""The staged protocol (AgentMediation): five stages of court-annexed mediation.

1. preliminary: the case brief is put before everyone (a system turn);
2. statement: the mediator opens, then every party states its position once;
3. option: the mediator proposes points of contention, legal bases and a solution;
4. bargaining: up to `rounds` rounds, mediator first, then every party in order;
5. closure: the mediator's final proposal, then each party's verdict (accept, uncertain
   or reject) and satisfaction, all given at once: none hears another's verdict first.

Bargaining stops early on agreement (every party signals consensus after a round) or on
confirmed disagreement (a party walks away, or no party moves for 30% of the rounds, and
for at least two). The paper describes this early stop; its released code always ran
every round.

Rule parties concede over the session's party turns: by the close an unprovoked party is
down to its fallback, so its verdict turns on whether the final proposal beats going to
court. A resentful party concedes more slowly and still holds out at closure; that, and
walk-aways, is where the strategies differ.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from contextlib import nullcontext
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Literal, cast

from pydantic import Field, field_validator

from disputelab.agents.base import (
    Agent,
    GivesVerdict,
    PartyAgent,
    StagedMediator,
    TurnContext,
)
from disputelab.agents.registry import PARTY
from disputelab.agents.settings import ExpertiseUse, VerdictCalls
from disputelab.episode import Action, Episode, Intervention, Outcome, Signal, Status, Turn
from disputelab.humans import HumanSeat
from disputelab.llm.concurrency import each, sequential
from disputelab.protocols.agent_params import AgentParams
from disputelab.protocols.base import (
    DisputeProtocol,
    ProtocolParams,
    ReportLayout,
    Seat,
    protocol,
)
from disputelab.protocols.session import Session
from disputelab.protocols.staged.agents import STAGED_MEDIATOR
from disputelab.protocols.staged.strategies import StrategyRecord, strategy_notes
from disputelab.protocols.view import EpisodeView, TurnView, add_to, default_view
from disputelab.scenario.behaviour import Behaviour

if TYPE_CHECKING:
    from disputelab.store.sqlite import Store

DEFAULT_ROUNDS = 5
STAGES = ("preliminary", "statement", "option", "bargaining", "closure")


class StagedParams(AgentParams):
    rounds: int = Field(default=DEFAULT_ROUNDS, le=100, description="Bargaining rounds.")
    without_stage: Literal["none", "statement", "option", "closure"] = Field(
        default="none",
        description="Ablate one stage (AgentMediation Table 13): statement (no opening or "
        "statements), option (no initial proposal) or closure (the parties give their "
        "verdicts on the initial proposal; no final one).",
    )
    verdict_calls: VerdictCalls = Field(
        default="one",
        description="An LLM party's closing verdict in one call (decision and satisfaction) "
        "or two (acceptance, then satisfaction, each with its anchors, as in AgentMediation).",
    )
    party_reflection: bool = Field(
        default=False,
        description="After each statement and bargaining turn an LLM party checks its line "
        "for objective faults (revising the words if needed, at most 3 checks) and notes in "
        "one sentence the terms it now stands on, which its next prompt shows "
        "(AgentMediation's party).",
    )
    expertise_use: ExpertiseUse = Field(
        default="prompt",
        description="What the expertise condition does with the retrieved legal bases: "
        "prompt (the mediator reads them before it proposes) or append (it proposes without "
        "them, and they are added to each proposal's bases afterwards, as AgentMediation's "
        "evaluation computed Table 7's w/ EK recall).",
    )

    @field_validator("rounds")
    @classmethod
    def _not_negative(cls, v: int) -> int:
        if v < 0:
            raise ValueError(f"bargaining rounds must be 0 or more, got {v}")
        return v


@protocol
class Staged(DisputeProtocol):
    """Preliminary, statements, option generation, bargaining rounds, closure."""

    name = "staged"
    summary = "a mediator leads five stages of legal mediation, ending in verdicts"
    turn_budget = "rounds"
    turn_budget_unit = "bargaining rounds"
    Params = StagedParams
    heard_as = MappingProxyType({"mediator": "mediator"})  # the mediator's seat hears as one
    seats = (
        Seat("parties", PARTY, per_party=True),
        Seat("mediator", STAGED_MEDIATOR, default="rule", default_with_model="llm"),
    )
    evaluators = ("agentmediation",)
    judged_evaluators = ("legal-judges",)
    report: ClassVar[ReportLayout] = ReportLayout(
        "metrics (AgentMediation)",
        effect_metrics=(
            "agentmediation:success",
            "agentmediation:satisfaction",
            "agentmediation:consensus",
            "agentmediation:litigation_risk",
        ),
        binary_metrics=("agentmediation:success",),
    )
    uses_retrieval = True
    keeps_silent_stances = True

    async def play(
        self, session: Session, seated: Mapping[str, Agent | None], params: ProtocolParams
    ) -> Outcome:
        assert isinstance(params, StagedParams)
        mediator = seated.get("mediator")
        if mediator is None:
            raise ValueError("the staged protocol needs a mediator; choose rule or an LLM one")
        assert isinstance(mediator, StagedMediator)
        rate = Behaviour.of(params.behaviour)["adaptive.rate"]
        stages = _Stages(session, mediator, params.rounds, params.without_stage)
        if params.party_style != "general":  # general parties have no strategy to move
            stages.strategies = StrategyRecord.of(session.scenario, rate)
        return await stages.play()

    def experiment_tables(self, store: Store, run_id: str, config: Mapping[str, Any]) -> str:
        from disputelab.protocols.staged.tables import staged_markdown

        return staged_markdown(store, run_id, dict(config))

    def max_calls(self, params: ProtocolParams, n_parties: int) -> dict[str, int]:
        assert isinstance(params, StagedParams)
        # Statements, one turn per bargaining round and a verdict; the mediator opens,
        # proposes, guides each round and closes.
        verdict = 2 if params.verdict_calls == "two" else 1
        # Under party_reflection each turn adds up to 3 checks and a terms note, asked
        # again when a check revised the line.
        per_turn = 1 + (5 if params.party_reflection else 0)
        return {
            "parties": n_parties * ((params.rounds + 1) * per_turn + verdict),
            "mediator": params.rounds + 3,
        }

    def details(self, episode: Episode) -> list[tuple[str, str]]:
        """The mediator's proposals: points of contention and legal bases cited."""
        lines: list[tuple[str, str]] = []
        for t in episode.turns:
            if t.intervention is not None and t.stage in ("option", "closure"):
                m = t.intervention
                lines.append((f"{t.stage} proposal", m.utterance))
                if m.points:
                    lines.append(("  points", m.points))
                lines.append(("  bases cited", ", ".join(m.bases) or "-"))
        return lines

    def episode_view(self, episode: Episode) -> EpisodeView:
        # The proposals' points and bases stand under their own turns, so the panels
        # `details` would add say nothing new.
        return default_view(episode, (), _proposal_and_verdict)


def _proposal_and_verdict(turn: Turn, view: TurnView) -> TurnView:
    """A staged turn's view adds the points of contention and legal bases a proposal
    names, and a party's verdict at closure."""
    notes: list[tuple[str, str]] = []
    move = turn.intervention
    if move is not None and (move.points or move.bases):
        if move.points:
            notes.append(("points of contention", move.points))
        notes.append(("legal bases cited", ", ".join(move.bases) or "-"))
    notes += strategy_notes(turn)
    verdict = turn.action.verdict if turn.action is not None else None
    if verdict is not None:
        reason = f": {verdict.reason}" if verdict.reason else ""
        notes.append(
            ("verdict", f"{verdict.decision}, satisfaction {verdict.satisfaction}{reason}")
        )
    return add_to(view, notes=notes)


class _Stages:
    """One staged session's course through its stages."""

    def __init__(
        self, session: Session, mediator: StagedMediator, rounds: int, without: str = "none"
    ) -> None:
        self.s = session
        self.mediator = mediator
        self.rounds = rounds
        self.without = without  # the stage ablated, or "none"
        # Confirmed disagreement needs a stall long relative to the session: parties that
        # concede over many rounds may hold a position for several of them and still move.
        self.patience = max(2, math.ceil(0.3 * rounds))
        self.budget = max(1, session.n * (rounds + 1))
        self.strategies: StrategyRecord | None = None  # recorded and moved, where they are

    def ctx(self) -> TurnContext:
        return TurnContext(self.s.party_turn, self.budget, self.s.n)

    async def speak(self, stage: str, move: Intervention, t0: float) -> Intervention:
        self.s.seat_spoke("mediator", self.mediator, move, time.perf_counter() - t0, stage)
        return move

    async def party_round(self, stage: str) -> str | None:
        """Every party speaks once; returns why talks broke down, if they did."""
        for agent in self.s.parties:
            t0 = time.perf_counter()
            action = await agent.act(self.s.view(agent.party_id), self.ctx())
            if self.strategies is not None:
                action = self.strategies.stamp(agent.party_id, action)
            self.s.party_spoke(agent, action, time.perf_counter() - t0, stage)
            if action.signal is Signal.WALK_AWAY:
                return f"{agent.party_id} walked away at party turn {self.s.party_turn}"
        return None

    async def play(self) -> Outcome:
        sc = self.s.scenario
        brief = sc.legal.brief if sc.legal is not None and sc.legal.brief else sc.background
        self.s.system(brief, "preliminary")
        view = self.s.view("mediator")

        broke = None
        if self.without != "statement":
            t0 = time.perf_counter()
            await self.speak("statement", await self.mediator.open(view, self.ctx()), t0)
            broke = await self.party_round("statement")

        stop, first = "", None
        if broke is None:
            if self.without != "option":
                t0 = time.perf_counter()
                move = await self.mediator.propose(self.s.view("mediator"), self.ctx(), False)
                first = await self.speak("option", move, t0)
            stop, broke = await self.bargain()
        if broke is not None:
            stop = f"disagreement confirmed: {broke}"
        if self.without == "closure" and first is not None:
            final = first  # the parties judge the initial proposal; no final one is made
        else:
            t0 = time.perf_counter()
            view = self.s.view("mediator")
            final = await self.speak(
                "closure", await self.mediator.propose(view, self.ctx(), True), t0
            )
        verdicts = await self.collect_verdicts(final)
        return self.outcome(final, verdicts, stop)

    async def bargain(self) -> tuple[str, str | None]:
        """Bargaining rounds; returns (how bargaining ended, breakdown reason or None)."""
        still = 0
        for r in range(1, self.rounds + 1):
            before = {pid: dict(st) for pid, st in self.s.stated.items()}
            t0 = time.perf_counter()
            move = await self.mediator.guide(self.s.view("mediator"), self.ctx())
            await self.speak("bargaining", move, t0)
            start = len(self.s.episode.turns)
            broke = await self.party_round("bargaining")
            if broke is not None:
                return "", f"{broke} (round {r})"
            if self.strategies is not None:
                self.strategies.adapt(self.s.episode.turns[start:], before, self.s.parties)
            if self.s.all_signalled_consensus():
                return f"agreement reached in bargaining round {r}", None
            still = still + 1 if self.s.stated == before else 0
            if still >= self.patience:
                return "", f"no party moved for {still} rounds (round {r})"
        return f"bargaining ran all {self.rounds} rounds", None

    async def collect_verdicts(self, final: Intervention) -> dict[str, Action]:
        """Every party's verdict on `final`, as a ballot: each has heard the talks up to
        the final proposal and none hears another's verdict before giving its own, so
        the verdicts are independent calls and go out together."""
        for agent in self.s.parties:
            if not isinstance(agent, GivesVerdict):
                raise TypeError(f"party {agent.party_id} cannot give a verdict at closure")
        ctx = self.ctx()

        async def vote(agent: PartyAgent) -> tuple[Action, float]:
            t0 = time.perf_counter()
            seat = cast(GivesVerdict, agent)  # checked above
            action = await seat.verdict(self.s.view(agent.party_id), final.proposal, ctx)
            return action, time.perf_counter() - t0

        # People answer one at a time: a terminal asks one question at once, and a resumed
        # table replays their answers in the order they were asked for.
        people = any(isinstance(agent, HumanSeat) for agent in self.s.parties)
        with sequential() if people else nullcontext():
            votes = await each(vote, self.s.parties)
        verdicts: dict[str, Action] = {}
        for agent, (action, latency) in zip(self.s.parties, votes, strict=True):
            if action.verdict is None:
                raise ValueError(f"party {agent.party_id} gave no verdict at closure")
            self.s.party_spoke(agent, action, latency, "closure")
            verdicts[agent.party_id] = action
        return verdicts

    def outcome(self, final: Intervention, verdicts: dict[str, Action], stop: str) -> Outcome:
        n = self.s.n
        decisions = {pid: a.verdict.decision for pid, a in verdicts.items() if a.verdict}
        accepted = [pid for pid, d in decisions.items() if d == "accept"]
        tally = ", ".join(f"{pid} {d}" for pid, d in decisions.items())
        prefix = f"{stop}; " if stop else ""
        if len(accepted) == n:
            return Outcome(
                Status.RESOLVED,
                f"{prefix}all {n} parties accepted the final proposal",
                {t: final.proposal.get(t) for t in self.s.topic_ids},
            )
        return Outcome(
            Status.IMPASSE,
            f"{prefix}{len(accepted)} of {n} parties accepted the final proposal ({tally})",
            self.s.common_ground(),
        )
