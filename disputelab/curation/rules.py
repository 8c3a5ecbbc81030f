"""Recast a seed into a Scenario by stated rules and our template library, with no model.

The rules, in order (each recorded in the scenario's `assumptions`, as `inferred:` when
the seed said it and `assumed:` when the library filled it in):

1. Domain: the seed file's, else the domain whose words (`library.DOMAIN_WORDS`) the
   seed uses most, else "general" (assumed).
2. Parties: every role word of `library.ROLE_WORDS` the seed uses, with up to two
   lower-case words before it ("the nurses' union"), is a party; one named after a
   possessive ("its customers") is not, nor one used as a verb ("they trust the
   council"), and a role word right before another is part of its name ("residents'
   group" is one party). The word gives the side; a word that
   does not (a firm) makes the claimant if no earlier party is one, else a respondent.
   At most one authority and four parties, in order of first mention; a missing
   claimant or respondent is the library's stand-in (assumed).
3. Topics: the library's topics whose words the seed uses, most used first, at most
   four; fewer than two are made up from the domain's default topics (assumed). A
   money topic's options are shares of the largest sum of money the seed states, if
   it states one.
4. Stances: the claimant side ranks a topic's options in order, the respondent in
   reverse, and either finds the other's favourite unacceptable (on a charged topic,
   nothing is unacceptable); an authority ranks the middle options first. When the
   seed uses words of accord and none of conflict, every party ranks the middle options
   first instead. A topic weighs what the library says for the side, plus 2 for each
   sentence that names both the party and one of the topic's words.
5. Persona: a party whose sentences hold a conflict word is played as competing and
   reactive; otherwise, and for its fallback, the side's template holds (assumed).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from disputelab.curation.library import (
    ACCORD_WORDS,
    CONFLICT_WORDS,
    DOMAIN_TOPICS,
    DOMAIN_WORDS,
    LIBRARY_VERSION,
    ROLE_WORDS,
    SIDE_TEMPLATES,
    TOPICS,
    Side,
    TopicTemplate,
    topic_template,
)
from disputelab.curation.recast import (
    LETTERS,
    Draft,
    DraftParty,
    DraftProblems,
    DraftStance,
    DraftTopic,
    RecastFailed,
    to_scenario,
)
from disputelab.curation.sources import Seed
from disputelab.scenario.schema import Scenario

MAX_PARTIES = 4
MAX_TOPICS = 4
MAX_BACKGROUND_CHARS = 2_000
CO_MENTION_WEIGHT = 2
# Words that end a party's name when read backwards from its role word.
_STOP_WORDS = (
    "a an the its their his her our my your this that these those of to and or but in "
    "on at by for with from as is was were be been has have had who which says said "
    "only also both each every some any all no not than then"
)
_STOP = frozenset(_STOP_WORDS.split())
_POSSESSIVE = frozenset({"its", "their", "his", "her", "our", "my", "your"})
# Words that start the object of a verb: a role word right before one is used as a verb.
_OBJECT_STARTS = _POSSESSIVE | {"the", "a", "an", "them", "him", "us", "me", "this", "that"}
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n(?=[A-Z#])")
_MONEY = re.compile(
    r"(?P<pre>[$£€])\s?(?P<num>\d[\d,]*(?:\.\d+)?)(?:\s?(?P<mult>million|thousand|[km]\b))?"
    r"|(?P<num2>\d[\d,]*(?:\.\d+)?)\s?(?P<mult2>million|thousand)?\s?(?P<post>dollars|pounds|"
    r"euros|USD|GBP|EUR)\b"
)
_MULTIPLIER = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6}


@dataclass
class Notes:
    """What the rules read from the seed and what the library supplied, one line each."""

    inferred: list[str] = field(default_factory=list)
    assumed: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        head = (
            f"recast by rules (template library {LIBRARY_VERSION}), no model: 'inferred' "
            "lines were read from the seed by a stated rule, 'assumed' lines come from the "
            "template library because the seed did not say"
        )
        return [
            head,
            *(f"inferred: {x}" for x in self.inferred),
            *(f"assumed: {x}" for x in self.assumed),
        ]


@dataclass
class FoundParty:
    """A party the seed names: its name, role word, side, and the sentences naming it."""

    name: str
    role: str
    side: Side | None
    sentences: set[int]
    source: str  # "seed" or "library"


@dataclass(frozen=True)
class Money:
    """A sum of money as the seed writes it: the number and the currency around it."""

    value: float
    prefix: str
    suffix: str

    def times(self, share: float) -> str:
        v = self.value * share
        number = f"{v / 1e6:g} million" if v >= 1e6 else f"{v:,.0f}"
        return f"{self.prefix}{number}{' ' + self.suffix if self.suffix else ''}"


def quoted(text: str) -> str:
    """A name as provenance lines write it: in double quotes (YAML keeps them as is)."""
    return f'"{text}"'


def sentences_of(text: str) -> list[str]:
    """The seed's sentences (its title line is the first), each on one line."""
    parts = (" ".join(s.split()) for s in _SENTENCE_END.split(text))
    return [p.lstrip("# ") for p in parts if p.strip("# ")]


