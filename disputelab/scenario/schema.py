"""The scenario data model: who disputes what, and what each party privately wants.

Everything here is plain pydantic v2. Cross-field rules (a preference that names an
unknown option, weights that miss a topic) live in `Scenario` so that a scenario file
gets every problem reported at once, each with its field path.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from disputelab.scenario.tki import MODE_POINTS, Point, check_point, mode_of, point_text

Strategy = Literal["competing", "collaborating", "compromising", "avoiding", "accommodating"]
STRATEGIES: tuple[Strategy, ...] = (
    "competing",
    "collaborating",
    "compromising",
    "avoiding",
    "accommodating",
)

# SoCRATES's eight scenario domains, as the built-in scenarios spell them.
SOCRATES_DOMAINS: tuple[str, ...] = (
    "transactional",
    "healthcare",
    "environmental",
    "business-to-business",
    "public-policy",
    "international",
    "legal",
    "intra-organisational",
)

# What a scenario's `domain` may be: SoCRATES's eight, and "general" for the rest.
DOMAINS: tuple[str, ...] = ("general", *SOCRATES_DOMAINS)
# The languages the agents' prompts and voices are written in; a regional form
# (en-GB, zh-Hans) is the same language to them.
LANGUAGES: tuple[str, ...] = ("en", "zh")

_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$"
# Ids, titles and names are printed on one line by every command and end up in episode
# ids: bounded, so that a runaway value is refused by validation rather than wrapped for
# minutes by the terminal. The longest in the built-in and imported scenarios are 22, 70
# and 54 characters.
MAX_ID_CHARS = 128
MAX_TITLE_CHARS = 200
MAX_NAME_CHARS = 120


# Control characters (C0, DEL, C1) but the line breaks and tabs text is written with.
# A NUL or an escape sequence in a name is printed by every command and sent in every
# prompt; in a file meant for people, it is damage or mischief.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def control_problem(text: str) -> str | None:
    """Why `text` cannot be used (the first control character in it), or None."""
    found = _CONTROL.search(text)
    if found is None:
        return None
    return (
        f"holds the control character U+{ord(found.group()):04X} at character "
        f"{found.start() + 1}; only newlines and tabs may be in text"
    )


def _refuse_control(value: object) -> None:
    """Raise ValueError for a control character in any string in `value`."""
    if isinstance(value, str):
        problem = control_problem(value)
        if problem:
            raise ValueError(problem)
    elif isinstance(value, list | tuple):
        for item in value:
            _refuse_control(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_control(key)
            _refuse_control(item)


class _Strict(BaseModel):
    """Base for every schema model: unknown fields are errors, not silently dropped, and
    no text holds a control character other than a newline or a tab."""

    model_config = ConfigDict(extra="forbid", frozen=False)

    @field_validator("*", mode="after")
    @classmethod
    def _no_control_characters(cls, value: object) -> object:
        if isinstance(value, str | list | tuple | dict):
            _refuse_control(value)
        return value


def _listing(items: Iterable[str], limit: int = 12) -> str:
    """'a, b, c' for a short list, 'a, b, ... and 988 more' for a long one: a hostile file
    can list thousands of ids, and one problem line must not carry them all."""
    items = list(items)
    more = f" and {len(items) - limit:,} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def _repeated(items: list[str]) -> list[str]:
    """The items listed more than once, sorted (in linear time: lists come from files)."""
    return sorted(i for i, n in Counter(items).items() if n > 1)


# Said of `topics`, though it is as much about `terms`: either one gives the parties
# something to negotiate.
NOTHING_TO_NEGOTIATE = "is empty; add at least one topic with its options, or a numeric term"


class ScenarioProblems(ValueError):
    """Several cross-field problems, each with the dotted path of the field at fault."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{path}: {msg}" for path, msg in problems))


class Option(_Strict):
    id: str = Field(
        pattern=_ID_PATTERN,
        max_length=MAX_ID_CHARS,
        description="Short label, conventionally A, B, C…",
    )
    label: str = Field(min_length=1)
    description: str = ""


