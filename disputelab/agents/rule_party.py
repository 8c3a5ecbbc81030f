"""The rule-based party: a transparent negotiator whose hidden state is always known.

Each turn it (1) reads what happened since it last spoke, which can raise or soothe its
resentment, (2) advances along its concession curve, more slowly while resentful, (3)
picks, among packages worth at least its target, the one with the most public support,
and (4) states its stance per topic truthfully. Truthfulness is deliberate: it makes the
party's stated stances equal its hidden ones, so trackers can be checked against truth.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence

import numpy as np

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext
from disputelab.agents.utility import (
    STRATEGY_BETA,
    concession_target,
    culture_beta_factor,
    expressiveness,
    mediator_deference,
    preference_table,
)
from disputelab.agents.voice import Voice
from disputelab.episode import Action, Signal, Stance, Tone
from disputelab.scenario.schema import Party, Scenario

# Resentment above which a party digs in: it backs only its current offer and accepts
# nothing else until it cools down.
DIG_IN = 0.5
# Resentment at which a party gives up on the talks and walks away.
WALK_AWAY = 1.4
# Per-own-turn cooling of resentment.
COOLING = 0.75
# Weight on own utility when ranking candidate packages, per strategy: a competitor
# values its own gain over matching others, an accommodator the reverse.
SELF_WEIGHT = {
    "competing": 3.0,
    "collaborating": 1.0,
    "compromising": 1.0,
    "avoiding": 1.0,
    "accommodating": 0.3,
}


class RuleParty:
    """A deterministic (given its seed) rule-policy negotiator."""

    def __init__(self, scenario: Scenario, party_id: str, seed: int) -> None:
        self.party: Party = scenario.party(party_id)
        self.party_id = party_id
        self.public = PublicScenario.of(scenario)
        self.table = preference_table(scenario, self.party)
        persona = self.party.persona
        self.strategy = persona.strategy
        self.reactivity = persona.reactivity
        self.beta = STRATEGY_BETA[self.strategy] * culture_beta_factor(persona.culture)
        self.deference = mediator_deference(persona.culture)
        self.expressive = expressiveness(persona.culture)
        self.floor = self.party.fallback.utility
        self.rng = random.Random(f"{seed}:{party_id}")
        self.noise = np.random.default_rng(zlib.crc32(f"{seed}:{party_id}".encode()))
        self.voice = Voice(self.public, self.party, self.rng)
        self.progress = 0.0
        self.resentment = 0.0
        self.target = 1.0
        self.seen = 0  # dialogue entries already read
        self.last_seen: dict[tuple[str, str], str] = {}
        self.own_turns = 0
        best = int(np.argmax(np.where(self.table.feasible, self.table.utility, -1.0)))
        self.offer: np.ndarray = self.table.packages[best].copy()
        self._stances = self._stances_for(self.offer, dug_in=False)

    # ---- what the oracle reads -------------------------------------------------------
    def hidden_stances(self) -> dict[str, Stance]:
        return self._stances

    # ---- one turn ----------------------------------------------------------------------
    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        return self.decide(dialogue, ctx)

    def decide(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        others, proposal = self._observe(dialogue)
        own_horizon = max(1, -(-ctx.budget // ctx.n_parties))
        self.resentment *= COOLING
        step = max(0.0, 1.0 - self.resentment) / own_horizon
        self.progress = min(1.0, self.progress + step)
        self.target = concession_target(self.progress, self.beta, self.floor)
        self.own_turns += 1
        dug_in = self.resentment >= DIG_IN
        prev_offer = self.offer

        if self.resentment >= WALK_AWAY:
            return self._finish(Signal.WALK_AWAY, "hostile", prev_offer, dug_in=True, others=others)

        common = _common_package(others, self.table.topic_ids, self.table.option_ids)
        if not dug_in and common is not None and self._worth_it(common):
            self.offer = common
            return self._finish(Signal.CONSENSUS, "warm", prev_offer, dug_in, others)
        if dug_in:
            choice = self.offer
        elif (
            proposal is not None
            and self._worth_it(proposal)
            and self.rng.random() < 0.5 + 0.5 * self.deference
        ):
            choice = proposal
        elif self.strategy == "avoiding" and self.own_turns % 3 != 1 and self._worth_it(self.offer):
            choice = self.offer  # avoiders rarely re-engage; they let the offer stand
        else:
            choice = self._best_supported(others, proposal)
        self.offer = choice
        signal = Signal.CONTINUE
        if common is not None and np.array_equal(choice, common) and not dug_in:
            signal = Signal.CONSENSUS
        return self._finish(signal, self._tone(dug_in), prev_offer, dug_in, others)

    # ---- helpers -----------------------------------------------------------------------
    def _observe(
        self, dialogue: Sequence[PublicTurn]
    ) -> tuple[dict[str, PublicTurn], np.ndarray | None]:
        """Update resentment from the turns since we last spoke; latest turn per party."""
        latest: dict[str, PublicTurn] = {}
        proposal: np.ndarray | None = None
        for turn in dialogue[self.seen :]:
            if turn.role == "mediator":
                self.resentment *= 1.0 - 0.6 * self.deference
                if turn.proposal:
                    proposal = self._as_package(turn.proposal)
            elif turn.role == "party" and turn.speaker != self.party_id:
                self._react_to(turn)
        self.seen = len(dialogue)
        for turn in reversed(dialogue):
            if (
                turn.role == "party"
                and turn.speaker != self.party_id
                and turn.speaker not in latest
            ):
                latest[turn.speaker] = turn
        return latest, proposal

    def _react_to(self, turn: PublicTurn) -> None:
        """Hostility and unfavourable *moves* (not repeated positions) breed resentment."""
        if turn.tone == "hostile":
            self.resentment += 0.6 * self.reactivity
        hurt = 0.0
        pleased = 0.0
        for j, t in enumerate(self.table.topic_ids):
            s = turn.stances.get(t)
            if s is None or s.option not in self.table.option_ids[j]:
                continue
            key = (turn.speaker, t)
            before = self.last_seen.get(key)
            if before == s.option:
                continue
            self.last_seen[key] = s.option
            idx = self.table.option_ids[j].index(s.option)
            w = float(self.table.weights[j])
            if not self.table.acceptable[j][idx]:
                hurt += w
            elif before is not None:
                old = self.table.option_ids[j].index(before)
                delta = float(self.table.values[j][idx] - self.table.values[j][old])
                hurt += w * max(0.0, -delta)
                pleased += w * max(0.0, delta)
        self.resentment = max(0.0, self.resentment + 0.5 * self.reactivity * hurt - 0.3 * pleased)

    def _as_package(self, choice: dict[str, str]) -> np.ndarray | None:
        idx = []
        for j, t in enumerate(self.table.topic_ids):
            opt = choice.get(t)
            if opt not in self.table.option_ids[j]:
                return None
            idx.append(self.table.option_ids[j].index(opt))
        return np.array(idx, dtype=np.intp)

    def _utility(self, pkg: np.ndarray) -> float:
        return float(
            sum(self.table.weights[j] * self.table.values[j][o] for j, o in enumerate(pkg))
        )

    def _worth_it(self, pkg: np.ndarray) -> bool:
        ok = all(self.table.acceptable[j][o] for j, o in enumerate(pkg))
        return ok and self._utility(pkg) >= self.target - 1e-12

    def _best_supported(
        self, others: dict[str, PublicTurn], proposal: np.ndarray | None
    ) -> np.ndarray:
        t = self.table
        k = len(t.topic_ids)
        score = np.zeros(len(t.utility))
        for j, topic in enumerate(t.topic_ids):
            support = np.zeros(len(t.option_ids[j]))
            for turn in others.values():
                s = turn.stances.get(topic)
                if s is None:
                    continue
                for o in s.acceptable:
                    if o in t.option_ids[j]:
                        support[t.option_ids[j].index(o)] += 0.5
                if s.option in t.option_ids[j]:
                    support[t.option_ids[j].index(s.option)] += 0.5
            if proposal is not None:
                support[proposal[j]] += self.deference
            if self.strategy == "collaborating":
                # Trade: follow the others on topics that matter little to us.
                support *= 1.5 - float(t.weights[j]) / float(t.weights.max())
            score += support[t.packages[:, j]]
        score /= max(1, k * max(1, len(others)))
        score += SELF_WEIGHT[self.strategy] * t.utility
        score += self.noise.random(len(score)) * 1e-9  # seeded tie-break
        mask = t.feasible & (t.utility >= self.target - 1e-12)
        score = np.where(mask, score, -np.inf)
        best: np.ndarray = t.packages[int(np.argmax(score))].copy()
        return best

    def _tone(self, dug_in: bool) -> Tone:
        if dug_in and self.rng.random() < 0.4 + 0.6 * self.expressive:
            return "hostile"
        if self.strategy == "competing" and self.resentment > 0.25 and self.reactivity > 0.3:
            return "hostile"
        if self.strategy in ("accommodating", "collaborating") and self.resentment < 0.1:
            return "warm"
        return "neutral"

    def _stances_for(self, pkg: np.ndarray, dug_in: bool) -> dict[str, Stance]:
        t = self.table
        own = self._utility(pkg)
        out: dict[str, Stance] = {}
        for j, topic in enumerate(t.topic_ids):
            chosen = t.option_ids[j][pkg[j]]
            if dug_in:
                out[topic] = Stance(chosen, (chosen,))
                continue
            base = own - float(t.weights[j] * t.values[j][pkg[j]])
            ok = tuple(
                o
                for i, o in enumerate(t.option_ids[j])
                if t.acceptable[j][i]
                and base + float(t.weights[j] * t.values[j][i]) >= self.target - 1e-12
            )
            out[topic] = Stance(chosen, ok)
        return out

    def _finish(
        self,
        signal: Signal,
        tone: Tone,
        prev_offer: np.ndarray,
        dug_in: bool,
        others: dict[str, PublicTurn],
    ) -> Action:
        self._stances = self._stances_for(self.offer, dug_in)
        changed = [
            self.table.topic_ids[j]
            for j in range(len(self.table.topic_ids))
            if prev_offer[j] != self.offer[j]
        ]
        utterance = self.voice.speak(self._stances, signal, tone, changed, list(others))
        thought = (
            f"target {self.target:.2f}, offer worth {self._utility(self.offer):.2f}, "
            f"fallback {self.floor:.2f}, resentment {self.resentment:.2f}"
            + (", digging in" if dug_in else "")
        )
        return Action(utterance, dict(self._stances), signal, thought, tone)


def _common_package(
    others: dict[str, PublicTurn],
    topic_ids: tuple[str, ...],
    option_ids: tuple[tuple[str, ...], ...],
) -> np.ndarray | None:
    """The package every other party currently backs, if they all back the same one."""
    if not others:
        return None
    pkg: list[int] = []
    for j, topic in enumerate(topic_ids):
        options = {
            turn.stances[topic].option if topic in turn.stances else None
            for turn in others.values()
        }
        if len(options) != 1:
            return None
        (opt,) = options
        if opt not in option_ids[j]:
            return None
        pkg.append(option_ids[j].index(opt))
    return np.array(pkg, dtype=np.intp)
