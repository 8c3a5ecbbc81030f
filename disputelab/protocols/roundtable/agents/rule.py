"""The rule-based mediator: watches public stances and proposes a package when talks slip.

It is built from a `PublicScenario` and reads `PublicTurn`s, so it cannot see a party's
preferences, weights, fallback or thoughts; its picture of the table is what was said.

It infers the zone of agreement from what it has heard: per party and topic, the options
the party said at the table it would accept (under full disclosure its whole acceptable
set; as a negotiator, what it backs and the concessions it has made) and the options it
named in a private caucus (a system turn from the party that only the mediator and that
party hear), less any caucus option the party then turned down in a package the mediator
put to it. A bluff in caucus is believed until it is turned down, so the picture can be
wrong. Its proposals come from that picture; with full disclosure and no caucus it is the
stated acceptable sets, as before caucuses existed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext, UsageReporter
from disputelab.consensus import consensus_by_topic, consensus_score
from disputelab.episode import Intervention, Stance, Usage

_EN = {
    "drop": "Let me pause us here: positions are hardening, and that helps nobody.",
    "hostile": "I'd like to lower the temperature. Everyone here wants this settled.",
    "stall": "We seem to be stuck, so let me put a package on the table.",
    "all": "On {topic}, everyone has said {label} is workable.",
    "most": "On {topic}, {label} has the most support, though not from everyone yet.",
    "ask": "Could each of you consider this package: {summary}?",
}
_ZH = {
    "drop": "我先打断一下：各方立场越来越强硬，这对谁都没有好处。",
    "hostile": "大家先冷静一下。在座各位都希望把事情解决。",
    "stall": "我们似乎卡住了，我来提一个整体方案。",
    "all": "关于{topic}，各方都表示{label}可以接受。",
    "most": "关于{topic}，{label}得到的支持最多，但还不是所有人都同意。",
    "ask": "请各位考虑这个方案：{summary}。",
}


class RuleMediator(UsageReporter):
    """Intervenes on a drop in publicly estimated consensus, on hostility, or on a stall."""

    name = "rule"

    def __init__(self, public: PublicScenario, cooldown: int | None = None) -> None:
        self.public = public
        self.topic_ids = [t.id for t in public.topics]
        self.t = _ZH if public.language.startswith("zh") else _EN
        n = len(public.parties)
        self.cooldown = cooldown if cooldown is not None else max(3, 2 * n)
        self.history: list[float] = []
        # Incrementally maintained picture of the table: latest stances and consensus.
        self.seen = 0
        self.latest: dict[str, Mapping[str, Stance]] = {}
        self.by_topic: dict[str, float] = dict.fromkeys(self.topic_ids, 0.0)
        self._scored: tuple[object, float] = (None, 0.0)  # (by_topic, its consensus score)
        self.last_position = -(10**9)
        self.party_ids = {p.id for p in public.parties}
        # party -> topic -> options named in caucus and not since turned down.
        self.confided: dict[str, dict[str, set[str]]] = {}
        # The package it last put forward, and the parties yet to answer it.
        self.proposed: dict[str, str] = {}
        self.awaiting: set[str] = set()
        # Per topic, what a proposal needs of it: its name, its option ids in order and
        # each option's label (read once, not from the scenario models every proposal).
        self.options = {t.id: tuple(t.option_ids()) for t in public.topics}
        self.labels = {t.id: {o.id: o.label for o in t.options} for t in public.topics}
        self.names = {t.id: t.name for t in public.topics}

    def estimate(
        self, dialogue: Sequence[PublicTurn]
    ) -> tuple[dict[str, float], dict[str, Mapping[str, Stance]]]:
        """Public consensus per topic from each party's latest stated stances."""
        changed: set[str] = set()
        for turn in dialogue[self.seen :]:
            if turn.role == "party":
                before = self.latest.get(turn.speaker, {})
                # A party mostly restates its position: one comparison of the whole
                # mapping, before looking for the topics that moved.
                if before != turn.stances:
                    changed.update(
                        t for t in self.topic_ids if before.get(t) != turn.stances.get(t)
                    )
                self.latest[turn.speaker] = turn.stances
                if turn.speaker in self.awaiting:
                    self._answered(turn.speaker, turn.stances)
            elif turn.role == "system" and turn.speaker in self.party_ids and turn.stances:
                confided = self.confided.setdefault(turn.speaker, {})
                for topic, stance in turn.stances.items():
                    confided.setdefault(topic, set()).update(stance.acceptable)
        self.seen = len(dialogue)
        if changed:
            everyone = [self.latest.get(p.id, {}) for p in self.public.parties]
            self.by_topic = self.by_topic | consensus_by_topic(sorted(changed), everyone)
        return self.by_topic, self.latest

    def _answered(self, party: str, stances: Mapping[str, Stance]) -> None:
        """A party's first turn after a proposal answers it: a proposed option it neither
        backs nor says it would accept is one it turned down, so a caucus claim for that
        option is no longer believed."""
        if party not in self.awaiting:
            return
        self.awaiting.discard(party)
        confided = self.confided.get(party, {})
        for topic, option in self.proposed.items():
            s = stances.get(topic)
            if s is None or (s.option != option and option not in s.acceptable):
                confided.get(topic, set()).discard(option)

    def heard(self) -> dict[str, dict[str, set[str]]]:
        """party -> topic -> every option it has heard the party back or call acceptable:
        at the table (latest turn) or in caucus (every caucus so far)."""
        out: dict[str, dict[str, set[str]]] = {}
        for party in self.party_ids:
            stated = self.latest.get(party, {})
            confided = self.confided.get(party, {})
            out[party] = {}
            for topic in self.topic_ids:
                s = stated.get(topic)
                said = set(s.acceptable) if s is not None else set()
                if s is not None and s.option is not None:
                    said.add(s.option)
                out[party][topic] = said | confided.get(topic, set())
        return out

    def inferred_acceptable(self) -> dict[str, dict[str, set[str]]]:
        """party -> topic -> the options it believes the party would accept: those the
        party said at its latest turn it would accept, and those named in caucus that it
        has not since turned down."""
        out: dict[str, dict[str, set[str]]] = {}
        for party, stated in self.latest.items():
            confided = self.confided.get(party, {})
            believed: dict[str, set[str]] = {}
            for tid in self.topic_ids:
                said = set(stated[tid].acceptable) if tid in stated else set()
                named = confided.get(tid)
                if named:
                    said |= named
                believed[tid] = said
            out[party] = believed
        return out

    def inferred_zone(self) -> dict[str, set[str]]:
        """topic -> the options it believes every party would accept (empty until every
        party has spoken)."""
        believed = self.inferred_acceptable()
        if len(believed) < len(self.public.parties):
            return {t: set() for t in self.topic_ids}
        return {t: set.intersection(*(b[t] for b in believed.values())) for t in self.topic_ids}

    async def consider(
        self, dialogue: Sequence[PublicTurn], ctx: TurnContext
    ) -> Intervention | None:
        return self.decide(dialogue, ctx)

    def take_call_usage(self) -> dict[str, Usage]:
        """No model calls of its own to report (the session asks after every turn, and an
        attribute it lacks would cost a failed lookup each time)."""
        return {}

    def decide(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Intervention | None:
        by_topic, latest = self.estimate(dialogue)
        # `estimate` keeps the same mapping while no stance moves, and so the same score.
        if by_topic is not self._scored[0]:
            self._scored = (by_topic, consensus_score(by_topic))
        score = self._scored[1]
        self.history.append(score)
        last = dialogue[-1] if dialogue else None
        since = ctx.party_turn - self.last_position
        n = ctx.n_parties
        reason = None
        if len(latest) < n:
            return None  # not everyone has spoken yet; nothing to read
        if len(self.history) >= 2 and score < self.history[-2] - 1e-9 and since >= 2:
            reason = "drop"
        elif last is not None and last.tone == "hostile" and since >= 2:
            reason = "hostile"
        elif (
            len(self.history) > self.cooldown
            and score <= self.history[-1 - self.cooldown] + 1e-9
            and score < 1.0
            and since >= self.cooldown
        ):
            reason = "stall"
        if reason is None:
            return None
        self.last_position = ctx.party_turn
        proposal, notes = self._proposal(latest)
        self.proposed = proposal
        self.awaiting = set(self.party_ids)
        sep = "；" if self.t is _ZH else "; "
        summary = sep.join(f"{self.names[t]}: {self.labels[t][o]}" for t, o in proposal.items())
        words = [self.t[reason], *notes, self.t["ask"].format(summary=summary)]
        thought = f"public consensus {score:.2f}; reason {reason}"
        return Intervention(("" if self.t is _ZH else " ").join(words), proposal, thought)

    def _proposal(
        self, latest: dict[str, Mapping[str, Stance]]
    ) -> tuple[dict[str, str], list[str]]:
        """Per topic, the option most parties are believed to accept (then most backed).

        Belief is `inferred_acceptable`; the spoken note counts only what was said at the
        table, so the mediator never repeats a caucus confidence in the open."""
        proposal: dict[str, str] = {}
        notes: list[str] = []
        n = len(self.public.parties)
        believed = self.inferred_acceptable()
        for tid in self.topic_ids:
            stated = [s[tid] for s in latest.values() if tid in s]
            # How many parties are believed to accept each option, and how many back it.
            accept: dict[str, int] = {}
            for b in believed.values():
                for o in b[tid]:
                    accept[o] = accept.get(o, 0) + 1
            back: dict[str | None, int] = {}
            for s in stated:
                back[s.option] = back.get(s.option, 0) + 1
            best = None
            best_key = (-1, -1, 0)
            for rank, opt in enumerate(self.options[tid]):
                key = (accept.get(opt, 0), back.get(opt, 0), -rank)
                if key > best_key:
                    best, best_key = opt, key
            assert best is not None
            proposal[tid] = best
            if len(notes) < 2:  # only the first two topics' notes are spoken
                said = sum(1 for s in stated if best in s.acceptable)
                note = self.t["all"] if said >= n else self.t["most"]
                notes.append(note.format(topic=self.names[tid], label=self.labels[tid][best]))
        return proposal, notes