def word_pattern(stem: str) -> str:
    """A stem as a regex: it begins a word; a stem ending in `$` is the whole word."""
    if stem.endswith("$"):
        return rf"\b{re.escape(stem[:-1])}\b"
    return rf"\b{re.escape(stem)}"


def has_word(text: str, stems: Sequence[str]) -> list[str]:
    """The stems of `stems` that begin a word of `text` (case-insensitive)."""
    low = text.lower()
    return [s.rstrip("$") for s in stems if re.search(word_pattern(s), low)]


def count_words(text: str, stems: Sequence[str]) -> int:
    """How many times the stems of `stems` begin a word of `text` (case-insensitive)."""
    low = text.lower()
    return sum(len(re.findall(word_pattern(s), low)) for s in stems)


def read_domain(seed: Seed, text: str, notes: Notes) -> str:
    """Rule 1: the seed's own domain, else the one whose words it uses most."""
    if seed.domain:
        notes.inferred.append(f"domain {seed.domain}, as the seed file gives it")
        return seed.domain
    scores = {d: count_words(text, words) for d, words in DOMAIN_WORDS.items()}
    best = max(scores, key=lambda d: scores[d])
    if scores[best] == 0:
        notes.assumed.append("domain general: the seed uses none of the domains' words")
        return "general"
    found = ", ".join(has_word(text, DOMAIN_WORDS[best]))
    notes.inferred.append(f"domain {best}, from the words {found}")
    return best


def _role_of(token: str) -> tuple[str, Side | None] | None:
    """The role word a token is (plural and possessive forms too), with its side."""
    word = token.lower().replace("’", "'").removesuffix("'s").rstrip("'")
    for r in ROLE_WORDS:
        if word in (r.word, r.word + "s", r.word.removesuffix("s")):
            return r.word, r.side
    return None


def _modifiers(sentence: str, tokens: list[re.Match[str]], i: int) -> list[str] | None:
    """Up to two plain lower-case words right before token `i`, or None when the
    phrase is someone's (a possessive pronoun before it)."""
    words: list[str] = []
    j = i - 1
    while j >= 0 and len(words) < 2:
        tok = tokens[j].group()
        between = sentence[tokens[j].end() : tokens[j + 1].start()]
        if between.strip() or tok.lower().endswith(("'s", "’s")):
            break
        if tok.lower() in _POSSESSIVE:
            return None
        if tok.lower() in _STOP or not tok.islower():
            break
        words.insert(0, tok)
        j -= 1
    if j >= 0 and tokens[j].group().lower() in _POSSESSIVE:
        between = sentence[tokens[j].end() : tokens[j + 1].start()]
        return None if not between.strip() else words
    return words


