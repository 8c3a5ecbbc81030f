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

Each of those concerns is a component with its own state (`rule_policy/`); `RuleParty`
composes them, with a voice that the party kind chooses (`Voice`, or the paraphrase kind's
`ParaphraseVoice`), and orchestrates a turn.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext, UsageReporter
from disputelab.agents.parties.rule_memos import Package, ReadMemo, RuleMemos
from disputelab.agents.parties.rule_policy.choice import TOLERANCE, PackageChoice
from disputelab.agents.parties.rule_policy.concession import Concession
from disputelab.agents.parties.rule_policy.reading import TableReading, as_package
from disputelab.agents.parties.rule_policy.resentment import Backed, Resentment
from disputelab.agents.parties.rule_policy.stances import Caucus, OpenStances, Stances
from disputelab.agents.parties.rule_policy.tone import ToneOfVoice
from disputelab.agents.parties.rule_thinking import rule_thoughts
from disputelab.agents.parties.voice import PhraseMemo, Voice
from disputelab.agents.settings import Disclosure
from disputelab.agents.thinking import Mind, brief_sentences
from disputelab.agents.utility import (
    engage_every,
    expressiveness,
    mediator_deference,
    preference_table,
    strategy_beta,
    tone_switches,
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
from disputelab.scenario.tki import Point, mode_of

# Every number that turns a persona into behaviour (concession speed, resentment,
# deference, ...) is a named parameter of `disputelab.scenario.behaviour`.

# What makes a party's voice: the kind's voice class, or anything built the same way.
VoiceMaker = Callable[[PublicScenario, Party, random.Random, PhraseMemo], Voice]


def satisfaction_band(worth: float, floor: float, feasible: bool) -> str:
    """Where a proposal worth `worth` sits between the fallback (very low) and the
    party's best package (very high), in five equal bands."""
    gain = (worth - floor) / (1.0 - floor) if feasible else 0.0
    return SATISFACTION[min(len(SATISFACTION) - 1, max(0, int(gain * len(SATISFACTION))))]


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
        *,
        voice: VoiceMaker = Voice,
        memos: RuleMemos | None = None,
    ) -> None:
        memos = memos if memos is not None else RuleMemos()
        self.party: Party = scenario.party(party_id)
        self.party_id, self.seed, self.disclosure = party_id, seed, disclosure
        self.b = b = behaviour
        self.public = public or PublicScenario.of(scenario)
        self.table = table = preference_table(scenario, self.party)
        persona = self.party.persona
        self.strategy, self.reactivity = persona.strategy, persona.reactivity
        # One random stream for its moves and its words, drawn in a fixed order: a voice
        # that draws as often as the template voice (the paraphrase one) keeps the moves.
        self.rng = random.Random(f"{seed}:{party_id}")
        deference = self.deference = mediator_deference(persona.culture, b)
        self.concession = Concession.of(persona, b, self.rng, self.party.fallback.utility)
        self.mood = Resentment(b, persona.reactivity, deference)  # how it feels about them
        self.point = persona.point  # its strategy on the TKI plane
        self.tone = ToneOfVoice(
            b, self.point, persona.reactivity, expressiveness(persona.culture, b)
        )
        self.engage_every = engage_every(self.point, b)  # an avoider's pace; 1 for others
        self.reading = TableReading(table, party_id, memos, reads)
        # The choice and the stances share the profile's candidates and their memos.
        self.memos = memos
        cand = memos.candidates(table, self.point, b)
        full = disclosure == "full"
        self.choice = PackageChoice(table, cand, deference, b["disclosure.offer_band"], full)
        self.stances = Stances(table, cand, memos)
        self.stated = OpenStances(table, cand, memos, full)
        self.in_caucus = Caucus(b, f"{seed}:{party_id}:caucus")
        self.voice = voice(self.public, self.party, self.rng, memos.phrases)
        self._worth_words = memos.worth_words
        self._fallback_words = f", fallback {self.floor:.2f}, resentment "  # of each thought
        self.own_turns = 0
        self.walked_away = False
        self.offer: Package = cand.packages[0]  # the package it backs
        self.stances.take(
            self.offer, False, self.choice.prefix(1.0), 1.0, self.choice.utility(self.offer)
        )
        # A mediator proposal heard while thinking (motivated turn-taking) and not yet
        # answered: the next turn answers it, as if it had been heard just before.
        self._pending: Package | None = None
        self._mind: Mind | None = None  # built on first thought (motivated turn-taking)
        self.said: Signal | None = None  # the signal of its latest turn

    # ---- its state, as other modules read it ---------------------------------------------
    @property
    def target(self) -> float:
        return self.concession.target

    @property
    def floor(self) -> float:
        return self.concession.floor

    @property
    def resentment(self) -> float:
        return self.mood.level

    @property
    def backed(self) -> Mapping[str, Backed]:
        return self.reading.backed

    @property
    def latest(self) -> Mapping[str, PublicTurn]:
        return self.reading.latest

    # ---- an adaptive strategy ---------------------------------------------------------
    def adopt(self, point: Point) -> None:
        """Play on from a new point on the TKI plane (the adaptive strategy update): the
        concession curve, the tone and the pace change; conceded ground stays conceded."""
        b = self.b
        self.point = point
        self.strategy = mode_of(point)  # type: ignore[assignment]
        self.concession.beta = strategy_beta(point, b) * self.concession.spread
        self.tone.flares, self.tone.warms = tone_switches(point, b)
        self.engage_every = engage_every(point, b)
        self.choice.cand = self.memos.candidates(self.table, point, b)

    # ---- what the oracle reads -------------------------------------------------------
    def hidden_stances(self) -> dict[str, Stance]:
        return dict(self.stances.current)  # a copy: the memoised original is shared

    def public_stances(self) -> dict[str, Stance]:
        """What it states in the open: its whole acceptable set under `full` disclosure;
        as a negotiator, the option it backs and the concessions it would still make."""
        return self.stated.stated(self.stances)

    # ---- private caucus ----------------------------------------------------------------
    def caucus(self) -> Action:
        """What it tells the mediator alone, from where it stood at its latest turn (see
        `Caucus`): the stance's acceptable options are the named ones only; its option
        is the one it backs in the open."""
        named = self.in_caucus.named(self.table, self.stances.current, self.public_stances())
        text = self.voice.caucus(named)
        return Action(text, named, Signal.CONTINUE, "caucus with the mediator", "neutral")

    # ---- one turn ----------------------------------------------------------------------
    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        return self.decide(dialogue, ctx)

    def decide(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        """One turn: read the table, cool down and concede a step, then the first that
        applies: walk away when resentment has reached that far; signal consensus on
        the package all the others back if it is worth the target (not when dug in);
        dug in, hold the offer; take the mediator's proposal if it is worth it, more
        likely the more deferent; as an avoider, mostly let the offer stand; otherwise
        back the package in reach that the table supports best."""
        mood, choice = self.mood, self.choice
        proposal = self.reading.observe(dialogue, mood)
        if proposal is None:
            proposal = self._pending
        self._pending = None
        mood.cool()
        target = self.concession.advance(mood.level, ctx)
        self.own_turns += 1
        dug_in = mood.level >= mood.dig_in
        prev_offer = self.offer
        if mood.level >= mood.walk_away:
            self.walked_away = True
            return self._finish(Signal.WALK_AWAY, "hostile", prev_offer, True)
        common = self.reading.common_package()
        if not dug_in and common is not None and choice.worth_it(common, target):
            self.offer = common
            return self._finish(Signal.CONSENSUS, "warm", prev_offer, dug_in)
        if dug_in:
            pick = self.offer
        elif (
            proposal is not None
            and choice.worth_it(proposal, target)
            and self.rng.random() < 0.5 + 0.5 * self.deference
        ):
            pick = proposal
        elif (
            self.engage_every > 1
            and self.own_turns % self.engage_every != 1 % self.engage_every
            and choice.worth_it(self.offer, target)
        ):
            pick = self.offer  # avoiders rarely re-engage; they let the offer stand
        else:
            pick = choice.best_supported(proposal, self.reading, target)
        self.offer = pick
        refused = proposal if proposal is not None and pick != proposal else None
        tone = self.tone.of_turn(dug_in, mood.level, self.rng)
        return self._finish(Signal.CONTINUE, tone, prev_offer, dug_in, refused)

    def _finish(
        self,
        signal: Signal,
        tone: Tone,
        prev_offer: Package,
        dug_in: bool,
        refused: Package | None = None,
    ) -> Action:
        """Stand on the offer, note it as conceded, and say so."""
        offer, target = self.offer, self.concession.target
        worth = self.choice.utility(offer)
        self.said = signal
        self.stances.take(offer, dug_in, self.choice.prefix(target), target, worth)
        self.stated.concede(offer)
        stated = self.public_stances()
        changed = (
            []
            if prev_offer == offer
            else [t for j, t in enumerate(self.table.topic_ids) if prev_offer[j] != offer[j]]
        )
        utterance = self.voice.speak(stated, signal, tone, changed, list(self.reading.latest))
        if refused is not None:  # otherwise there is no reason to give
            reasons = self.stated.rejections(refused, self.stances.current)
            utterance = self.voice.refusal(utterance, reasons)
        thought = (
            f"target {target:.4f}, offer worth {self._worth_words(worth)}"
            f"{self._fallback_words}{self.mood.level:.2f}" + (", digging in" if dug_in else "")
        )
        return Action(utterance, stated, signal, thought, tone)

    # ---- motivated turn-taking -------------------------------------------------------
    async def think(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext, k: int
    ) -> list[Thought]:
        heard = self.reading.observe(dialogue, self.mood)
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
        if self.said is Signal.CONSENSUS or self.mood.dug_in:
            return False
        common = self.reading.common_package()
        return common is not None and self.choice.worth_it(common, self.concession.target)

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
        the fallback but falls short of the target, reject anything worse or infeasible;
        with its satisfaction (`satisfaction_band`)."""
        self.reading.observe(dialogue, self.mood)
        t, target, floor = self.table, self.concession.target, self.floor
        pkg = as_package(t, proposal)
        feasible = pkg is not None and all(t.ok[j][o] for j, o in enumerate(pkg))
        worth = self.choice.utility(pkg) if pkg is not None and feasible else 0.0
        decision: Decision
        if self.walked_away or not feasible or worth < floor - TOLERANCE:
            decision = "reject"
        elif worth >= target - TOLERANCE and (not self.mood.dug_in or pkg == self.offer):
            decision = "accept"
        else:
            decision = "uncertain"
        satisfaction = satisfaction_band(worth, floor, feasible)
        if decision == "accept" and pkg is not None:
            self.offer = pkg
            self.stances.take(pkg, False, self.choice.prefix(target), target, worth)
            self.stated.concede(pkg)
        reason = (
            f"proposal worth {worth:.3f} against target {target:.3f} and fallback "
            f"{floor:.2f}" + ("" if feasible else "; it includes an unacceptable option")
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