class Topic(_Strict):
    id: str = Field(pattern=_ID_PATTERN, max_length=MAX_ID_CHARS)
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    description: str = ""
    options: list[Option]

    @field_validator("options")
    @classmethod
    def _options_distinct(cls, options: list[Option]) -> list[Option]:
        if len(options) < 2:
            raise ValueError(f"has {len(options)} option(s), a topic needs at least 2")
        dupes = _repeated([o.id for o in options])
        if dupes:
            raise ValueError(f"option ids must be unique, repeated: {_listing(dupes)}")
        return options

    def option_ids(self) -> list[str]:
        return [o.id for o in self.options]

    def option(self, option_id: str) -> Option:
        for o in self.options:
            if o.id == option_id:
                return o
        raise KeyError(option_id)


class TopicPreference(_Strict):
    """A party's view of one topic: acceptable options best first, then the unacceptable."""

    ranking: list[str] = Field(description="Acceptable options, most preferred first.")
    unacceptable: list[str] = Field(default_factory=list)


class Fallback(_Strict):
    """What the party gets if talks fail (its BATNA), and its utility on the 0-1 scale."""

    description: str = ""
    utility: float = Field(ge=0.0, lt=1.0)


class CultureProfile(_Strict):
    """Hofstede's six dimensions, each 0-100."""

    name: str = ""
    power_distance: float = Field(default=50, ge=0, le=100)
    individualism: float = Field(default=50, ge=0, le=100)
    masculinity: float = Field(default=50, ge=0, le=100)
    uncertainty_avoidance: float = Field(default=50, ge=0, le=100)
    long_term_orientation: float = Field(default=50, ge=0, le=100)
    indulgence: float = Field(default=50, ge=0, le=100)


# Defaults of the turn-taking thresholds: the values every ProMediate case gives its
# simulated humans (its spec, section 3.8).
IM_THRESHOLD = 3.0
INTERRUPT_THRESHOLD = 2.5


class TurnTaking(_Strict):
    """Thresholds for motivated turn-taking, on the 1-5 motivation scale of Inner Thoughts.

    A participant voices its best new thought when the turn is open to anyone and the
    thought's motivation reaches `im_threshold`, or interrupts when the turn was predicted
    for someone else and it reaches `interrupt_threshold`. `system1_prob` is carried over
    from ProMediate's case files for the record; as there, nothing uses it (ProMediate's
    fast-thought generator is switched off).
    """

    im_threshold: float = Field(default=IM_THRESHOLD, ge=1.0, le=5.0)
    interrupt_threshold: float = Field(default=INTERRUPT_THRESHOLD, ge=1.0, le=5.0)
    system1_prob: float = Field(default=0.0, ge=0.0, le=1.0)


StrategyUpdate = Literal["static", "adaptive"]


def _unset(value: object) -> bool:
    return value is None


