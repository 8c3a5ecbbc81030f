"""Template voices: turn a rule party's structured action into words, in English or Chinese.

The words never carry information the structure lacks, so a reader (or an LLM judge) of
the transcript sees exactly what the rule policy decided, and nothing private.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from functools import lru_cache

from disputelab.agents.base import PublicScenario
from disputelab.episode import Signal, Stance, Tone
from disputelab.scenario.schema import Party

_EN = {
    "open_hostile": [
        "Frankly, what I'm hearing is not acceptable.",
        "I'm losing patience with this.",
        "We keep going round in circles, and I'm not going to be pushed.",
    ],
    "open_warm": [
        "I think we're getting somewhere.",
        "I appreciate the movement on the other side.",
        "Let's keep this constructive.",
    ],
    "open_neutral": ["Let me be clear about where I stand.", "Here is my position.", ""],
    "firm": [
        "On {topic}, it has to be {label}.",
        "On {topic}, I need {label}; nothing else works.",
    ],
    "flex": [
        "On {topic}, I propose {label}, though I could live with {alt}.",
        "On {topic}, my preference is {label}; {alt} would also be workable.",
    ],
    "move": [
        "I can move on {topic}: I'd now accept {label}.",
        "To meet you halfway on {topic}: {label}.",
    ],
    "agree": ["I can accept the package on the table: {summary}.", "Agreed, then: {summary}."],
    "walk": [
        "This is going nowhere. I'm done here; we'll take our chances elsewhere.",
        "I've heard enough. I'm walking away from these talks.",
    ],
    "accept": ["I accept the proposal as it stands.", "Yes. I can sign up to this."],
    "uncertain": [
        "I'm not sure. I need time before I can commit to this.",
        "I can't say yes today; parts of this still trouble me.",
    ],
    "reject": [
        "No. I cannot accept this; I would rather go to court.",
        "I reject the proposal. It does not meet what I need.",
    ],
    "feel": ["My satisfaction with it: {level}."],
    "refuse": [
        "On {topic}, {label} does not work for me; it gives away too much of what I need.",
        "I can't take {label} on {topic}: that asks more of me than I can give.",
    ],
    "caucus": ["Between the two of us: on {topic}, I could also accept {label}."],
    "caucus_none": ["Between the two of us, I have nothing to add to what I said at the table."],
}

_ZH = {
    "open_hostile": [
        "说实话，你们的立场我无法接受。",
        "我的耐心快用完了。",
        "我们一直在原地打转，我不会被逼着让步。",
    ],
    "open_warm": ["我觉得我们在取得进展。", "感谢对方做出的让步。", "我们继续建设性地谈下去吧。"],
    "open_neutral": ["我先说明我的立场。", "这是我的看法。", ""],
    "firm": ["关于{topic}，必须是{label}。", "关于{topic}，我只能接受{label}。"],
    "flex": [
        "关于{topic}，我提议{label}，{alt}我也可以考虑。",
        "关于{topic}，我倾向于{label}；{alt}也可以商量。",
    ],
    "move": ["关于{topic}，我可以让一步：接受{label}。", "为了推进，关于{topic}我同意{label}。"],
    "agree": ["我可以接受现在的方案：{summary}。", "那就这么定了：{summary}。"],
    "walk": ["这样谈下去没有意义，我退出。", "我听够了，我决定退出这次调解。"],
    "accept": ["我接受这个方案。", "可以，我同意按这个方案办。"],
    "uncertain": ["我还拿不定主意，需要再考虑。", "今天我没法答应，有些地方我还不放心。"],
    "reject": ["我不能接受这个方案，宁可去法院。", "我拒绝这个方案，它达不到我的基本要求。"],
    "feel": ["我对它的满意程度：{level}。"],
    "refuse": [
        "关于{topic}，{label}我不能接受，这让我让得太多了。",
        "{topic}上的{label}我接受不了，这超出了我能让步的范围。",
    ],
    "caucus": ["私下跟您说：关于{topic}，{label}我也可以接受。"],
    "caucus_none": ["私下说，我没有什么要补充的，和我在桌上说的一样。"],
}
_LEVEL_ZH = {
    "very low": "非常低",
    "low": "低",
    "medium": "中等",
    "high": "高",
    "very high": "非常高",
}


# The opening phrase's template key by tone.
_OPENERS = {"hostile": "open_hostile", "warm": "open_warm", "neutral": "open_neutral"}
# Every wording of a topic's phrase, by (topic, stance, whether it moved).
Phrases = dict[tuple[str, Stance, bool], tuple[str, ...]]
PHRASES_LIMIT = 100_000  # phrases kept per set of words, and sets of words kept


class PhraseMemo:
    """Rendered phrases of `Voice._wordings`, per set of words (templates, topic names
    and option labels; see `Voice._words`): the voices of one run share one
    (`RuleMemos.phrases`), and so every episode of the run that uses the same words.
    Bounded: at most `limit` sets, each of at most `limit` phrases."""

    __slots__ = ("_sets", "limit")

    def __init__(self, limit: int = PHRASES_LIMIT) -> None:
        self.limit = limit
        self._sets: dict[object, Phrases] = {}

    def phrases(self, words: object) -> Phrases:
        """The phrases rendered so far from `words`."""
        known = self._sets.get(words)
        if known is None:
            if len(self._sets) >= self.limit:
                self._sets.clear()
            known = self._sets[words] = {}
        return known

    def fullest(self) -> int:
        """How many phrases the fullest set holds."""
        return max((len(p) for p in self._sets.values()), default=0)


@lru_cache(maxsize=8192)
def _render(template: str, topic: str, label: str, alt: str) -> str:
    """Fill a template; cached, since the same phrases recur across turns and episodes."""
    return template.format(topic=topic, label=label, alt=alt)


class Voice:
    """Phrases a party's action from templates, varied by a seeded random generator.

    `phrases` is where it keeps the phrases it renders, shared with the other voices of a
    run; a voice given none keeps its own."""

    def __init__(
        self,
        public: PublicScenario,
        party: Party,
        rng: random.Random,
        phrases: PhraseMemo | None = None,
    ) -> None:
        self.public = public
        self.party = party
        self.rng = rng
        self.t = _ZH if public.language.startswith("zh") else _EN
        self.names = {t.id: t.name for t in public.topics}
        self.labels = {(t.id, o.id): o.label for t in public.topics for o in t.options}
        # The topics this party talks about when nothing moved: its two heaviest.
        self.priorities = sorted(self.names, key=lambda t: -party.weights.get(t, 0))[:2]
        self.zh = self.t is _ZH
        # Every wording of a topic's phrase, by (topic, stance, whether it moved): parties
        # restate the same stances turn after turn, so each is rendered once (`_words`).
        self._phrases: Phrases | None = None
        self._phrase_memo = PhraseMemo() if phrases is None else phrases

    def _pick(self, key: str) -> str:
        options = self.t[key]
        return options[int(self.rng.random() * len(options))]

    def _label(self, topic_id: str, option: str | None) -> str:
        if option is None:
            return "?"
        return self.labels.get((topic_id, option), option)

    def refusal(self, utterance: str, rejected: Sequence[tuple[str, str]]) -> str:
        """`utterance` with the reason it turns down a mediator's package: the first of the
        (topic, option) pairs it cannot accept. The wording is a fixed choice, so refusing
        draws nothing from the party's random stream (a subclass's own templates stay)."""
        if not rejected:
            return utterance
        refuse = (_ZH if self.zh else _EN)["refuse"]
        topic_id, option = rejected[0]
        template = refuse[len(rejected) % len(refuse)]
        reason = _render(template, self.names[topic_id], self._label(topic_id, option), "")
        return ("" if self.zh else " ").join(p for p in (reason, utterance) if p)

    def caucus(self, named: Mapping[str, Stance]) -> str:
        """Words for a private caucus with the mediator: the options it names per topic."""
        t = _ZH if self.zh else _EN
        parts = []
        for topic_id, s in named.items():
            if s.acceptable:
                alt = ("或" if self.zh else " or ").join(
                    self._label(topic_id, o) for o in s.acceptable
                )
                parts.append(_render(t["caucus"][0], self.names[topic_id], alt, ""))
        if not parts:
            return t["caucus_none"][0]
        return ("" if self.zh else " ").join(parts)

    def verdict(self, decision: str, satisfaction: str) -> str:
        """Words for a closure verdict: the decision, then how satisfied the party is."""
        level = _LEVEL_ZH.get(satisfaction, satisfaction) if self.zh else satisfaction
        joiner = "" if self.zh else " "
        return joiner.join([self._pick(decision), self.t["feel"][0].format(level=level)])

    def speak(
        self,
        stances: Mapping[str, Stance],
        signal: Signal,
        tone: Tone,
        changed: Sequence[str],
        others: Sequence[str],
    ) -> str:
        """One utterance for this action."""
        if signal is Signal.WALK_AWAY:
            return self._pick("walk")
        if signal is Signal.CONSENSUS:
            sep = "；" if self.zh else "; "
            summary = sep.join(
                f"{self.names[t]}: {self._label(t, s.option)}" for t, s in stances.items()
            )
            return self._pick("agree").format(summary=summary)
        random = self.rng.random
        # Each phrase takes one draw, as `_pick` makes, so the random stream is unchanged.
        openers = self.t[_OPENERS[tone]]
        opener = openers[int(random() * len(openers))]
        parts = [opener] if opener else []  # empty parts are left out of the utterance
        phrases = self._phrases
        if phrases is None:
            phrases = self._phrases = self._words()
        # Speak to what moved; otherwise to the topics that matter most to this party.
        focus = changed or self.priorities
        for topic_id in focus[:3]:
            s = stances[topic_id]
            moved = topic_id in changed
            key = (topic_id, s, moved)
            wordings = phrases.get(key)
            if wordings is None:
                if len(phrases) >= self._phrase_memo.limit:
                    phrases.clear()  # bounded, as the other memos of the rule policy
                wordings = phrases[key] = self._wordings(topic_id, s, moved)
            phrase = wordings[int(random() * len(wordings))]
            if phrase:
                parts.append(phrase)
        return ("" if self.zh else " ").join(parts)

    def _words(self) -> Phrases:
        """The shared memo of `_wordings` for this voice's words: its templates (read at
        its first turn, after any subclass has chosen them), topic names and labels."""
        t = self.t
        key = (
            self.zh,
            tuple(tuple(t[kind]) for kind in ("move", "flex", "firm")),
            tuple(self.names.items()),
            tuple(self.labels.items()),
        )
        return self._phrase_memo.phrases(key)

    def _wordings(self, topic_id: str, s: Stance, moved: bool) -> tuple[str, ...]:
        """Each template's phrase for a topic's stance: a move, a flexible stance (other
        options acceptable) or a firm one."""
        name = self.names[topic_id]
        label = self._label(topic_id, s.option)
        alts = [o for o in s.acceptable if o != s.option]
        if moved:
            return tuple(_render(t, name, label, "") for t in self.t["move"])
        if alts:
            alt = ("或" if self.zh else " or ").join(self._label(topic_id, o) for o in alts[:2])
            return tuple(_render(t, name, label, alt) for t in self.t["flex"])
        return tuple(_render(t, name, label, "") for t in self.t["firm"])