def read_parties(sentences: list[str]) -> list[FoundParty]:
    """Rule 2, first half: every party the seed names, in order of first mention."""
    found: dict[str, FoundParty] = {}
    for n, sentence in enumerate(sentences):
        tokens = list(_WORD.finditer(sentence))
        for i, m in enumerate(tokens):
            role = _role_of(m.group())
            if role is None:
                continue
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            if nxt and not sentence[m.end() : nxt.start()].strip():
                if _role_of(nxt.group()):
                    continue  # "residents' group": the group is the party
                if nxt.group().lower() in _OBJECT_STARTS:
                    continue  # "they trust the council": a verb, not a party
            if role[0] in found:
                found[role[0]].sentences.add(n)
            mods = _modifiers(sentence, tokens, i)
            if mods is None:
                continue
            head = m.group().replace("’", "'").removesuffix("'s")
            name = " ".join([*mods, head])
            name = name[0].upper() + name[1:]
            party = found.setdefault(role[0], FoundParty(name, role[0], role[1], set(), "seed"))
            party.sentences.add(n)
            if len(name) > len(party.name):
                party.name = name
    return list(found.values())


def assign_sides(parties: list[FoundParty], notes: Notes) -> list[FoundParty]:
    """Rule 2, second half: sides for the parties found, the caps, and stand-ins."""
    kept: list[FoundParty] = []
    for p in parties:
        taken = [q.side for q in kept]
        if p.side == "authority" and "authority" in taken:
            notes.inferred.append(
                f"{quoted(p.name)} left out: the seed names an authority before it"
            )
            continue
        if len(kept) == MAX_PARTIES:
            notes.inferred.append(f"{quoted(p.name)} left out: at most {MAX_PARTIES} parties")
            continue
        if p.side is None:
            p.side = "respondent" if "claimant" in taken else "claimant"
            why = "an earlier party is" if p.side == "respondent" else "no earlier party is"
            notes.assumed.append(
                f"{quoted(p.name)} is the {p.side}: its role word {quoted(p.role)} does not "
                f"tell, and {why} the claimant"
            )
        else:
            notes.inferred.append(
                f"party {quoted(p.name)}, {p.side}, from the role word {quoted(p.role)}"
            )
        kept.append(p)
    for side in ("claimant", "respondent"):
        if side not in [q.side for q in kept]:
            if len(kept) == MAX_PARTIES:
                dropped = kept.pop()
                notes.assumed.append(f"{quoted(dropped.name)} left out for a {side} stand-in")
            stand_in = SIDE_TEMPLATES[side].stand_in
            kept.append(FoundParty(stand_in, side, side, set(), "library"))
            notes.assumed.append(f"party {quoted(stand_in)}: the seed names no {side}")
    return kept


def read_topics(sentences: list[str], domain: str, notes: Notes) -> list[TopicTemplate]:
    """Rule 3: the topics the seed calls up, most used first, padded from the domain."""
    text = " ".join(sentences)
    hits = {t.code: count_words(text, t.keywords) for t in TOPICS}
    called = sorted((t for t in TOPICS if hits[t.code]), key=lambda t: -hits[t.code])
    chosen = called[:MAX_TOPICS]
    for t in chosen:
        words = ", ".join(has_word(text, t.keywords))
        notes.inferred.append(f"topic {t.code}, from the words {words}")
    for t in called[MAX_TOPICS:]:
        notes.inferred.append(f"topic {t.code} left out: at most {MAX_TOPICS} topics")
    for code in DOMAIN_TOPICS[domain]:
        if len(chosen) >= 2:
            break
        if all(t.code != code for t in chosen):
            chosen.append(topic_template(code))
            notes.assumed.append(f"topic {code}, a default of the {domain} domain")
    return chosen