class Persona(_Strict):
    """How a party behaves. Its strategy is a point on the Thomas-Kilmann plane
    (`assertiveness`, `cooperativeness`, each 0-10); a mode name alone stands for that
    mode's point. Given a point, `strategy` is the mode the point is named by (by the
    thresholds at 7 and 3), filled in when left out."""

    strategy: Strategy = "compromising"
    assertiveness: float | None = Field(
        default=None,
        ge=0.0,
        le=10.0,
        exclude_if=_unset,
        description="How far the party pursues its own concerns, 0-10; with "
        "cooperativeness, the strategy as a point (unset: the mode's own point).",
    )
    cooperativeness: float | None = Field(
        default=None,
        ge=0.0,
        le=10.0,
        exclude_if=_unset,
        description="How far the party attends to the others' concerns, 0-10.",
    )
    strategy_update: StrategyUpdate = Field(
        default="static",
        exclude_if=lambda v: v == "static",
        description="static: the point stays; adaptive: after each bargaining round it "
        "moves towards the behaviour the party saw from the others (staged protocol).",
    )
    reactivity: float = Field(default=0.3, ge=0.0, le=1.0)
    im_threshold: float = Field(
        default=IM_THRESHOLD,
        ge=1.0,
        le=5.0,
        description="Motivation (1-5) at which the party takes a turn open to anyone.",
    )
    interrupt_threshold: float = Field(
        default=INTERRUPT_THRESHOLD,
        ge=1.0,
        le=5.0,
        description="Motivation (1-5) at which the party takes a turn predicted for another.",
    )
    system1_prob: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="ProMediate's fast-thought probability; recorded, unused (as there).",
    )
    culture: CultureProfile | None = Field(
        default=None,
        description="A country code with a built-in Hofstede profile (US, CN, KR), or the "
        "six Hofstede scores, each 0-100.",
    )
    traits: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _point_and_mode(self) -> Persona:
        given = (self.assertiveness is not None) + (self.cooperativeness is not None)
        if given == 1:
            raise ValueError(
                "give both assertiveness and cooperativeness (a point, each 0-10), or neither"
            )
        if given == 2:
            named = mode_of(self.point)
            if "strategy" in self.model_fields_set and self.strategy != named:
                raise ValueError(
                    f"strategy {self.strategy} does not name the point {point_text(self.point)}"
                    "; leave strategy out, or move the point"
                )
            self.strategy = named  # type: ignore[assignment]  # mode_of names a Strategy
        return self

    @property
    def point(self) -> Point:
        """(assertiveness, cooperativeness): the persona's own, else its mode's."""
        if self.assertiveness is not None and self.cooperativeness is not None:
            return (self.assertiveness, self.cooperativeness)
        return MODE_POINTS[self.strategy]

    def place(self, point: Point | None = None, mode: Strategy | None = None) -> None:
        """Set the strategy to a point (its mode named by the thresholds) or to a mode
        (its own point), in place."""
        if point is not None:
            a, c = check_point(*point)
            self.assertiveness, self.cooperativeness = a, c
            self.strategy = mode_of((a, c))  # type: ignore[assignment]
        elif mode is not None:
            self.assertiveness = self.cooperativeness = None
            self.strategy = mode

    @field_validator("culture", mode="before")
    @classmethod
    def _culture_by_code(cls, v: object) -> object:
        if not isinstance(v, str):
            return v
        from disputelab.scenario.cultures import DIMENSIONS, hofstede

        profiles = hofstede()
        if v.upper() in profiles:
            return profiles[v.upper()]
        raise ValueError(
            f"unknown culture {v[:40]!r}; use a country code ({', '.join(profiles)}) or a mapping "
            f"of the six Hofstede scores, each 0-100: {', '.join(DIMENSIONS)}"
        )


class Party(_Strict):
    id: str = Field(pattern=_ID_PATTERN, max_length=MAX_ID_CHARS)
    name: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    role: str = ""
    objective: str = Field(min_length=1)
    fallback: Fallback
    preferences: dict[str, TopicPreference]
    weights: dict[str, int]
    persona: Persona = Field(default_factory=Persona)
    private_notes: str = ""


class Fact(_Strict):
    source: str = ""
    content: str


class LegalContext(_Strict):
    dispute_type: str = ""
    brief: str = ""
    facts: list[Fact] = Field(default_factory=list)
    points_of_contention: list[str] = Field(default_factory=list)
    legal_bases: list[str] = Field(default_factory=list)
    retrieval_top_k: int = Field(
        default=0,
        ge=0,
        le=100,
        description="Legal bases retrieved for the mediator before it proposes (set by the "
        "expertise condition); 0 means the mediator relies on its own knowledge.",
    )
    stored_retrieval: list[str] | None = Field(
        default=None,
        description="Legal bases a retriever returned for this case, best first, as the case "
        "data stores them (AgentMediation's retrieve_articles); None when the case has no "
        "such list. While it is set, retrieval hands the mediator its first retrieval_top_k "
        "entries; expertise:ek-topK unsets it, so that BM25 ranks instead.",
    )


