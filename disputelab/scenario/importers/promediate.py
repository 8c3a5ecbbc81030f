"""Import ProMediate case files (ProMediate paper) into Scenarios.

A case gives shared text (`instruction`, `issues`, `options`), topic names (`topics`,
only in some cases) and one markdown profile per party (`names`), whose `## Opinions`
section states choices in prose: "First choice: (a) ...", "Unacceptable: (c)", or
"You prefer open formulary ... will not consider exclusive". Choices are read from
option letters first, then from option words; whatever cannot be read is filled in with a
warning, never silently. Cases carry no numeric weights or fallbacks, so those get neutral
defaults, also with a warning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from disputelab.scenario.importers.promediate_text import (
    ParsedOption,
    ParsedTopic,
    Reading,
    read_choices,
    words,
)
from disputelab.scenario.importers.promediate_text import (
    parse_options as read_option_lists,
)
from disputelab.scenario.inputs import MAX_DATASET_BYTES, load_json, path_kind, read_user_file
from disputelab.scenario.schema import (
    Fallback,
    Option,
    Party,
    Persona,
    Scenario,
    Topic,
    TopicPreference,
    TurnTaking,
)

# The prose reader also passes over words every option of a topic tends to share.
_PROSE_STOP = frozenset({"year", "contract", "status", "support"})
_ORDINALS = ("first", "second", "third", "fourth", "fifth")
_NEGATIVE = re.compile(r"(unacceptable|will not|won't|not accept|cannot accept|refuse|never)", re.I)


@dataclass(frozen=True)
class UnreadPreference:
    """A party's opinion on a topic that the rules could not read: what a model is asked."""

    party: str
    topic: Topic
    text: str
    why: str


@dataclass(frozen=True)
class ModelReading:
    """A model's reading of an `UnreadPreference`; `error` is set when it failed."""

    party: str
    topic_id: str
    ranking: list[str]
    unacceptable: list[str]
    error: str = ""


@dataclass
class ImportResult:
    scenario: Scenario
    warnings: list[str] = field(default_factory=list)
    unread: list[UnreadPreference] = field(default_factory=list)


