"""A paraphrase voice for rule parties, so a judge reads dialogue, not the oracle's inputs.

The template voice (`agents/parties/voice.py`) names every option a party would accept
("I propose X, though I could live with Y"): a judge reading it reads the very sets the
oracle is computed from. This voice says what a negotiator would say instead. It names
the option a party backs and whether it has room to move ("I'm not wedded to it"), never
which other options it would accept, and it draws each sentence from several
paraphrases per move, chosen by the party's seeded generator. English only: in other
languages it speaks with the template voice.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from disputelab.agents.base import PublicScenario
from disputelab.agents.parties.voice import PhraseMemo, Voice
from disputelab.episode import Signal, Stance, Tone
from disputelab.scenario.schema import Party

PARAPHRASES: dict[str, list[str]] = {
    "open_hostile": [
        "Frankly, I'm not impressed by what I've heard so far.",
        "I have to say, this is getting frustrating.",
        "We seem to be going backwards, and I don't appreciate being pressured.",
        "I'll be blunt: my patience is wearing thin.",
    ],
    "open_warm": [
        "That's helpful, thank you.",
        "I think there's something we can work with here.",
        "I'm glad we're talking properly now.",
        "Good, this feels more constructive.",
    ],
    "open_neutral": [
        "Let me say where I am.",
        "To be clear about my position:",
        "Right.",
        "",
    ],
    # A party with no alternative it would accept: firm, without listing anything else.
    "firm": [
        "On {topic}, {label} is the only thing I can sign.",
        "{topic}: for us it has to be {label}, full stop.",
        "I won't move on {topic}; it's {label}.",
        "When it comes to {topic}, anything short of {label} is a non-starter.",
    ],
    # A party that would accept other options: it says so, but not which ones.
    "flex": [
        "On {topic}, I'd like {label}, but I'm not wedded to it.",
        "For {topic}, {label} is my first choice; there is some room to talk.",
        "I lean towards {label} on {topic}, though I can see other ways through.",
        "{topic}: {label} suits me best, but I'm listening.",
    ],
    "move": [
        "Fine, on {topic} I'll come round to {label}.",
        "I've thought again about {topic}; {label} would work for me now.",
        "For the sake of progress on {topic}, I can go with {label}.",
        "On {topic} I'll shift: {label}.",
    ],
    "agree": [
        "Then I think we have a deal: {summary}.",
        "I'm content with where we've landed: {summary}.",
        "Let's shake on it: {summary}.",
    ],
    "walk": [
        "I don't see the point in carrying on. We're leaving.",
        "That's it for me. I'll take my chances elsewhere.",
        "I'm not prepared to sit here any longer; we're done.",
    ],
    "accept": [
        "I can go along with that proposal.",
        "Yes, that works for me.",
        "All right, I'll accept it as it is.",
    ],
    "uncertain": [
        "I'm torn. Give me some time with it.",
        "I can't commit today; some of it still worries me.",
        "Maybe. I'd need to think it over first.",
    ],
    "reject": [
        "No, that doesn't work for me; I'd sooner see a judge.",
        "I can't accept that. It misses what matters to me.",
        "I'm turning that down.",
    ],
    "feel": ["How I feel about it overall: {level}."],
}


def _common(name: str) -> str:
    """A topic name inside a sentence: "Shift pattern" -> "shift pattern", but "NHS
    funding" and one-letter names stay as written."""
    if len(name) > 1 and name[0].isupper() and name[1].islower():
        return name[0].lower() + name[1:]
    return name


class ParaphraseVoice(Voice):
    """Speaks a rule party's move in varied words, without its acceptable sets."""

    def __init__(
        self,
        public: PublicScenario,
        party: Party,
        rng: random.Random,
        phrases: PhraseMemo | None = None,
    ) -> None:
        super().__init__(public, party, rng, phrases)
        if not self.zh:
            self.t = PARAPHRASES

    def speak(
        self,
        stances: Mapping[str, Stance],
        signal: Signal,
        tone: Tone,
        changed: Sequence[str],
        others: Sequence[str],
    ) -> str:
        if self.zh or signal in (Signal.WALK_AWAY, Signal.CONSENSUS):
            return super().speak(stances, signal, tone, changed, others)
        parts = [self._pick(f"open_{tone}")]
        for topic_id in (changed or self.priorities)[:3]:
            s = stances[topic_id]
            room = any(o != s.option for o in s.acceptable)
            move = "move" if topic_id in changed else ("flex" if room else "firm")
            text = self._pick(move).format(
                topic=_common(self.names[topic_id]), label=f"'{self._label(topic_id, s.option)}'"
            )
            parts.append(text[0].upper() + text[1:])
        return " ".join(p for p in parts if p)
