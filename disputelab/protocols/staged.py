"""The staged protocol (AgentMediation): five stages of court-annexed mediation.

1. preliminary: the case brief is put before everyone (a system turn);
2. statement: the mediator opens, then every party states its position once;
3. option: the mediator proposes points of contention, legal bases and a solution;
4. bargaining: up to `rounds` rounds, mediator first, then every party in order;
5. closure: the mediator's final proposal, then each party's verdict (accept, uncertain
   or reject) and satisfaction.

Bargaining stops early on agreement (every party signals consensus after a round) or on
confirmed disagreement (a party walks away, or no party moves for 30% of the rounds, and
for at least two).
The paper describes this early stop; its released code always ran every round.

Rule parties concede over `horizon` times the session's party turns (default 1: by the
close an unprovoked party is down to its fallback, so its verdict turns on whether the
final proposal beats going to court). A resentful party concedes more slowly and still
holds out at closure; that, and walk-aways, is where the strategies differ. A larger
horizon models parties who expect the talks to continue after this session.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

from disputelab.agents.base import (
    Deliberates,
    HiddenState,
    PartyAgent,
    PublicTurn,
    StagedMediator,
    TurnContext,
)
from disputelab.consensus import consensus_by_topic
from disputelab.episode import (
    Action,
    Episode,
    Intervention,
    Outcome,
    Signal,
    Stance,
    Status,
    Turn,
)
from disputelab.protocols.common import agreement, charge, update_consensus
from disputelab.scenario.schema import Scenario

DEFAULT_ROUNDS = 5
DEFAULT_HORIZON = 1.0
STAGES = ("preliminary", "statement", "option", "bargaining", "closure")

TurnSink = Callable[[Turn], None]


class Staged:
    """Preliminary, statements, option generation, bargaining rounds, closure."""

    name = "staged"

    def __init__(self, rounds: int = DEFAULT_ROUNDS, horizon: float = DEFAULT_HORIZON) -> None:
        if rounds < 0:
            raise ValueError(f"bargaining rounds must be 0 or more, got {rounds}")
        if horizon < 1.0:
            raise ValueError(f"concession horizon must be at least 1, got {horizon}")
        self.rounds = rounds
        self.horizon = horizon

    async def run(
        self,
        scenario: Scenario,
        parties: Sequence[PartyAgent],
        mediator: StagedMediator | None,
        episode: Episode,
        on_turn: TurnSink | None = None,
    ) -> Episode:
        """Play one episode into `episode`, handing every finished turn to `on_turn`."""
        if mediator is None:
            raise ValueError("the staged protocol needs a mediator; choose rule or an LLM one")
        order = [p.party_id for p in parties]
        expected = [p.id for p in scenario.parties]
        if sorted(order) != sorted(expected):
            raise ValueError(f"agents {order} do not match the scenario's parties {expected}")
        return await _Session(self, scenario, parties, mediator, episode, on_turn).play()


class _Session:
    """The state of one staged episode while it is played."""

    def __init__(
        self,
        protocol: Staged,
        scenario: Scenario,
        parties: Sequence[PartyAgent],
        mediator: StagedMediator,
        episode: Episode,
        on_turn: TurnSink | None,
    ) -> None:
        self.scenario = scenario
        self.parties = parties
        self.mediator = mediator
        self.episode = episode
        self.on_turn = on_turn
        self.rounds = protocol.rounds
        # Confirmed disagreement needs a stall long relative to the session: parties that
        # concede over many rounds may hold a position for several of them and still move.
        self.patience = max(2, math.ceil(0.3 * protocol.rounds))
        n = len(parties)
        self.n = n
        self.budget = max(1, round(protocol.horizon * n * (protocol.rounds + 1)))
        self.topic_ids = [t.id for t in scenario.topics]
        self.sources: dict[str, HiddenState] = {
            p.party_id: p for p in parties if isinstance(p, HiddenState)
        }
        self.oracle = len(self.sources) == n
        self.hidden: dict[str, dict[str, Stance]] = {}
        if self.oracle:
            self.hidden = {pid: s.hidden_stances() for pid, s in self.sources.items()}
            episode.initial_consensus = consensus_by_topic(
                self.topic_ids, list(self.hidden.values())
            )
        self.consensus = episode.initial_consensus
        self.public: list[PublicTurn] = []
        self.party_turn = 0
        self.signals: dict[str, Signal] = {}
        self.stated: dict[str, dict[str, Stance]] = {}

    def ctx(self) -> TurnContext:
        return TurnContext(self.party_turn, self.budget, self.n)

    def record(self, turn: Turn) -> None:
        self.episode.turns.append(turn)
        self.public.append(PublicTurn.of(turn))
        if self.on_turn is not None:
            self.on_turn(turn)

    def system(self, text: str, stage: str) -> None:
        self.record(
            Turn(
                len(self.episode.turns),
                self.party_turn,
                "system",
                "system",
                text,
                consensus=self.consensus,
                stage=stage,
            )
        )

    async def speak(self, stage: str, move: Intervention, t0: float) -> Intervention:
        self.record(
            Turn(
                len(self.episode.turns),
                self.party_turn,
                "mediator",
                "mediator",
                move.utterance,
                intervention=move,
                consensus=self.consensus,
                latency_s=time.perf_counter() - t0,
                usage=getattr(self.mediator, "last_usage", None),
                stage=stage,
            )
        )
        charge(self.episode, "mediator", getattr(self.mediator, "last_usage", None))
        return move

    def party_done(self, agent: PartyAgent, action: Action, stage: str, latency: float) -> None:
        self.party_turn += 1
        if self.oracle:
            self.consensus = update_consensus(
                self.consensus,
                self.topic_ids,
                self.hidden,
                agent.party_id,
                self.sources[agent.party_id].hidden_stances(),
            )
        usage = getattr(agent, "last_usage", None)
        self.record(
            Turn(
                len(self.episode.turns),
                self.party_turn,
                agent.party_id,
                "party",
                action.utterance,
                action=action,
                consensus=self.consensus,
                latency_s=latency,
                usage=usage,
                stage=stage,
            )
        )
        charge(self.episode, "parties", usage)
        self.signals[agent.party_id] = action.signal
        if action.stances:
            self.stated[agent.party_id] = action.stances

    async def party_round(self, stage: str) -> str | None:
        """Every party speaks once; returns why talks broke down, if they did."""
        for agent in self.parties:
            t0 = time.perf_counter()
            action = await agent.act(self.public, self.ctx())
            self.party_done(agent, action, stage, time.perf_counter() - t0)
            if action.signal is Signal.WALK_AWAY:
                return f"{agent.party_id} walked away at party turn {self.party_turn}"
        return None

    async def play(self) -> Episode:
        start = time.perf_counter()
        s = self.scenario
        brief = s.legal.brief if s.legal is not None and s.legal.brief else s.background
        self.system(brief, "preliminary")

        t0 = time.perf_counter()
        await self.speak("statement", await self.mediator.open(self.public, self.ctx()), t0)
        broke = await self.party_round("statement")

        stop = ""
        if broke is None:
            t0 = time.perf_counter()
            move = await self.mediator.propose(self.public, self.ctx(), False)
            await self.speak("option", move, t0)
            stop, broke = await self.bargain()
        if broke is not None:
            stop = f"disagreement confirmed: {broke}"

        t0 = time.perf_counter()
        final = await self.speak(
            "closure", await self.mediator.propose(self.public, self.ctx(), True), t0
        )
        verdicts = await self.collect_verdicts(final)
        self.episode.outcome = self.outcome(final, verdicts, stop)
        self.episode.wall_time_s = time.perf_counter() - start
        return self.episode

    async def bargain(self) -> tuple[str, str | None]:
        """Bargaining rounds; returns (how bargaining ended, breakdown reason or None)."""
        still = 0
        for r in range(1, self.rounds + 1):
            before = {pid: dict(st) for pid, st in self.stated.items()}
            t0 = time.perf_counter()
            await self.speak("bargaining", await self.mediator.guide(self.public, self.ctx()), t0)
            broke = await self.party_round("bargaining")
            if broke is not None:
                return "", f"{broke} (round {r})"
            if len(self.signals) == self.n and all(
                x is Signal.CONSENSUS for x in self.signals.values()
            ):
                return f"agreement reached in bargaining round {r}", None
            still = still + 1 if self.stated == before else 0
            if still >= self.patience:
                return "", f"no party moved for {still} rounds (round {r})"
        return f"bargaining ran all {self.rounds} rounds", None

    async def collect_verdicts(self, final: Intervention) -> dict[str, Action]:
        verdicts: dict[str, Action] = {}
        for agent in self.parties:
            if not isinstance(agent, Deliberates):
                raise TypeError(f"party {agent.party_id} cannot give a verdict at closure")
            t0 = time.perf_counter()
            action = await agent.verdict(self.public, final.proposal, self.ctx())
            if action.verdict is None:
                raise ValueError(f"party {agent.party_id} gave no verdict at closure")
            self.party_done(agent, action, "closure", time.perf_counter() - t0)
            verdicts[agent.party_id] = action
        return verdicts

    def outcome(self, final: Intervention, verdicts: dict[str, Action], stop: str) -> Outcome:
        decisions = {pid: a.verdict.decision for pid, a in verdicts.items() if a.verdict}
        accepted = [pid for pid, d in decisions.items() if d == "accept"]
        tally = ", ".join(f"{pid} {d}" for pid, d in decisions.items())
        prefix = f"{stop}; " if stop else ""
        if len(accepted) == self.n:
            return Outcome(
                Status.RESOLVED,
                f"{prefix}all {self.n} parties accepted the final proposal",
                {t: final.proposal.get(t) for t in self.topic_ids},
            )
        return Outcome(
            Status.IMPASSE,
            f"{prefix}{len(accepted)} of {self.n} parties accepted the final proposal ({tally})",
            agreement(self.topic_ids, self.stated),
        )