def _slug(text: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s[:40] or "x"


def parse_options(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """'1. Name:\\n(a) ...\\n(b) ...' -> [(name, [(id, label), ...]), ...], ids A, B, C...
    in listed order (see `promediate_text.parse_options` for the shapes it reads)."""
    return [(t.heading, [(o.id, o.label) for o in t.options]) for t in read_option_lists(text)]


def _opinion_blocks(profile: str, topics: list[Topic]) -> list[str]:
    """The '## Opinions' section split into one block per topic.

    Most cases number the issues ('1)' or '1.'); IAS and River use '### Issue' subsections
    instead, which ProMediate's own loader misread (it kept only the last one). Those are
    matched to topics by name where the header names one, else taken in order.
    """
    m = re.search(r"##\s*Opinions?(.*?)(?:\n##\s|\Z)", profile, re.S | re.I)
    section = m.group(1) if m else ""
    n = len(topics)
    if re.search(r"(?m)^\s*###\s", section):
        headed = re.split(r"(?m)^\s*###\s*", section)[1:]
        by_topic: dict[int, str] = {}
        unplaced: list[str] = []
        for block in headed:
            head = block.split("\n", 1)[0]
            hit = next(
                (i for i, t in enumerate(topics) if i not in by_topic and _same_issue(head, t)),
                None,
            )
            if hit is None:
                unplaced.append(block)
            else:
                by_topic[hit] = block
        for i in range(n):
            if i not in by_topic and unplaced:
                by_topic[i] = unplaced.pop(0)
        return [by_topic.get(i, "") for i in range(n)]
    # '1)', '1.' or, in St. Francis, 'ISSUE I:' / 'ISSUE 1:'.
    parts = re.split(r"(?m)^\s*#*\s*(?:\d+\s*[).]|ISSUE\s+(?:[IVX]+|\d+)\s*:)\s*", section)
    # parts[0] is whatever precedes the first issue ('Here are your opinions...').
    blocks = [p for p in parts[1:] if p.strip()] if len(parts) > 1 else []
    return (blocks + [""] * n)[:n]


def _same_issue(header: str, topic: Topic) -> bool:
    """A '### ...' header names this topic: most of the topic name's words appear in it."""
    want = _words(topic.name)
    return bool(want) and len(want & _words(header)) >= max(1, (len(want) + 1) // 2)


def _words(label: str) -> set[str]:
    return words(label) - _PROSE_STOP


def _mentioned(fragment: str, options: list[tuple[str, str]]) -> list[str]:
    """Option letters a fragment names: '(b)' first, else each option's first word that no
    other option of the topic uses (matched as a word prefix, so 'flyer' finds 'flyers')."""
    letters = [x.upper() for x in re.findall(r"\(\(?([a-e])\)", fragment)]
    if letters:
        return [x for x in letters if x in {o for o, _ in options}]
    low = fragment.lower()
    found = []
    for letter, label in options:
        others = set().union(*(_words(lb) for o, lb in options if o != letter))
        distinct = [
            w for w in sorted(_words(label), key=lambda w: label.lower().find(w)) if w not in others
        ]
        if distinct and re.search(rf"\b{re.escape(distinct[0])}", low):
            found.append(letter)
    return found


def _choice(fragment: str, options: list[tuple[str, str]]) -> list[str]:
    """What a 'First choice: ...' line names: '(b)', a bare leading 'b', or option words."""
    bare = re.match(r"\s*\(?\(?([a-e])\)?(?:[\s,;.)]|$)", fragment)
    if bare and bare.group(1).upper() in {o for o, _ in options}:
        return [bare.group(1).upper()]
    return _mentioned(fragment, options)


def parse_preference(block: str, options: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """(ranking, unacceptable) read from one topic's opinion text (see `read_preference`)."""
    reading = read_preference(block, options)
    return reading.ranking, reading.unacceptable


def read_preference(block: str, options: list[tuple[str, str]] | ParsedTopic) -> Reading:
    """Stated choices first ('First choice: ...', 'Option #2 is your first choice'); a
    block with none is read as prose, ranking options in the order the text names them
    and taking those named after a negation as unacceptable. Given as a `ParsedTopic`,
    the options keep the case's own markers ('Option #2', '(1D)')."""
    topic = (
        options
        if isinstance(options, ParsedTopic)
        else ParsedTopic("", tuple(ParsedOption(o, label, o.lower()) for o, label in options))
    )
    options = [(o.id, o.label) for o in topic.options]
    reading = read_choices(block, topic)
    if reading.ranking or reading.unacceptable or reading.unread:
        return reading
    ranking, bad = _prose_preference(block, options)
    return Reading(ranking, bad)


def _prose_preference(block: str, options: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """(ranking, unacceptable) read from one topic's opinion text.

    Explicit 'First choice: ...' lines decide the ranking when present; otherwise options
    are ranked in the order the text names them. Options named after a negation
    ('will not consider', 'unacceptable') are unacceptable."""
    ranking: list[str] = []
    bad: list[str] = []
    # Some profiles repeat the option list before 'Your opinion:'; only the opinion counts.
    block = re.split(r"your opinion\s*:?", block, flags=re.I)[-1]
    ordinal = {}
    for line in block.splitlines():
        m = re.match(rf"\s*({'|'.join(_ORDINALS)})\s+choice\s*(?:\([^)]*\))?\s*:?(.*)", line, re.I)
        if m:
            ordinal[_ORDINALS.index(m.group(1).lower())] = m.group(2)
        m = re.match(r"\s*unacceptable\s*:?(.*)", line, re.I)
        if m:
            bad += [x for x in _choice(m.group(1), options) if x not in bad]
    if ordinal:
        for k in sorted(ordinal):
            picks = _choice(ordinal[k], options)
            for x in picks[:1]:
                if x not in ranking and x not in bad:
                    ranking.append(x)
        return ranking, bad
    for sentence in re.split(r"(?<=[.;])\s+|\n", block):
        s = sentence.strip()
        if not s:
            continue
        neg = _NEGATIVE.search(s)
        if neg is not None:
            before, after = s[: neg.start()], s[neg.start() :]
            for x in _mentioned(before, options):
                if x not in ranking and x not in bad:
                    ranking.append(x)
            bad += [x for x in _mentioned(after, options) if x not in bad and x not in ranking]
            continue
        for x in _mentioned(s, options):
            if x not in ranking and x not in bad:
                ranking.append(x)
    return ranking, bad


def import_promediate_file(
    path: Path,
    lenient: bool = False,
    readings: Mapping[tuple[str, str], ModelReading] | None = None,
    model_name: str = "",
) -> ImportResult:
    """A case file: its id from the file name, topic names from a topics.json beside it if
    the case has none. Raises OSError or ValueError (one line) for a file it cannot use."""
    data = load_json(read_user_file(path, MAX_DATASET_BYTES, "a ProMediate case (.json)"))
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return import_promediate(
        data, _case_id(path), sibling_topics(path), lenient, readings, model_name
    )


def _case_id(path: Path) -> str:
    # Cut: file names run to 255 characters, scenario ids to MAX_ID_CHARS.
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", path.stem)[:100]


def sibling_topics(case_file: Path) -> list[str] | None:
    """Topic names for `case_file` from ProMediate's topics.json (keyed by case name), as
    it ships them for every case but HMO; None when there is none, or it does not name
    this case. A topics.json that cannot be read is an error (ValueError), not skipped."""
    # Beside the case, or where ProMediate's repository keeps it (cases/ beside
    # thoughtful_agents/prompts/).
    candidates = [
        case_file.parent / "topics.json",
        case_file.parent.parent / "thoughtful_agents" / "prompts" / "topics.json",
    ]
    path = next((p for p in candidates if p != case_file and path_kind(p) == "file"), None)
    if path is None:
        return None
    try:
        table = load_json(read_user_file(path, MAX_DATASET_BYTES, "ProMediate's topics.json"))
    except ValueError as exc:  # there, but unreadable: say so, never skip it
        raise ValueError(f"{path} cannot be read: {str(exc).splitlines()[0]}") from None
    names = table.get(case_file.stem) if isinstance(table, dict) else None
    return [str(n) for n in names] if isinstance(names, list) else None


def _duplicate_profiles(parties: list[Party]) -> list[str]:
    """Parties whose preferences match on every topic: a copy-paste defect in some cases
    (francis.json's CEO and Chief of Medicine), kept but worth knowing about."""
    out = []
    for i, a in enumerate(parties):
        for b in parties[i + 1 :]:
            if a.preferences == b.preferences:
                out.append(
                    f"{a.name} and {b.name} have identical preferences on every topic; "
                    "the case file may have copied one profile into the other"
                )
    return out


def _unreadable(where: str, block: str, reading: Reading) -> str:
    """Why a party's preference on a topic cannot be taken as read, or ''."""
    if reading.unread:
        return f"{where}: a stated choice names no option that could be told: {reading.unread[0]!r}"
    if not reading.ranking:
        first = next((ln.strip() for ln in block.splitlines() if ln.strip()), "")
        said = f"{first[:100]!r}" if first else "(nothing on this topic)"
        return f"{where}: no acceptable option could be read from {said}"
    return ""


def _role(profile: str) -> str:
    """The party's position: 'You are L. Atchison, the vice president of ...' gives 'the
    vice president of ...', 'You are a managed care representative for ...' gives that;
    sentences like 'You are sure that ...' say nothing about a role and are passed over."""
    name = r"(?:[A-Z]\.\s*)*[A-Z][\w'-]*(?:\s+(?:[A-Z]\.\s*)*[A-Z][\w'-]*){0,2}"
    m = re.search(
        rf"You are (?:{name},\s*(?P<role>[^.\n]+)|(?P<desc>(?:a|an|the)\s[^.\n]+))", profile
    )
    if not m:
        return ""
    return " ".join((m.group("role") or m.group("desc")).split())[:120]


def import_promediate(
    data: dict[str, Any],
    case_id: str,
    topic_names: list[str] | None = None,
    lenient: bool = False,
    readings: Mapping[tuple[str, str], ModelReading] | None = None,
    model_name: str = "",
) -> ImportResult:
    """One case. `topic_names` stands in for a missing 'topics' key: ProMediate keeps the
    other cases' topic names in a separate topics.json keyed by case. A preference that
    cannot be read fails the case, naming the party, the topic and the line; `lenient`
    imports it ranked in listed order instead, with a warning, and records the assumption
    in the scenario's `assumptions`. `readings` (party name, topic id) -> a model's reading
    of what the rules could not read (`result.unread` of a lenient pass) takes its place,
    also recorded there."""
    _check_fields(data)
    notes = _CaseNotes()
    listed, topics = _case_topics(data, topic_names, notes.warnings)
    profiles = {k: str(v) for k, v in (data.get("names") or {}).items() if k != "Mediator"}
    if len(profiles) < 2:
        raise ValueError("fewer than two parties in 'names'")
    config = _turn_taking_config(data.get("config"), [*profiles, "Mediator"], notes.warnings)
    reader = _PreferenceReader(lenient, readings or {}, model_name, notes)
    parties = [
        _party(name, profile, reader.party(name, profile, topics, listed), topics, config)
        for name, profile in profiles.items()
    ]
    notes.warnings += _duplicate_profiles(parties)
    defaults = (
        "ProMediate cases carry no weights or fallbacks: equal weights and a "
        "fallback utility of 0.3 were assumed for every party"
    )
    notes.warnings.append(defaults)
    notes.assumptions.append(defaults)
    scenario = Scenario(
        id=case_id,
        title=f"ProMediate case: {case_id}",
        domain="business-to-business",
        language="en",
        background=_background(data, case_id),
        parties=parties,
        topics=topics,
        mediator=TurnTaking(**config["mediator"]) if "mediator" in config else None,
        assumptions=notes.assumptions,
    )
    return ImportResult(scenario, notes.warnings, notes.unread)


@dataclass
class _CaseNotes:
    """What importing one case has to say: warnings, the assumptions the scenario records,
    and the preferences the rules could not read (what a model may be asked)."""

    warnings: list[str] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    unread: list[UnreadPreference] = field(default_factory=list)


def _case_topics(
    data: dict[str, Any], topic_names: list[str] | None, warnings: list[str]
) -> tuple[list[ParsedTopic], list[Topic]]:
    """The case's option lists as read, and its topics: named by 'topics' (else
    `topic_names`), or by the option lists' headings, with a warning, when there are no
    names or not one for each list."""
    listed = read_option_lists(str(data.get("options", "")))
    if not listed:
        raise ValueError("no options could be read from 'options'")
    names = list(data.get("topics") or topic_names or [])
    if not names:
        warnings.append(
            "no 'topics' in the case and no topics.json beside it: topic names are taken "
            "from the 'options' headings"
        )
    if len(names) != len(listed):
        if names:
            warnings.append(
                f"'topics' lists {len(names)} topics but 'options' {len(listed)}; "
                "using the names in 'options'"
            )
        names = [t.heading for t in listed]
    topics = [
        Topic(
            id=_slug(name),
            name=name,
            options=[Option(id=o.id, label=o.label) for o in t.options],
        )
        for name, t in zip(names, listed, strict=True)
    ]
    return listed, topics


@dataclass
class _PreferenceReader:
    """Reads the parties' preferences as `import_promediate` documents: the rules first,
    a model's reading in place of what they could not read, and with `lenient` an assumed
    ranking for what is still unread; everything assumed goes to `notes`."""

    lenient: bool
    readings: Mapping[tuple[str, str], ModelReading]
    model_name: str
    notes: _CaseNotes

    def party(
        self, name: str, profile: str, topics: list[Topic], listed: list[ParsedTopic]
    ) -> dict[str, TopicPreference]:
        """A party's preference on every topic, from its profile's opinions."""
        blocks = _opinion_blocks(profile, topics)
        return {
            topic.id: self.topic(name, topic, block, options)
            for topic, block, options in zip(topics, blocks, listed, strict=True)
        }

    def topic(self, name: str, topic: Topic, block: str, options: ParsedTopic) -> TopicPreference:
        """A party's preference on one topic, from the opinion text `block`."""
        where = f"{name}/{topic.id}"
        reading = read_preference(block, options)
        ranking, bad = reading.ranking, reading.unacceptable
        if reading.conditional or re.search(r"only if|depends on", block, re.I):
            self.notes.warnings.append(
                f"{where}: a conditional choice ('only if', 'depends on') was read as unconditional"
            )
            self.notes.assumptions.append(f"{where}: a conditional choice read as unconditional")
        if reading.lists:
            line = f"{where}: its option list disagrees with the shared options: {reading.lists}"
            self.notes.warnings.append(line)
            self.notes.assumptions.append(line)
        unreadable = _unreadable(where, block, reading)
        by_model = self.readings.get((name, topic.id))
        if unreadable and by_model is not None:
            ranking, bad, unreadable = self._model_reading(
                where, by_model, ranking, bad, unreadable
            )
        elif unreadable:
            self.notes.unread.append(UnreadPreference(name, topic, block.strip(), unreadable))
        ranking = self._ranked_in_full(where, unreadable, ranking, bad, options)
        if not ranking:  # everything was marked unacceptable: keep the least bad one
            ranking, bad = bad[-1:], bad[:-1]
            self.notes.warnings.append(
                f"{where}: every option unacceptable; keeping "
                f"{ranking[0]} as the only acceptable one"
            )
        return TopicPreference(ranking=ranking, unacceptable=bad)

    def _model_reading(
        self,
        where: str,
        by_model: ModelReading,
        ranking: list[str],
        bad: list[str],
        unreadable: str,
    ) -> tuple[list[str], list[str], str]:
        """(ranking, unacceptable, why it is still unreadable) once a model has read what
        the rules could not: its reading, recorded as an assumption; or, when the model
        failed as well, the rules' reading, with the model's error added to `unreadable`."""
        if by_model.error:
            why = f"; the model could not read it either: {by_model.error}"
            return ranking, bad, unreadable + why
        ranking, bad = list(by_model.ranking), list(by_model.unacceptable)
        self.notes.assumptions.append(
            f"{where}: read by {self.model_name or 'a model'} from the brief's prose "
            f"(rules could not): ranking {', '.join(ranking)}"
            + (f"; unacceptable {', '.join(bad)}" if bad else "")
        )
        return ranking, bad, ""

    def _ranked_in_full(
        self, where: str, unreadable: str, ranking: list[str], bad: list[str], options: ParsedTopic
    ) -> list[str]:
        """`ranking` extended (in place) by the options it neither ranks nor rejects, in
        listed order, with a warning. An unreadable preference fails the case unless
        `lenient`, which takes that order as its ranking, marked as assumed."""
        rest = [o.id for o in options.options if o.id not in ranking and o.id not in bad]
        if unreadable and not self.lenient:
            raise ValueError(f"{unreadable} (`lenient` imports it with an assumed ranking, marked)")
        if unreadable:
            self.notes.warnings.append(f"{unreadable}; assumed: options ranked in listed order")
            self.notes.assumptions.append(
                f"{where}: preference unreadable; ranked in listed order: "
                + ", ".join(ranking + rest)
            )
        elif rest:
            self.notes.warnings.append(
                f"{where}: options {', '.join(rest)} not mentioned; ranked after the stated choices"
            )
            self.notes.assumptions.append(f"{where}: {', '.join(rest)} not mentioned; ranked last")
        ranking += rest
        return ranking


def _party(
    name: str,
    profile: str,
    prefs: dict[str, TopicPreference],
    topics: list[Topic],
    config: dict[str, dict[str, float]],
) -> Party:
    """A party of the case: its role and main goal read from its profile, which it keeps
    as private notes; equal weights and a fallback utility of 0.3, since the cases give
    neither; its turn-taking thresholds from the case's config."""
    share, extra = divmod(100, len(topics))
    weights = {t.id: share + (1 if i < extra else 0) for i, t in enumerate(topics)}
    goal = re.search(r"Main Goal[:\s]*([^\n]+)", profile, re.I)
    return Party(
        id=_slug(name),
        name=name,
        role=_role(profile),
        objective=(
            goal.group(1).strip()
            if goal
            else f"Reach an agreement {name} can accept on every issue."
        ),
        fallback=Fallback(description="No agreement is reached.", utility=0.3),
        preferences=prefs,
        weights=weights,
        persona=Persona(strategy="compromising", **config.get(name.lower(), {})),
        private_notes=profile.strip(),
    )


def _background(data: dict[str, Any], case_id: str) -> str:
    """The case's instruction with its issues and options written in."""
    background = str(data.get("instruction", "")).replace("{issues}", str(data.get("issues", "")))
    background = background.replace("{options}", str(data.get("options", ""))).strip()
    return background or f"ProMediate case {case_id}."


def _check_fields(data: dict[str, Any]) -> None:
    """The case's fields have the types its format gives them, or a one-line ValueError
    naming the field (a case file is foreign data: `names: 1` must not reach the reader)."""
    for key in ("instruction", "issues", "options"):
        if key in data and not isinstance(data[key], str):
            raise ValueError(f"'{key}' must be text, not {_json_type(data[key])}")
    topics = data.get("topics")
    if topics is not None and not isinstance(topics, list):
        raise ValueError(f"'topics' must be a list of topic names, not {_json_type(topics)}")
    for i, name in enumerate(topics or []):
        if not isinstance(name, str):
            raise ValueError(f"'topics'[{i}] must be a topic name (text), not {_json_type(name)}")
    names = data.get("names")
    if names is not None and not isinstance(names, dict):
        raise ValueError(
            f"'names' must map each party's name to its profile text, not {_json_type(names)}"
        )
    for name, profile in (names or {}).items():
        if not isinstance(profile, str):
            raise ValueError(
                f"'names'.{name[:40]} must be the party's profile text, not {_json_type(profile)}"
            )
    if "issues" not in data:  # the case's topics are read from it
        raise ValueError("'issues' is missing; a ProMediate case lists its issues there")


def _json_type(value: object) -> str:
    """What a JSON value is, in the format's own words."""
    if isinstance(value, bool):
        return "true or false"
    kinds = {str: "text", int: "a number", float: "a number", list: "a list", dict: "a mapping"}
    return "null" if value is None else kinds.get(type(value), type(value).__name__)


_THRESHOLDS = ("im_threshold", "interrupt_threshold", "system1_prob")


def _turn_taking_config(
    raw: object, names: list[str], warnings: list[str]
) -> dict[str, dict[str, float]]:
    """Each participant's turn-taking thresholds from the case's `config`, keyed by lower-
    cased name: the case files spell some names differently there ('MacNamara' in
    `config`, 'Macnamara' in `names`), so names match without regard to case. A party
    the config leaves out gets the documented defaults, with a warning; a value out of
    range fails the import."""
    if raw is None:
        warnings.append(
            "no 'config' in the case: every party gets the default turn-taking thresholds"
        )
        return {}
    if not isinstance(raw, dict):
        raise ValueError(f"'config' must map participants to thresholds, not {_json_type(raw)}")
    given = {str(k).lower(): v for k, v in raw.items()}
    out: dict[str, dict[str, float]] = {}
    for name in names:
        entry = given.get(name.lower())
        if entry is None:
            if name != "Mediator":
                warnings.append(f"{name}: not in 'config'; default turn-taking thresholds assumed")
            continue
        if not isinstance(entry, dict):
            raise ValueError(f"config.{name} must map thresholds to numbers")
        values = {k: entry[k] for k in _THRESHOLDS if k in entry}
        try:
            TurnTaking(**values)  # range checks
        except ValidationError as exc:
            e = exc.errors(include_url=False)[0]
            field = ".".join(str(x) for x in e["loc"])
            got = repr(e["input"])[:40]
            raise ValueError(f"config.{name}.{field}: {e['msg']}, got {got}") from None
        out["mediator" if name == "Mediator" else name.lower()] = values
    unknown = sorted(set(given) - {n.lower() for n in names})
    if unknown:
        warnings.append(f"'config' names {', '.join(unknown)}, who are not in 'names'; ignored")
    return out