class NumericTerm(_Strict):
    """A continuous term such as a price, with each party's target and walk-away value."""

    id: str = Field(pattern=_ID_PATTERN, max_length=MAX_ID_CHARS)
    name: str = Field(max_length=MAX_NAME_CHARS)
    unit: str = ""
    targets: dict[str, float] = Field(default_factory=dict)
    reservations: dict[str, float] = Field(default_factory=dict)
    reference: float | None = Field(
        default=None,
        description="A known outcome to score against, hidden from every agent: the amount "
        "a court awarded, for a settlement's Acc@tau; None when there is none.",
    )


class DrawnStrategy(_Strict):
    """A strategy for one party of the scenario, that party drawn per episode from the
    episode's seed (AgentMediation's NUM=1 design); `party` names it once drawn."""

    strategy: Strategy
    assertiveness: float | None = Field(default=None, ge=0.0, le=10.0, exclude_if=_unset)
    cooperativeness: float | None = Field(default=None, ge=0.0, le=10.0, exclude_if=_unset)
    party: str | None = Field(default=None, exclude_if=_unset)

    @property
    def point(self) -> Point:
        if self.assertiveness is not None and self.cooperativeness is not None:
            return (self.assertiveness, self.cooperativeness)
        return MODE_POINTS[self.strategy]


class Scenario(_Strict):
    id: str = Field(pattern=_ID_PATTERN, max_length=MAX_ID_CHARS)
    title: str = Field(min_length=1, max_length=MAX_TITLE_CHARS)
    domain: str = Field(default="general", max_length=MAX_NAME_CHARS)
    language: str = Field(default="en", max_length=MAX_NAME_CHARS)
    background: str = Field(min_length=1)
    history: str = ""
    parties: list[Party]
    topics: list[Topic]
    legal: LegalContext | None = None
    terms: list[NumericTerm] = Field(default_factory=list)
    assumptions: list[str] = Field(
        default_factory=list,
        description="What an importer had to assume because the source did not say, one "
        "line each (a preference it could not read, an option no one mentioned); empty "
        "for a scenario written by hand.",
    )
    mediator: TurnTaking | None = Field(
        default=None,
        description="The mediator's turn-taking thresholds, as a ProMediate case gives them; "
        "recorded, not used by the built-in mediators, which decide when to speak themselves.",
    )
    drawn_strategy: DrawnStrategy | None = Field(
        default=None,
        exclude_if=_unset,
        description="A strategy one party plays, that party drawn from each episode's seed "
        "(the strategy:MODE@one condition sets it; the episode records whom it drew).",
    )

    @field_validator("language")
    @classmethod
    def _known_language(cls, v: str) -> str:
        if re.fullmatch(r"[a-z]{2}(-[A-Za-z]+)?", v) and v[:2] in LANGUAGES:
            return v
        raise ValueError(
            f"unknown language {v[:40]!r}; use {', '.join(LANGUAGES)} "
            "(or a regional form such as en-GB)"
        )

    @field_validator("domain")
    @classmethod
    def _known_domain(cls, v: str) -> str:
        if v in DOMAINS:
            return v
        raise ValueError(f"unknown domain {v[:40]!r}; use one of {', '.join(DOMAINS)}")

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        problems = list(_cross_field_problems(self))
        if problems:
            raise ScenarioProblems(problems)
        return self

    def topic(self, topic_id: str) -> Topic:
        for t in self.topics:
            if t.id == topic_id:
                return t
        raise KeyError(topic_id)

    def party(self, party_id: str) -> Party:
        for p in self.parties:
            if p.id == party_id:
                return p
        raise KeyError(party_id)


