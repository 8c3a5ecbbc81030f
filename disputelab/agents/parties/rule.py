"""The rule-based party: a transparent negotiator whose hidden state is always known.

Each turn it (1) reads what happened since it last spoke, which can raise or soothe its
resentment, (2) advances along its concession curve, more slowly while resentful, (3)
picks, among packages worth at least its target, the one with the most public support,
and (4) states its stance per topic.

What it states depends on the `disclosure` setting. As a `negotiator` (the default) it
states what a negotiator says in the open: the option it backs, the options it has
conceded so far and would still take, and, when it turns down a mediator's package, which
option it cannot accept. Its acceptable set stays private; in a caucus (`caucus`) it names
some of it to the mediator alone, as many and as truthfully as its behaviour parameters
`disclosure.caucus_share` and `disclosure.caucus_truthfulness` say. With `full`
disclosure it states its whole acceptable set every turn, so its stated stances equal its
hidden ones and trackers can be checked against the truth. Either way nothing it states
is false in the open, and the oracle reads its hidden stances.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext, UsageReporter
from disputelab.agents.parties.rule_memos import Package, Reading, ReadMemo, RuleMemos
from disputelab.agents.parties.rule_thinking import rule_thoughts
from disputelab.agents.parties.voice import Voice
from disputelab.agents.settings import Disclosure
from disputelab.agents.thinking import Mind, brief_sentences
from disputelab.agents.utility import (
    concession_target,
    culture_beta_factor,
    expressiveness,
    mediator_deference,
    preference_table,
    strategy_beta,
)
from disputelab.episode import (
    SATISFACTION,
    Action,
    Decision,
    Signal,
    Stance,
    Thought,
    Tone,
    Verdict,
)
from disputelab.llm.embedding import Embedder
from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR, Behaviour
from disputelab.scenario.schema import Party, Scenario

# Every number that turns a persona into behaviour (concession speed, resentment,
# deference, ...) is a named parameter of `disputelab.scenario.behaviour`.


class RuleParty(UsageReporter):
    """A deterministic (given its seed) rule-policy negotiator."""

    def __init__(
        self,
        scenario: Scenario,
        party_id: str,
        seed: int,
        public: PublicScenario | None = None,
        reads: ReadMemo | None = None,
        behaviour: Behaviour = DEFAULT_BEHAVIOUR,
        disclosure: Disclosure = "negotiator",
        memos: RuleMemos | None = None,
    ) -> None:
        # The run's memos, or a fresh set for a party played on its own.
        self.memos = memos = memos if memos is not None else RuleMemos()
        self.party: Party = scenario.party(party_id)
        self.disclosure: Disclosure = disclosure
        b = self.b = behaviour
        self.party_id = party_id
        self.public = public or PublicScenario.of(scenario)
        self.table = preference_table(scenario, self.party)
        persona = self.party.persona
        self.strategy = persona.strategy
        self.reactivity = persona.reactivity
        self.rng = random.Random(f"{seed}:{party_id}")
        self.seed = seed
        self._caucus_rng: random.Random | None = None  # see `caucus_rng`
        # Individual variation: two parties with the same persona still differ a little in
        # how fast they concede, so seeds explore a neighbourhood rather than one path.
        self.beta = (
            strategy_beta(self.strategy, b)
            * culture_beta_factor(persona.culture, b)
            * math.exp(self.rng.gauss(0.0, 1.0) * b["beta.individual_sd"])
        )
        self.deference = mediator_deference(persona.culture, b)
        self.expressive = expressiveness(persona.culture, b)
        self.dig_in = b["resentment.dig_in"]
        self.walk_away = b["resentment.walk_away"]
        self.cooling = b["resentment.cooling"]
        self.calming = b["mediator.calming"]
        self.engage_every = max(1, round(b["avoiding.engage_every"]))
        # The parameters read on every turn, looked up once.
        self.hostility = b["resentment.hostility"]
        self.hurt = b["resentment.hurt"]
        self.soothe = b["resentment.soothe"]
        self.offer_band = b["disclosure.offer_band"]
        self.flares = b["tone.competing_flare"] > 0.5 and self.strategy == "competing"
        self.warms = b["tone.cooperative_warm"] > 0.5 and self.strategy in (
            "accommodating",
            "collaborating",
        )
        self.floor = self.party.fallback.utility
        self._fallback_words = f", fallback {self.floor:.2f}, resentment "  # of each thought
        self.voice = Voice(self.public, self.party, self.rng, memos.phrases)
        self.progress = 0.0
        self.resentment = 0.0
        self.target = 1.0
        # `_prefix()` for the target it was last computed at.
        self._prefix_at: tuple[float, int] = (math.nan, 0)
        self.seen = 0  # dialogue entries already read
        self.own_turns = 0
        self.walked_away = False
        # Each other party's latest turn, the options it backs, and the support it lends.
        self.latest: dict[str, PublicTurn] = {}
        self.reads: ReadMemo = reads if reads is not None else {}
        self.backed: dict[str, tuple[int | None, ...]] = {}
        self.support: dict[str, npt.NDArray[np.float64]] = {}
        # The id of each other party's latest reading, in the order of `latest`.
        self.read_ids: dict[str, int] = {}
        self._readings = memos.readings(self.table)
        self.cand = memos.candidates(self.table, self.strategy, b)
        # A seeded tie-break among equally scored packages.
        self.offer: Package = self.cand.packages[0]
        self._stances: dict[str, Stance] = {}
        self._stances_key: object = None  # the memo key of `_stances`
        self._take_stances(self.offer, dug_in=False)
        # Per topic, the options it has backed so far, in the order it first backed them:
        # the concessions a negotiator has made in the open. `_conceded_key` is the same
        # as a tuple of tuples, kept for the memo of what it states.
        self.conceded: list[dict[str, None]] = [{} for _ in self.table.topic_ids]
        self._conceded_key: tuple[tuple[str, ...], ...] = tuple(() for _ in self.conceded)
        self._conceded_last: Package | None = None  # the package `_concede` noted last
        # A mediator proposal heard while thinking (motivated turn-taking) and not yet
        # answered: the next turn answers it, as if it had been heard just before.
        self._pending: Package | None = None
        self._mind: Mind | None = None  # built on first thought (motivated turn-taking)
        self.said: Signal | None = None  # the signal of its latest turn

    @property
    def caucus_rng(self) -> random.Random:
        """Caucus draws have a stream of their own, so holding caucuses never changes the
        party's moves at the table. Seeded on first use: most episodes hold no caucus."""
        if self._caucus_rng is None:
            self._caucus_rng = random.Random(f"{self.seed}:{self.party_id}:caucus")
        return self._caucus_rng

    # ---- what the oracle reads -------------------------------------------------------
    def hidden_stances(self) -> dict[str, Stance]:
        return dict(self._stances)  # a copy: the memoised original is shared

    def public_stances(self) -> dict[str, Stance]:
        """What it states in the open: its whole acceptable set under `full` disclosure;
        as a negotiator, the option it backs and the concessions it would still make."""
        if self.disclosure == "full":
            return dict(self._stances)
        # A pure function of its stances and its concessions, which recur turn after turn
        # and across episodes: memoised on the candidates, and copied out like `_stances`.
        key = (self._stances_key, self._conceded_key)
        known = self.cand.public.get(key)
        if known is None:
            known = self.cand.remember(self.cand.public, key, self._negotiator_stances())
        return dict(known)

    def _negotiator_stances(self) -> dict[str, Stance]:
        """Per topic, the option it backs and the concessions it made that it would still
        take (the option it backs first when it is not one of them)."""
        out: dict[str, Stance] = {}
        for j, (topic, s) in enumerate(self._stances.items()):
            still = set(s.acceptable)
            made = tuple(o for o in self.conceded[j] if o in still)
            if s.option is not None and s.option not in made:
                made = (s.option, *made)
            out[topic] = self.memos.shared_stance(Stance(s.option, made))
        return out

    # ---- private caucus ----------------------------------------------------------------
    def caucus(self) -> Action:
        """What it tells the mediator alone, from where it stood at its latest turn.

        Per topic, of the acceptable options it has not conceded in the open, it names a
        share `disclosure.caucus_share` (rounded); each named option is one it would take
        with chance `disclosure.caucus_truthfulness`, otherwise a bluff: an option it would
        not take (a true one where it would take every option). The stance's acceptable
        options are the named ones only; its option is the one it backs in the open.
        """
        # Shares and chances outside [0, 1] mean all or nothing.
        share = min(1.0, max(0.0, self.b["disclosure.caucus_share"]))
        truth = min(1.0, max(0.0, self.b["disclosure.caucus_truthfulness"]))
        rng = self.caucus_rng
        open_ = self.public_stances()
        named: dict[str, Stance] = {}
        for j, topic in enumerate(self.table.topic_ids):
            s = self._stances[topic]
            true = [o for o in s.acceptable if o not in open_[topic].acceptable]
            false = [o for o in self.table.option_ids[j] if o not in s.acceptable]
            rng.shuffle(true)
            rng.shuffle(false)
            said: list[str] = []
            for _ in range(round(share * len(true))):
                pool = false if false and rng.random() >= truth else true
                said.append(pool.pop())
            named[topic] = Stance(s.option, tuple(said))
        text = self.voice.caucus(named)
        return Action(text, named, Signal.CONTINUE, "caucus with the mediator", "neutral")

    # ---- one turn ----------------------------------------------------------------------
    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        return self.decide(dialogue, ctx)

    def decide(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        proposal = self._observe(dialogue)
        if proposal is None:
            proposal = self._pending
        self._pending = None
        others = self.latest
        own_horizon = max(1, -(-ctx.budget // ctx.n_parties))
        self.resentment *= self.cooling
        step = max(0.0, 1.0 - self.resentment) / own_horizon
        self.progress = min(1.0, self.progress + step)
        self.target = concession_target(self.progress, self.beta, self.floor)
        self.own_turns += 1
        dug_in = self.resentment >= self.dig_in
        prev_offer = self.offer

        if self.resentment >= self.walk_away:
            self.walked_away = True
            return self._finish(Signal.WALK_AWAY, "hostile", prev_offer, True, others)

        common = self._common_package()
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
        elif (
            self.strategy == "avoiding"
            and self.own_turns % self.engage_every != 1 % self.engage_every
            and self._worth_it(self.offer)
        ):
            choice = self.offer  # avoiders rarely re-engage; they let the offer stand
        else:
            choice = self._best_supported(proposal)
        self.offer = choice
        refused = proposal if proposal is not None and choice != proposal else None
        return self._finish(
            Signal.CONTINUE, self._tone(dug_in), prev_offer, dug_in, others, refused
        )

    # ---- motivated turn-taking -------------------------------------------------------
    async def think(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, k: int
    ) -> list[Thought]:
        heard = self._observe(dialogue)
        if heard is not None:
            self._pending = heard
        if self._mind is None:
            self._mind = Mind(brief_sentences(self.public, self.party), Embedder(semantic=False))
        return rule_thoughts(self, self._mind, dialogue, k)

    def most_salient(self) -> Thought | None:
        return self._mind.most_salient() if self._mind is not None else None

    def would_accept_now(self) -> bool:
        """Whether its next turn would signal consensus on what the others back (the same
        test `decide` applies), and it has not already said so."""
        if self.said is Signal.CONSENSUS or self.resentment >= self.dig_in:
            return False
        common = self._common_package()
        return common is not None and self._worth_it(common)

    async def articulate(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, thought: Thought
    ) -> Action:
        action = self.decide(dialogue, ctx)
        action.thought = f"{thought.text} ({action.thought})"
        return action

    # ---- closure (staged protocol) ----------------------------------------------------
    async def verdict(
        self, dialogue: Sequence[PublicTurn], proposal: Mapping[str, str], ctx: TurnContext
    ) -> Action:
        return self.verdict_on(dialogue, proposal)

    def verdict_on(self, dialogue: Sequence[PublicTurn], proposal: Mapping[str, str]) -> Action:
        """Accept a final proposal worth the current target, hesitate over one that beats
        the fallback but falls short of the target, reject anything worse or infeasible.

        Satisfaction is where the proposal sits between the fallback (very low) and the
        party's best package (very high), in five equal bands.
        """
        self._observe(dialogue)
        pkg = self._as_package(proposal)
        t = self.table
        feasible = pkg is not None and all(t.ok[j][o] for j, o in enumerate(pkg))
        worth = self._utility(pkg) if pkg is not None and feasible else 0.0
        dug_in = self.resentment >= self.dig_in
        decision: Decision
        if self.walked_away or not feasible or worth < self.floor - 1e-12:
            decision = "reject"
        elif worth >= self.target - 1e-12 and (not dug_in or pkg == self.offer):
            decision = "accept"
        else:
            decision = "uncertain"
        gain = (worth - self.floor) / (1.0 - self.floor) if feasible else 0.0
        band = min(len(SATISFACTION) - 1, max(0, int(gain * len(SATISFACTION))))
        satisfaction = SATISFACTION[band]
        if decision == "accept" and pkg is not None:
            self.offer = pkg
            self._take_stances(pkg, False, worth)
            self._concede(pkg)
        reason = (
            f"proposal worth {worth:.3f} against target {self.target:.3f} and fallback "
            f"{self.floor:.2f}" + ("" if feasible else "; it includes an unacceptable option")
        )
        signal = {"accept": Signal.CONSENSUS, "uncertain": Signal.CONTINUE}.get(
            decision, Signal.WALK_AWAY
        )
        return Action(
            self.voice.verdict(decision, satisfaction),
            self.public_stances(),
            signal,
            reason,
            "warm" if decision == "accept" else "neutral",
            Verdict(decision, satisfaction, reason),
        )

    # ---- helpers -----------------------------------------------------------------------
    def _observe(self, dialogue: Sequence[PublicTurn]) -> Package | None:
        """Read the turns since we last spoke: resentment, latest stances, any proposal."""
        proposal: Package | None = None
        for turn in dialogue[self.seen :]:
            if turn.role == "mediator":
                self.resentment *= 1.0 - self.calming * self.deference
                if turn.proposal:
                    proposal = self._as_package(turn.proposal)
            elif turn.role == "party" and turn.speaker != self.party_id:
                parsed = self.reads.get(turn.turn_index)
                if parsed is None:
                    parsed = self.reads[turn.turn_index] = self._read(turn.stances)
                backed, support, read_id = parsed
                # Only hostility or a move can stir resentment (see `_react_to`).
                if turn.tone == "hostile" or self.backed.get(turn.speaker) != backed:
                    self._react_to(turn, backed)
                self.latest[turn.speaker] = turn
                self.backed[turn.speaker] = backed
                self.support[turn.speaker] = support
                self.read_ids[turn.speaker] = read_id
        self.seen = len(dialogue)
        return proposal

    def _read(self, stances: Mapping[str, Stance]) -> Reading:
        """`_read_stances`, memoised by what was said for every party of this layout."""
        key = tuple(stances.items())
        known = self._readings.get(key)
        if known is None:
            known = self.memos.remember(self._readings, key, self._read_stances(stances))
        return known

    def _read_stances(self, stances: Mapping[str, Stance]) -> Reading:
        """The option index each topic's stance backs, the support it lends each option,
        and a new id for this reading.

        Support is half a point for every option a party says it would accept and half for
        the one it backs, laid out over all options end to end.
        """
        t = self.table
        support = [0.0] * t.n_options
        backed: list[int | None] = []
        base = 0
        for j, topic in enumerate(t.topic_ids):
            s = stances.get(topic)
            index = t.index[j]
            i = None
            if s is not None:
                for o in s.acceptable:
                    k = index.get(o)
                    if k is not None:
                        support[base + k] += 0.5
                i = index.get(s.option or "")
                if i is not None:
                    support[base + i] += 0.5
            backed.append(i)
            base += len(t.option_ids[j])
        return tuple(backed), np.array(support), self.memos.reading_id()

    def _react_to(self, turn: PublicTurn, backed: tuple[int | None, ...]) -> None:
        """Hostility and unfavourable *moves* (not repeated positions) breed resentment."""
        if turn.tone == "hostile":
            self.resentment += self.hostility * self.reactivity
        before_all = self.backed.get(turn.speaker)
        if before_all == backed:
            return
        hurt = 0.0
        pleased = 0.0
        t = self.table
        for j, idx in enumerate(backed):
            before = before_all[j] if before_all is not None else None
            if idx is None or before == idx:
                continue
            if not t.ok[j][idx]:
                hurt += t.w[j]
            elif before is not None:
                delta = t.v[j][idx] - t.v[j][before]
                hurt += t.w[j] * max(0.0, -delta)
                pleased += t.w[j] * max(0.0, delta)
        self.resentment = max(
            0.0,
            self.resentment + self.hurt * self.reactivity * hurt - self.soothe * pleased,
        )

    def _as_package(self, choice: Mapping[str, str]) -> Package | None:
        idx = []
        for j, topic in enumerate(self.table.topic_ids):
            i = self.table.index[j].get(choice.get(topic, ""))
            if i is None:
                return None
            idx.append(i)
        return tuple(idx)

    def _common_package(self) -> Package | None:
        """The package every other party currently backs, if they all back the same one."""
        backed = iter(self.backed.values())
        pkg = next(backed, None)
        if pkg is None or None in pkg or any(other != pkg for other in backed):
            return None
        return pkg  # type: ignore[return-value]  # no None in it

    def _utility(self, pkg: Package) -> float:
        known = self.cand.utility_of.get(pkg)
        if known is not None:
            return known
        t = self.table
        return sum(t.w[j] * t.v[j][o] for j, o in enumerate(pkg))

    def _worth_it(self, pkg: Package) -> bool:
        """Feasible (no unacceptable option) and worth the target. The feasible packages
        are exactly those the candidates list a utility for."""
        worth = self.cand.utility_of.get(pkg)
        return worth is not None and worth >= self.target - 1e-12

    def _best_supported(self, proposal: Package | None) -> Package:
        """Among packages worth the target, the one best supported by what others said."""
        t = self.table
        n = self._prefix()
        lo = self._band_start(n)
        # A pure function of the candidates in reach, what the others said and the
        # proposal, so the answer is memoised across turns and episodes. Ties go to the
        # package worth most to this party (candidates are sorted that way).
        # What the others said enters as the ids of their readings (one id, one reading),
        # in the order they were heard, which is the order their support is summed in.
        key = (lo, n, proposal, self.deference, tuple(self.read_ids.values()))
        known = self.cand.choices.get(key)
        if known is not None:
            return known
        support = sum(self.support.values(), np.zeros(t.n_options))
        if proposal is not None:
            support[self.cand.offsets + np.asarray(proposal)] += self.deference
        scale = 1.0 / max(1, len(t.topic_ids) * max(1, len(self.support)))
        score = self.cand.onehot[lo:n] @ (support * scale) + self.cand.own_term[lo:n]
        choice: Package = self.cand.packages[lo + int(score.argmax())]
        return self.cand.remember(self.cand.choices, key, choice)  # type: ignore[no-any-return]

    def _prefix(self) -> int:
        """How many candidate packages are worth at least the current target."""
        target, n = self._prefix_at
        if target != self.target:  # asked two or three times a turn at the same target
            n = max(1, bisect.bisect_right(self.cand.utility_desc, -(self.target - 1e-12)))
            self._prefix_at = (self.target, n)
        return n

    def _band_start(self, n: int) -> int:
        """As a negotiator, the first candidate worth at most target + offer band (its
        offers concede as the target falls, since nobody shows it where the others could
        meet); with full disclosure, 0: any package worth the target may be offered."""
        band = self.offer_band
        if self.disclosure == "full" or band >= 1.0:
            return 0
        above = bisect.bisect_left(self.cand.utility_desc, -(self.target + band))
        return min(above, n - 1)

    def _tone(self, dug_in: bool) -> Tone:
        if dug_in and self.rng.random() < 0.4 + 0.6 * self.expressive:
            return "hostile"
        if self.flares and self.resentment > 0.25 and self.reactivity > 0.3:
            return "hostile"
        if self.warms and self.resentment < 0.1:
            return "warm"
        return "neutral"

    def _take_stances(self, pkg: Package, dug_in: bool, own: float | None = None) -> None:
        """Stand on `pkg`: set `_stances` (and its memo key) to `_stances_for` it."""
        # Which options keep a package worth the target depends on the target only through
        # which candidates it admits, so (package, dug in, prefix) decides the stances.
        key = (pkg, dug_in, self._prefix())
        known = self.cand.stances.get(key)
        if known is None:
            known = self.cand.remember(self.cand.stances, key, self._stances_for(pkg, dug_in, own))
        self._stances = known
        self._stances_key = key

    def _stances_for(
        self, pkg: Package, dug_in: bool, own: float | None = None
    ) -> dict[str, Stance]:
        """Truthful stances: the option backed, and every option that keeps the target."""
        t = self.table
        own = self._utility(pkg) if own is None else own
        floor = self.target - 1e-12
        out: dict[str, Stance] = {}
        for j, topic in enumerate(t.topic_ids):
            opts = t.option_ids[j]
            chosen = opts[pkg[j]]
            if dug_in:
                out[topic] = self.memos.shared_stance(Stance(chosen, (chosen,)))
                continue
            w = t.w[j]
            rest = own - w * t.v[j][pkg[j]]
            # Acceptable options are the best-ranked ones down to the first that would drop
            # the package below target; count them, then look the set up.
            count = 0
            for value in t.ranked_values[j]:
                if rest + w * value < floor:
                    break
                count += 1
            out[topic] = self.memos.shared_stance(Stance(chosen, t.top_sets[j][count]))
        return out

    def _finish(
        self,
        signal: Signal,
        tone: Tone,
        prev_offer: Package,
        dug_in: bool,
        others: dict[str, PublicTurn],
        refused: Package | None = None,
    ) -> Action:
        worth = self._utility(self.offer)
        self.said = signal
        self._take_stances(self.offer, dug_in, worth)
        self._concede(self.offer)
        stated = self.public_stances()
        changed = (
            []
            if prev_offer == self.offer
            else [
                topic
                for j, topic in enumerate(self.table.topic_ids)
                if prev_offer[j] != self.offer[j]
            ]
        )
        utterance = self.voice.speak(stated, signal, tone, changed, list(others))
        if refused is not None:  # otherwise there is no reason to give
            utterance = self.voice.refusal(utterance, self._rejections(refused))
        thought = (
            f"target {self.target:.4f}, offer worth {self.memos.worth_words(worth)}"
            f"{self._fallback_words}{self.resentment:.2f}" + (", digging in" if dug_in else "")
        )
        return Action(utterance, stated, signal, thought, tone)

    def _concede(self, pkg: Package) -> None:
        """Note each option of a package it backs or accepts: a concession made in the open."""
        if pkg == self._conceded_last:
            return  # every option of it is noted already
        self._conceded_last = pkg
        grew = False
        for j, i in enumerate(pkg):
            made = self.conceded[j]
            option = self.table.option_ids[j][i]
            if option not in made:
                made[option] = None
                grew = True
        if grew:
            self._conceded_key = tuple(tuple(made) for made in self.conceded)

    def _rejections(self, refused: Package | None) -> list[tuple[str, str]]:
        """As a negotiator, the (topic, option) pairs of a mediator's package it turned
        down that it would not take now: the reasons it gives in the open. Full disclosure
        says none, as before (its acceptable set already shows them)."""
        if refused is None or self.disclosure == "full":
            return []
        out = []
        for j, topic in enumerate(self.table.topic_ids):
            option = self.table.option_ids[j][refused[j]]
            if option not in self._stances[topic].acceptable:
                out.append((topic, option))
        return out