def read_money(text: str) -> Money | None:
    """The largest sum of money the text states, or None."""
    sums: list[Money] = []
    for m in _MONEY.finditer(text):
        num = m["num"] or m["num2"]
        mult = (m["mult"] or m["mult2"] or "").lower()
        value = float(num.replace(",", "")) * _MULTIPLIER.get(mult, 1.0)
        sums.append(Money(value, m["pre"] or "", m["post"] or ""))
    return max(sums, key=lambda s: s.value, default=None)


def topic_options(t: TopicTemplate, money: Money | None, notes: Notes) -> list[str]:
    """The topic's option labels: shares of the seed's sum where the topic takes one."""
    if t.amount_options is None:
        notes.assumed.append(f"options of {t.code} from the template")
        return list(t.options)
    if money is None:
        notes.assumed.append(f"options of {t.code} in words, not sums: the seed states no sum")
        return list(t.options)
    shares = {"amount": money.times(1.0), "three_quarters": money.times(0.75)}
    shares["half"] = money.times(0.5)
    notes.inferred.append(f"options of {t.code} are shares of {shares['amount']}, from the seed")
    return [o.format(**shares) for o in t.amount_options]


def tone(sentences: list[str], notes: Notes) -> bool:
    """Rule 4's switch: True (the sides already agree in the main) when the seed uses
    words of accord and none of conflict."""
    text = " ".join(sentences)
    conflict, accord = has_word(text, CONFLICT_WORDS), has_word(text, ACCORD_WORDS)
    if accord and not conflict:
        notes.inferred.append(
            f"the sides agree in the main (words {', '.join(accord)}, no word of conflict): "
            "every party ranks the middle options first"
        )
        return True
    if conflict:
        notes.inferred.append(f"the sides are opposed (words {', '.join(conflict)})")
    else:
        notes.assumed.append("the sides are opposed: the seed has no words of accord")
    return False


def ranking(side: Side, t: TopicTemplate, agreed: bool) -> tuple[list[str], list[str]]:
    """Rule 4: a side's ranking and unacceptable options on a topic (letters)."""
    letters = list(LETTERS[: len(t.options)])
    if agreed or side == "authority":
        middle = letters[1:-1]
        return [*middle, letters[0], letters[-1]], []
    ordered = letters if side == "claimant" else letters[::-1]
    if t.charged:
        return ordered, []
    return ordered[:-1], ordered[-1:]


def party_weights(
    p: FoundParty, topics: list[TopicTemplate], sentences: list[str], notes: Notes
) -> list[int]:
    """Rule 4's weights: the side's template weight, plus 2 per sentence naming both the
    party and one of the topic's words; a tie everywhere is broken for the first topic."""
    side: Side = p.side or "claimant"
    weights: list[int] = []
    raised: list[str] = []
    for t in topics:
        both = sum(1 for n in p.sentences if has_word(sentences[n], t.keywords))
        weights.append(t.weights[side] + CO_MENTION_WEIGHT * both)
        if both:
            raised.append(f"{t.code} (+{CO_MENTION_WEIGHT * both})")
    if raised:
        notes.inferred.append(
            f"{quoted(p.name)} weighs up {', '.join(raised)}: sentences name it with the topic"
        )
    if len(set(weights)) == 1 and len(weights) > 1:
        weights[0] += 1
        notes.assumed.append(f"{quoted(p.name)} weighs {topics[0].code} most: all else was equal")
    return weights