def _cross_field_problems(s: Scenario) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    if len(s.parties) < 2:
        problems.append(("parties", f"has {len(s.parties)} party, a dispute needs at least 2"))
    if not s.topics and not s.terms:
        problems.append(("topics", NOTHING_TO_NEGOTIATE))
    for field, ids in (
        ("parties", [p.id for p in s.parties]),
        ("topics", [t.id for t in s.topics]),
    ):
        dupes = _repeated(ids)
        if dupes:
            problems.append((field, f"ids must be unique, repeated: {_listing(dupes)}"))
    # Names are how parties address one another and how transcripts and prompts tell
    # them apart; two parties of one name (whatever its case or spacing) cannot be told.
    names = [" ".join(p.name.casefold().split()) for p in s.parties]
    repeated = [p.name for p, n in zip(s.parties, names, strict=True) if names.count(n) > 1]
    if repeated:
        problems.append(
            ("parties", f"names must tell the parties apart, repeated: {_listing(repeated)}")
        )
    topics = {t.id: t for t in s.topics}
    for i, party in enumerate(s.parties):
        base = f"parties[{i}]"
        problems += _weight_problems(base, party, topics)
        problems += _preference_problems(base, party, topics)
    party_ids = {p.id for p in s.parties}
    drawn = s.drawn_strategy
    if drawn is not None and drawn.party is not None and drawn.party not in party_ids:
        problems.append(
            ("drawn_strategy.party", f"unknown party {drawn.party!r}; use one of the parties")
        )
    for i, term in enumerate(s.terms):
        for field in ("targets", "reservations"):
            unknown = sorted(set(getattr(term, field)) - party_ids)
            if unknown:
                problems.append(
                    (
                        f"terms[{i}].{field}",
                        f"unknown party {_listing(unknown)}; "
                        f"use one of {_listing(sorted(party_ids))}",
                    )
                )
    return problems


def _weight_problems(base: str, party: Party, topics: dict[str, Topic]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    bad = [t for t, w in party.weights.items() if w <= 0]
    if bad:
        out.append((f"{base}.weights", f"must be positive integers, not for {_listing(bad)}"))
    total = sum(party.weights.values())
    if total != 100 and (topics or party.weights):  # a price-only case has no topic weights
        out.append((f"{base}.weights", f"sum is {total}, must be 100"))
    unknown = sorted(set(party.weights) - set(topics))
    if unknown:
        out.append(
            (
                f"{base}.weights",
                f"unknown topic {_listing(unknown)}; topics are {_listing(topics)}",
            )
        )
    missing = [t for t in topics if t not in party.weights]
    if missing:
        out.append(
            (
                f"{base}.weights",
                f"no weight for topic {_listing(missing)}; give every topic a positive weight",
            )
        )
    return out


def _preference_problems(
    base: str, party: Party, topics: dict[str, Topic]
) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for topic_id in party.preferences:
        if topic_id not in topics:
            out.append(
                (f"{base}.preferences.{topic_id}", f"unknown topic; topics are {_listing(topics)}")
            )
    for topic_id, topic in topics.items():
        path = f"{base}.preferences.{topic_id}"
        pref = party.preferences.get(topic_id)
        if pref is None:
            out.append((path, "missing; rank this topic's options for the party"))
            continue
        valid = topic.option_ids()
        known = set(valid)
        listed = pref.ranking + pref.unacceptable
        for opt in listed:
            if opt not in known:
                out.append((path, f"names unknown option {opt!r}; options are {_listing(valid)}"))
        dupes = _repeated(listed)
        if dupes:
            out.append((path, f"option {_listing(dupes)} listed more than once"))
        if not pref.ranking:
            out.append(
                (f"{path}.ranking", "no acceptable option; rank at least one option as acceptable")
            )
        given = set(listed)
        unlisted = [o for o in valid if o not in given]
        if unlisted:
            out.append(
                (
                    path,
                    f"option {_listing(unlisted)} neither ranked nor unacceptable; "
                    "list it in one of them",
                )
            )
    return out
