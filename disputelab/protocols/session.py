"""One episode while a protocol plays it: the bookkeeping every protocol shares.

A protocol decides who speaks and when to stop; the session does the rest. It checks the
agents against the scenario, keeps the oracle's consensus when every party's hidden
state is known, records each turn and hands it to the sink (the store), keeps what each
listener has heard, counts party turns, and charges model usage to the seat that spent it.

Delivery is per listener: `record(turn, delivered={listener: text})` lets a protocol
change what one listener hears (a remediator rewriting an utterance) while the turn keeps
what was said. Until some turn differs, every listener shares one view. A private turn
(`confide`: a party's caucus with the mediator) reaches only the listeners named, and is
recorded like any other turn, as a system turn spoken by the party. A seat that `Hears`
(a person's) is told its own view after every turn: a party under its id, any other seat
under the listener name its protocol gives it (`listen`).

`fork()` copies the session and its agents so that a planner can roll the negotiation
forward and come back: models, scenarios and the store sink are shared, everything that
moves is copied, and the fork writes nothing to the store.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from disputelab.agents.base import (
    Agent,
    Hears,
    HiddenState,
    PartyAgent,
    PublicScenario,
    PublicTurn,
)
from disputelab.agents.registry import sub_role
from disputelab.consensus import consensus_by_topic, topic_consensus
from disputelab.episode import (
    Action,
    Episode,
    Intervention,
    Outcome,
    Role,
    Signal,
    Stance,
    Turn,
    TurnChoice,
    Usage,
)
from disputelab.llm.base import ChatModel
from disputelab.scenario.schema import Scenario

TurnSink = Callable[[Turn], None]
MEDIATOR = "mediator"  # the listener name of a mediator's view


def common_ground(
    topic_ids: Sequence[str], stated: Mapping[str, Mapping[str, Stance]]
) -> dict[str, str | None]:
    """Per topic, the option every party last backed, or None where they differ."""
    out: dict[str, str | None] = {}
    for t in topic_ids:
        options = {s[t].option if t in s else None for s in stated.values()}
        out[t] = options.pop() if len(options) == 1 else None
    return out


def update_consensus(
    previous: dict[str, float] | None,
    topic_ids: Sequence[str],
    hidden: dict[str, dict[str, Stance]],
    speaker: str,
    new: dict[str, Stance],
) -> dict[str, float]:
    """Oracle consensus after `speaker` moved, recomputing only the topics it changed.
    When nothing moved it is `previous` itself: turns share it (none changes it), and the
    store writes a shared one once."""
    old = hidden.get(speaker, {})
    hidden[speaker] = new
    if previous is None:
        return consensus_by_topic(topic_ids, list(hidden.values()))
    if old == new:  # most turns restate the same hidden position: nothing moved
        return previous
    out = dict(previous)
    everyone = list(hidden.values())
    for t in topic_ids:
        if old.get(t) != new.get(t):
            out[t] = topic_consensus([s.get(t) for s in everyone])
    return out


class Session:
    """The state of one episode while it is played."""

    def __init__(
        self,
        scenario: Scenario,
        parties: Sequence[PartyAgent],
        episode: Episode,
        on_turn: TurnSink | None = None,
        keep_stances_when_silent: bool = False,
    ) -> None:
        order = [p.party_id for p in parties]
        expected = [p.id for p in scenario.parties]
        if sorted(order) != sorted(expected):
            raise ValueError(f"agents {order} do not match the scenario's parties {expected}")
        self.scenario = scenario
        self.parties = list(parties)
        self.episode = episode
        self.on_turn = on_turn
        # A party turn that states no stance keeps the party's earlier ones (staged) or
        # clears them (roundtable, where every turn restates the whole position).
        self.keep_stances_when_silent = keep_stances_when_silent
        self.n = len(parties)
        self.topic_ids = [t.id for t in scenario.topics]
        self.sources: dict[str, HiddenState] = {
            p.party_id: p for p in parties if isinstance(p, HiddenState)
        }
        self.oracle = len(self.sources) == self.n
        self.hidden: dict[str, dict[str, Stance]] = {}
        if self.oracle:
            self.hidden = {pid: s.hidden_stances() for pid, s in self.sources.items()}
            episode.initial_consensus = consensus_by_topic(
                self.topic_ids, list(self.hidden.values())
            )
        self.consensus: dict[str, float] | None = episode.initial_consensus
        self.public: list[PublicTurn] = []
        self._views: dict[str, list[PublicTurn]] = {}  # listeners whose view differs
        # Seats told their view after every turn (listener -> the seat): people's.
        self.hearers: dict[str, Hears] = {}
        for p in parties:
            if isinstance(p, Hears):
                self.listen(p.party_id, p)
        self.party_turn = 0
        self.signals: dict[str, Signal] = {}
        self.stated: dict[str, dict[str, Stance]] = {}
        self.started = time.perf_counter()
        # The run store's directory when the episode is played into one (None in memory):
        # where a protocol keeps what outlives an episode (a settlement counsel's memory).
        self.store_dir: Path | None = None

    # ---- what each listener hears ----------------------------------------------------
    def view(self, listener: str) -> Sequence[PublicTurn]:
        """The dialogue as `listener` has heard it."""
        return self._views.get(listener, self.public) if self._views else self.public

    def listen(self, listener: str, seat: Hears) -> None:
        """Tell `seat` the view of `listener` now and after every turn from here on."""
        self.hearers[listener] = seat
        seat.hear(self.view(listener))

    def _told(self) -> None:
        for listener, seat in self.hearers.items():
            seat.hear(self.view(listener))

    def deliver(self, turn: Turn, listener: str) -> PublicTurn:
        """What `listener` receives of `turn`: the turn itself unless its delivery says
        otherwise."""
        public = PublicTurn.of(turn)
        if turn.delivered and listener in turn.delivered:
            return public._replace(text=turn.delivered[listener])
        return public

    def record(
        self,
        turn: Turn,
        delivered: Mapping[str, str] | None = None,
        audience: Sequence[str] | None = None,
    ) -> Turn:
        """Append `turn`, deliver it to every listener (only to `audience` when given) and
        hand it to the sink."""
        if audience is not None:
            return self._record_private(turn, audience)
        if delivered:
            turn.delivered = dict(delivered)
            for listener in delivered:  # any listener: a party, "mediator", or any seat
                if listener not in self._views:
                    self._views[listener] = list(self.public)
        self.episode.turns.append(turn)
        shared = PublicTurn.of(turn)
        self.public.append(shared)
        for listener, view in self._views.items():
            view.append(self.deliver(turn, listener) if delivered else shared)
        if self.on_turn is not None:
            self.on_turn(turn)
        if self.hearers:
            self._told()
        return turn

    def _record_private(self, turn: Turn, audience: Sequence[str]) -> Turn:
        """Append `turn` to the episode and to the views of `audience` only."""
        for listener in audience:
            if listener not in self._views:
                self._views[listener] = list(self.public)
        self.episode.turns.append(turn)
        heard = PublicTurn.of(turn)
        for listener in audience:
            self._views[listener].append(heard)
        if self.on_turn is not None:
            self.on_turn(turn)
        if self.hearers:
            self._told()
        return turn

    # ---- turns -------------------------------------------------------------------------
    def party_spoke(
        self,
        agent: PartyAgent,
        action: Action,
        latency: float,
        stage: str = "",
        delivered: Mapping[str, str] | None = None,
        choice: TurnChoice | None = None,
    ) -> Turn:
        """Record a party's turn, move the oracle and the party-turn clock, charge usage.
        `choice` says how the speaker was chosen, under motivated turn-taking."""
        self.party_turn += 1
        pid = agent.party_id
        if self.oracle:
            self.consensus = update_consensus(
                self.consensus, self.topic_ids, self.hidden, pid, self.sources[pid].hidden_stances()
            )
        usage = agent.take_usage()
        turn = self._turn(pid, "party", action.utterance, latency, usage, stage, action=action)
        turn.choice = choice
        self.record(turn, delivered)
        if usage is not None:  # rule agents report none: skip the call on the hot path
            self.charge("parties", usage)
        self.signals[pid] = action.signal
        if action.stances or not self.keep_stances_when_silent:
            self.stated[pid] = action.stances
        return turn

    def seat_spoke(
        self,
        role: str,
        agent: Agent,
        move: Intervention | None,
        latency: float,
        stage: str = "",
        speaker: str = MEDIATOR,
        turn_role: Role = "mediator",
    ) -> Turn | None:
        """Record a non-party seat's move (if it made one) and charge its usage to `role`."""
        usage = agent.take_usage()
        turn = None
        if move is not None:
            turn = self.record(
                self._turn(speaker, turn_role, move.utterance, latency, usage, stage, move=move)
            )
        if usage is not None:
            self.charge(role, usage)
        # Calls with a model of their own (the mediator's when-call) go to `ROLE.CALL`.
        for call, used in getattr(agent, "take_call_usage", dict)().items():
            self.charge(sub_role(role, call), used)
        return turn

    def confide(
        self, party: str, action: Action, audience: Sequence[str], stage: str = "caucus"
    ) -> Turn:
        """Record what `party` says in private to `audience` (itself and the mediator): a
        system turn spoken by the party, marked by `stage`, which moves no clock and no
        stated stance, and which no other listener hears."""
        turn = self._turn(party, "system", action.utterance, 0.0, None, stage, action=action)
        return self.record(turn, audience=audience)

    def system(self, text: str, stage: str = "") -> Turn:
        return self.record(self._turn("system", "system", text, 0.0, None, stage))

    def _turn(
        self,
        speaker: str,
        role: Role,
        text: str,
        latency: float,
        usage: Usage | None,
        stage: str,
        action: Action | None = None,
        move: Intervention | None = None,
    ) -> Turn:
        """The next turn of the episode, stamped with the clock and the oracle's view."""
        # Positional: every turn of every episode is made here (fields in Turn's order).
        return Turn(
            len(self.episode.turns),
            self.party_turn,
            speaker,
            role,
            text,
            action,
            move,
            self.consensus,
            latency,
            usage,
            stage,
        )

    def charge(self, role: str, usage: Usage | None) -> None:
        """Add one call's usage to the episode's total for `role` (any string)."""
        if usage is None:
            return
        total = self.episode.usage.setdefault(role, Usage(cost_usd=None))
        total.calls += usage.calls
        total.input_tokens += usage.input_tokens
        total.output_tokens += usage.output_tokens

    # ---- state the protocols read ----------------------------------------------------
    def all_signalled_consensus(self) -> bool:
        return len(self.signals) == self.n and all(
            s is Signal.CONSENSUS for s in self.signals.values()
        )

    def common_ground(self) -> dict[str, str | None]:
        return common_ground(self.topic_ids, self.stated)

    def finish(self, outcome: Outcome) -> Episode:
        self.episode.outcome = outcome
        self.episode.wall_time_s = time.perf_counter() - self.started
        return self.episode

    # ---- look-ahead ----------------------------------------------------------------------
    def fork(self, extra_agents: Sequence[object] = ()) -> tuple[Session, dict[int, Any]]:
        """A copy to roll forward without touching this one or the store.

        Returns the fork and the copy map (`id(original) -> copy`), so the caller can find
        its copies of `extra_agents` (a mediator, say) with `memo[id(agent)]`.
        """
        memo: dict[int, Any] = {}
        for shared in self._shared(extra_agents):
            memo[id(shared)] = shared
        # A fork is a planner's look-ahead: it writes nothing and tells no person anything.
        sink, self.on_turn = self.on_turn, None
        hearers, self.hearers = self.hearers, {}
        try:
            forked = copy.deepcopy(self, memo)
            for agent in extra_agents:
                copy.deepcopy(agent, memo)
        finally:
            self.on_turn, self.hearers = sink, hearers
        return forked, memo

    def _shared(self, extra_agents: Sequence[object]) -> list[object]:
        """What a fork shares rather than copies: the scenario, the (immutable) public
        turns heard so far, and each agent's scenario, public view and models."""
        out: list[object] = [self.scenario, *self.public]
        for view in self._views.values():
            out += view
        for agent in [*self.parties, *extra_agents]:
            attrs = getattr(agent, "__dict__", {})
            out += [
                v for v in attrs.values() if isinstance(v, Scenario | PublicScenario | ChatModel)
            ]
        return out