def draft_party(
    p: FoundParty,
    topics: list[TopicTemplate],
    sentences: list[str],
    agreed: bool,
    notes: Notes,
) -> DraftParty:
    """One party of the draft, by rules 4 and 5."""
    side: Side = p.side or "claimant"
    template = SIDE_TEMPLATES[side]
    weights = party_weights(p, topics, sentences, notes)
    stances = [
        DraftStance(topic=t.code, ranking=r, unacceptable=u, weight=w)
        for t, w in zip(topics, weights, strict=True)
        for r, u in [ranking(side, t, agreed)]
    ]
    heated = sorted({w for n in p.sentences for w in has_word(sentences[n], CONFLICT_WORDS)})
    if heated and side != "authority":
        strategy, reactivity = "competing", "reactive"
        notes.inferred.append(
            f"{quoted(p.name)} competes and reacts: its sentences say {', '.join(heated)}"
        )
    else:
        strategy, reactivity = template.strategy, template.reactivity
        notes.assumed.append(
            f"{quoted(p.name)} is {strategy} and {reactivity}: the {side} template"
        )
    notes.assumed.append(
        f"{quoted(p.name)} falls back on {template.fallback_strength} terms: the {side} template"
    )
    return DraftParty(
        name=p.name,
        role=f"{side} ({p.role})" if p.source == "seed" else side,
        objective=_objective(topics, stances),
        fallback=template.fallback,
        fallback_strength=template.fallback_strength,
        strategy=strategy,
        reactivity=reactivity,
        stances=stances,
    )


def _objective(topics: list[TopicTemplate], stances: list[DraftStance]) -> str:
    """What the party wants most: its first choice on its two heaviest topics."""
    by_weight = sorted(zip(topics, stances, strict=True), key=lambda ts: -ts[1].weight)[:2]
    wants = [
        f"{t.name.lower()}: {t.options[LETTERS.index(s.ranking[0])].lower()}" for t, s in by_weight
    ]
    return "Wants " + "; ".join(wants) + "."


def _story(sentences: list[str], notes: Notes) -> tuple[str, str]:
    """Background (the seed's sentences, its conflict ones apart) and history (those)."""
    body = sentences[1:] or sentences
    history = [s for s in body if has_word(s, CONFLICT_WORDS)]
    facts = [s for s in body if s not in history] or body
    kept: list[str] = []
    for s in facts:
        if len(" ".join([*kept, s])) > MAX_BACKGROUND_CHARS:
            break
        kept.append(s)
    kept = kept or [facts[0][:MAX_BACKGROUND_CHARS]]
    if len(kept) < len(facts):
        notes.inferred.append(f"background: the first {len(kept)} of {len(facts)} sentences")
    return " ".join(kept), " ".join(history)[: MAX_BACKGROUND_CHARS * 2]


def _titled(seed: Seed) -> str:
    """The seed's text with its title as the first line (a seed file's title is its
    first line already; a JSONL seed's may be given apart)."""
    first = seed.text.strip().splitlines()[0].lstrip("#").strip()
    return seed.text if first == seed.title else f"{seed.title}\n\n{seed.text}"


def rule_draft(seed: Seed) -> tuple[Draft, Notes]:
    """The draft the rules make of a seed, and the notes of what came from where."""
    notes = Notes()
    sentences = sentences_of(_titled(seed))
    domain = read_domain(seed, " ".join(sentences), notes)
    parties = assign_sides(read_parties(sentences), notes)
    topics = read_topics(sentences, domain, notes)
    money = read_money(seed.text)
    agreed = tone(sentences, notes)
    draft_topics = [
        DraftTopic(code=t.code, name=t.name, options=topic_options(t, money, notes)) for t in topics
    ]
    background, history = _story(sentences, notes)
    draft = Draft(
        title=seed.title,
        domain=domain,
        background=background,
        history=history,
        topics=draft_topics,
        parties=[draft_party(p, topics, sentences, agreed, notes) for p in parties],
    )
    return draft, notes


def rule_recast(seed: Seed) -> Scenario:
    """The scenario the rules make of a seed, its `assumptions` saying what came whence."""
    draft, notes = rule_draft(seed)
    try:
        scenario = to_scenario(draft, seed)
    except DraftProblems as exc:
        raise RecastFailed("validate", "; ".join(exc.problems[:5])) from None
    return scenario.model_copy(update={"assumptions": notes.lines()})


class RuleRecaster:
    """The offline recaster: `rule_recast` behind the pipeline's recaster interface."""

    async def recast_seed(self, seed: Seed) -> Scenario:
        return rule_recast(seed)
