"""Reading ProMediate's case prose: the option lists and each party's stated choices.

The six public cases were written by different hands, so the same facts come in several
shapes, and every shape seen in them is read here:

- option lists: `(a) ...`, `(A): ...`, `(1). ...`, `- Option 1A: ...`, under numbered
  (`1. Name`) or headed (`## Issue 1: Name`) topics; a marker counts only at the start of
  a line, so a word like "engine(s)" is never an option;
- choices: a header line with the text below it (`- First Choice:` then prose, `First
  choice: (b) ...`, `- Unacceptable`, `Block: (1A) and (1B)`), or one sentence per option
  (`- Option #2 is your first choice`, `A. $850 million is your first choice`, `JX5
  engines only is your second choice`, `(a) $150 million is fourth choice`).

A choice names its option by a marker (`Option B`, `Option #2`, `(1D)`, `(b)`, a bare
leading `b`), by the option's own name (`Package 2`), by a distinctive stretch of its
label, or, in prose, by the words it shares with one option's label and no other's. A
choice whose option cannot be told is reported as unread with its line, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from disputelab.scenario.importers.promediate_lists import (
    ListCheck,
    Restatement,
    SharedList,
    check_restatements,
    quoted,
    rank_left_out,
)

ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")
_LAST_RANK = len(ORDINALS)  # "your last choice": after every numbered one

_TOPIC_NUMBERED = re.compile(r"(?m)^[ \t]*(?:#{1,4}[ \t]*)?(?:Issue[ \t]*)?(\d+)[ \t]*[.:)][ \t]*")
_OPTION_MARK = re.compile(
    r"(?m)^[ \t]*(?:[-*][ \t]*)?"
    r"(?:\(([A-Za-z]|\d{1,2})\)[ \t]*[:.]?|Option[ \t]+\d*([A-Za-z])[ \t]*:)[ \t]*"
)
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "for",
        "to",
        "on",
        "at",
        "with",
        "in",
        "by",
        "is",
        "be",
        "are",
        "as",
        "it",
        "its",
        "this",
        "that",
        "your",
        "you",
        "will",
        "would",
        "should",
        "could",
        "all",
        "each",
        "any",
        "their",
        "our",
        "from",
        "into",
        "only",
        "not",
        "no",
        "but",
        "if",
        "then",
        "than",
        "so",
    ]
)
_NEGATIVE = re.compile(
    r"\b(?:not acceptable|unacceptable|will not (?:accept|consider|support)|won't accept|"
    r"cannot accept|can't accept|refuse|never accept|block|reject)",
    re.I,
)
_CONDITIONAL = re.compile(r"\b(?:only if|depending on|depends on|unless)\b", re.I)


@dataclass(frozen=True)
class ParsedOption:
    id: str  # A, B, C... in listed order, whatever the case's own numbering
    label: str
    marker: str  # as the case writes it: 'a', 'A', '1', '1A'


@dataclass(frozen=True)
class ParsedTopic:
    heading: str
    options: tuple[ParsedOption, ...]


def parse_options(text: str) -> list[ParsedTopic]:
    """The topics of an `options` text, each with its options in listed order."""
    heads = list(_TOPIC_NUMBERED.finditer(text))
    topics = []
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        section = text[h.end() : end]
        marks = list(_OPTION_MARK.finditer(section)) or []
        marks += _inline_marks(section, marks)
        marks.sort(key=lambda m: m.start())
        if not marks:
            continue
        heading = " ".join(section[: marks[0].start()].split("\n", 1)[0].split())
        options = []
        for j, m in enumerate(marks):
            stop = marks[j + 1].start() if j + 1 < len(marks) else len(section)
            label = " ".join(section[m.end() : stop].split()).strip(" ;.")
            marker = m.group(1) or f"{h.group(1)}{m.group(2)}"
            options.append(ParsedOption(chr(ord("A") + j), label, marker))
        topics.append(
            ParsedTopic(heading.rstrip(":?").strip() or f"Issue {h.group(1)}", tuple(options))
        )
    return topics


def _inline_marks(section: str, marks: list[re.Match[str]]) -> list[re.Match[str]]:
    """Options listed on one line, '(a) Open; (b) Dual' or '(a) Two-year (b) Five-year': a
    marker inside a line counts only after the topic's first option and only when it
    carries the next letter, so 'engine(s)' in a heading never does."""
    letters = [m.group(1) for m in marks if m.group(1)]
    if not letters or not letters[-1].isalpha():
        return []
    out: list[re.Match[str]] = []
    expected = chr(ord(letters[-1]) + 1)
    for m in re.finditer(r"(?<=[\s;,])\(([A-Za-z])\)[ \t]*", section):
        if m.start() > marks[0].start() and m.group(1) == expected:
            out.append(m)
            expected = chr(ord(expected) + 1)
    return out


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9$%]+(?:-[a-z0-9]+)*", text.lower()) if w not in _STOP}


@dataclass
class Statement:
    """One stated choice: its rank (None when it gives none), whether it rules the option
    out, the option ids it names, and the text it came from."""

    rank: int | None
    negative: bool
    options: list[str]
    text: str
    conditional: bool = False
    line: str = ""
    ahead: bool = False  # says it comes before others of its rank ('preferable to ...')
    # The option as the party restates it, when named by a leading marker: (marker, words).
    restated: tuple[str, str] | None = None


@dataclass
class Reading:
    ranking: list[str] = field(default_factory=list)
    unacceptable: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # lines naming no option it could tell
    conditional: list[str] = field(default_factory=list)
    # Where the party's restated option list disagrees with the shared one, and the
    # mapping chosen (see `promediate_lists`), in one line; '' when they agree.
    lists: str = ""


def _rank_of(text: str) -> int | None:
    """The rank a sentence states in so many words ('your second choice', 'last choice')."""
    low = text.lower()
    m = re.search(rf"\b({'|'.join(ORDINALS)})\s+(?:choice|preference)", low)
    if m:
        return ORDINALS.index(m.group(1))
    if re.search(r"\blast\s+choice", low):
        return _LAST_RANK
    return None


class OptionFinder:
    """Tells which options of one topic a piece of text names."""

    def __init__(self, topic: ParsedTopic) -> None:
        self.topic = topic
        self.ids = [o.id for o in topic.options]
        by_marker: dict[str, str] = {}
        for o in topic.options:
            by_marker[o.marker.lower()] = o.id
            by_marker[o.id.lower()] = by_marker.get(o.id.lower(), o.id)
        self.by_marker = by_marker
        # An option's own name, as in 'Package 2: ...', which prose then uses.
        self.names = {
            o.id: o.label.split(":", 1)[0].strip().lower()
            for o in topic.options
            if ":" in o.label and len(o.label.split(":", 1)[0].split()) <= 3
        }
        self.words = {o.id: words(o.label) for o in topic.options}

    def _marker(self, token: str) -> str | None:
        token = token.lower().lstrip("#")
        if token in self.by_marker:
            return self.by_marker[token]
        # '1D' style markers written as a letter after the topic number.
        m = re.fullmatch(r"\d+([a-z])", token)
        return self.by_marker.get(m.group(1)) if m else None

    def explicit(self, text: str) -> list[str]:
        """Options named by marker or by name, in the order they appear."""
        found: list[tuple[int, str]] = []
        # 'Option B', 'Option #2', and lists: 'Options #1 & 3', 'Options #2 and #3'.
        token = r"#?(?:\d+[a-z]?|[a-z])\b"
        for m in re.finditer(
            rf"\boptions?\s+({token}(?:\s*(?:,|&|and|or)\s*{token})*)", text, re.I
        ):
            ids = re.findall(r"(?<![a-z0-9])#?(\d+[a-z]?|[a-z])\b", m.group(1), re.I)
            for k, part in enumerate(ids):
                oid = self._marker(part)
                if oid:
                    found.append((m.start() + k, oid))
        for m in re.finditer(r"\(\(?#?(\d{1,2}[a-zA-Z]?|[a-zA-Z])\)", text):
            oid = self._marker(m.group(1))
            if oid:
                found.append((m.start(), oid))
        for oid, name in self.names.items():
            for m in re.finditer(rf"\b{re.escape(name)}\b", text, re.I):
                found.append((m.start(), oid))
        out: list[str] = []
        for _, oid in sorted(found):
            if oid not in out:
                out.append(oid)
        return out

    def leading(self, text: str) -> str | None:
        """A bare marker opening the text: 'b', 'A.', '(a)', 'c, plus ...'."""
        m = re.match(r"\s*\(?([A-Za-z]|\d{1,2}[A-Za-z]?)(?:\)|\.(?!\d)|,|;|\s|$)", text)
        if not m:
            return None
        token = m.group(1)
        # A lone capital 'A' or 'I' may be an article or a pronoun, not an option.
        if token in ("A", "I") and not re.match(r"\s*\(?[AI](?:\)|\.)", text):
            return None
        return self._marker(token)

    def by_label(self, text: str) -> str | None:
        """The one option whose label opens `text` or is quoted in it in full."""
        low = " ".join(text.lower().split())
        hits = [
            o.id
            for o in self.topic.options
            if len(o.label) >= 3 and (low.startswith(o.label.lower()) or o.label.lower() in low)
        ]
        return hits[0] if len(hits) == 1 else None

    def by_words(self, text: str) -> str | None:
        """The option sharing clearly more distinctive words with `text` than any other."""
        said = words(text)
        scores = []
        for oid, ws in self.words.items():
            others = set().union(*(w for o, w in self.words.items() if o != oid))
            distinct = ws - others
            scores.append((len(said & distinct) + 0.25 * len(said & ws), oid))
        scores.sort(reverse=True)
        if not scores or scores[0][0] < 1.0:
            return None
        if len(scores) > 1 and scores[0][0] < scores[1][0] + 1.0:
            return None  # too close to call
        return scores[0][1]


_HEADER = re.compile(
    rf"(?im)^[ \t]*(?:[-*][ \t]*)?(?:(?P<ord>{'|'.join(ORDINALS)}|last)[ \t]+choice\b"
    r"|(?P<neg>unacceptable|not acceptable|block(?:ed)?)\b)"
    # A header ends its line or takes a colon ('Second choice (reluctantly): a'); a
    # wrapped prose line that happens to begin with 'unacceptable.' is not one.
    r"(?:[^:\n]{0,20}:|[ \t]*$)"
)
_BARELY = re.compile(r"\b(?:barely|also)?\s*acceptable\b", re.I)


def _sentences(text: str, n: int) -> str:
    parts = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    return " ".join(parts[:n])


def _header_statements(block: str, finder: OptionFinder) -> list[Statement]:
    """'First choice: ...' / '- First Choice' + prose / 'Unacceptable: ...' / 'Block: ...'."""
    heads = list(_HEADER.finditer(block))
    out = []
    for i, h in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(block)
        body = block[h.end() : end]
        first_line = body.strip().split("\n", 1)[0]
        negative = h.group("neg") is not None
        rank = None
        if h.group("ord"):
            word = h.group("ord").lower()
            rank = _LAST_RANK if word == "last" else ORDINALS.index(word)
        opening = _sentences(body, 2)
        conditional = bool(_CONDITIONAL.search(opening))
        if rank is not None and not conditional and _NEGATIVE.search(opening):
            negative = True  # 'your fourth choice would be Option A, but this is not acceptable'
        lead = finder.leading(body.strip())
        if negative and rank is None:
            named = finder.explicit(opening) or ([lead] if lead else [])
        else:
            named = ([lead] if lead else []) or finder.explicit(_sentences(body, 1))[:1]
            named = named or finder.explicit(opening)[:1]
        if not named:
            hit = finder.by_label(first_line) or finder.by_words(_sentences(body, 2))
            named = [hit] if hit else []
        st = Statement(
            rank,
            negative,
            named,
            " ".join(body.split())[:160],
            conditional,
            " ".join(h.group(0).split()) + " " + " ".join(first_line.split())[:80],
        )
        st.restated = _restated(first_line, r"$") if lead else None
        out.append(st)
    return out


def _restated(text: str, end: str) -> tuple[str, str] | None:
    """(marker, words) of an option restated at the start of `text`: '(b) $100 million'
    ending where `end` matches; None when the marker is followed by no words of its own
    ('c', 'a, plus you will ...')."""
    m = re.match(
        rf"\s*\(?(?P<m>[A-Za-z]|\d{{1,2}}[A-Za-z]?)(?:\)|\.(?!\d))?\s+(?P<said>[$+\w].*?){end}",
        text,
    )
    if not m or not m.group("said").strip():
        return None
    return m.group("m"), m.group("said").strip(" .;:")


def _items(block: str) -> list[str]:
    """The block as items: a bullet ('-', '*', '•') with the lines that continue it, or,
    outside bullets, one line each."""
    items: list[str] = []
    open_bullet = False
    for raw in block.splitlines():
        line = raw.strip()
        if not line:
            open_bullet = False
            continue
        if line[0] in "-*•":
            items.append(line.lstrip("-*• ").strip())
            open_bullet = True
        elif open_bullet:
            items[-1] += " " + line
        else:
            items.append(line)
    return items


def _first_sentence(item: str) -> str:
    # A period after a lower-case letter, digit or quote ends a sentence; 'A.' opening an
    # item ('A. $850 million is your first choice') does not.
    return re.split(r"(?<=[a-z0-9)”\"’'][.!?])\s+", item, maxsplit=1)[0]


def _sentence_statements(block: str, finder: OptionFinder) -> list[Statement]:
    """One statement per item whose first sentence names an option and says how it
    stands: '- Option #2 is your first choice', 'A. $850 million is your first choice',
    'JX5 engines only is your second choice', '(a) $150 million is fourth choice',
    '- Options #1 & 3 ... are both unacceptable'."""
    out = []
    for item in _items(block):
        head = _first_sentence(item)
        rank = _rank_of(head)
        negative = bool(_NEGATIVE.search(head))
        acceptable = bool(_BARELY.search(head)) and not negative
        if rank is None and not negative and not acceptable:
            continue
        lead = finder.leading(head)
        listed = finder.explicit(head) if not lead else []
        # 'Options #2 and #3 are both unacceptable' names two; 'Option #4 ... preferable
        # to Options #2 and #3' names one, the first.
        plural = re.match(r"\s*options\b", head, re.I) is not None
        named = [lead] if lead else (listed if plural else listed[:1])
        if not named:
            hit = finder.by_label(head)
            named = [hit] if hit else []
        if not named:
            continue  # a remark about the topic, not a statement about one option
        if rank is None and acceptable:
            rank = _LAST_RANK - 1  # 'barely acceptable': after every numbered choice
        st = Statement(rank, negative, named, item[:160], bool(_CONDITIONAL.search(head)), head)
        st.ahead = bool(re.search(r"\bpreferable to\b|\bbetter than\b", head, re.I))
        st.restated = _restated(head, r"\s+(?:is|are)\b") if lead else None
        out.append(st)
    return out


def read_choices(block: str, topic: ParsedTopic) -> Reading:
    """A party's stated choices on one topic: ranking best first, unacceptable options,
    and the lines it could not tie to an option."""
    finder = OptionFinder(topic)
    # hmo repeats the option list before a 'Your opinion:' line; only what follows counts
    # (anchored: prose elsewhere says 'in your opinion' too).
    block = re.split(r"(?im)^[ \t]*your opinion[ \t]*:?[ \t]*$", block)[-1]
    statements = _header_statements(block, finder) or _sentence_statements(block, finder)
    if not statements:
        conditional = _conditional_lists(block, finder)
        if conditional is not None:
            return conditional
    statements, lists = _against_shared(statements, finder)
    reading = Reading()
    # Equal ranks keep the listed order, unless the text puts one ahead ('barely
    # acceptable, though preferable to Options #2 and #3').
    ranked: list[tuple[int, bool, int, str]] = []
    for st in statements:
        if not st.options:
            reading.unread.append(st.line.strip())
            continue
        if st.conditional:
            reading.conditional.append(st.line.strip())
        for oid in st.options:
            if st.negative:
                if oid not in reading.unacceptable:
                    reading.unacceptable.append(oid)
            elif st.rank is not None:
                ranked.append((st.rank, not st.ahead, finder.ids.index(oid), oid))
    for *_, oid in sorted(ranked):
        if oid not in reading.ranking and oid not in reading.unacceptable:
            reading.ranking.append(oid)
    if lists.by_amount:
        _place_by_amount(reading, finder, lists.notes)
    reading.lists = lists.note()
    return reading


def _against_shared(
    statements: list[Statement], finder: OptionFinder
) -> tuple[list[Statement], ListCheck]:
    """The statements with each restated option checked against the shared list (see
    `promediate_lists`): moved to the option its amount names, or dropped when none has
    it; and what was found."""
    restated = [
        Restatement(st.restated[0], st.options[0], st.restated[1])
        for st in statements
        if st.restated is not None and len(st.options) == 1
    ]
    labels = {o.id: o.label for o in finder.topic.options}
    check = check_restatements(restated, SharedList(labels, words))
    kept = []
    for st in statements:
        if st.restated is not None and len(st.options) == 1 and st.options[0] in check.moved:
            moved = check.moved[st.options[0]]
            if moved is None:
                continue  # names no shared option
            st.options = [moved]
        kept.append(st)
    return kept, check


def _place_by_amount(reading: Reading, finder: OptionFinder, notes: list[str]) -> None:
    """The shared options the party's list left out, ranked by amount where that can be
    done (`promediate_lists.rank_left_out`), each said in `notes`."""
    labels = {o.id: o.label for o in finder.topic.options}
    said = set(reading.ranking) | set(reading.unacceptable)
    left_out = [o for o in finder.ids if o not in said]
    if not left_out:
        return
    ranking, unplaced = rank_left_out(reading.ranking, left_out, labels)
    for o in left_out:
        if o in unplaced:
            continue
        at = ranking.index(o)
        where = ", ".join(ranking[:at]) or "nothing"
        notes.append(
            f"shared {o} {quoted(labels[o])}, left out of its list, is ranked after {where} "
            "by amount"
        )
    reading.ranking = ranking


_GETS = re.compile(r"(?im)^\s*(?P<cond>[^:\n]{3,80}?)\s+gets\s+(?:all\s*:?\s*)?(?P<what>[^\n]+)$")


def _letters(text: str, finder: OptionFinder) -> list[str]:
    """'a only', 'a, b, and c', 'all: a–e' -> option ids."""
    m = re.search(r"\b([a-z])\s*[–-]\s*([a-z])\b", text, re.I)
    if m:
        lo, hi = (finder._marker(x) for x in m.groups())
        if lo and hi:
            return finder.ids[finder.ids.index(lo) : finder.ids.index(hi) + 1]
    found = [finder._marker(x) for x in re.findall(r"\b([a-z])\b", text, re.I)]
    return [x for x in dict.fromkeys(found) if x]


def _conditional_lists(block: str, finder: OptionFinder) -> Reading | None:
    """'Depends on X: <case> gets a only. <case> gets a, b, and c. <case> gets all: a–e.'
    Read as a ranking by how many of the cases accept each option (most first, ties in
    listed order); the reading is conditional, and the caller says so."""
    cases = [(m.group("cond"), _letters(m.group("what"), finder)) for m in _GETS.finditer(block)]
    cases = [(c, ids) for c, ids in cases if ids]
    if len(cases) < 2:
        return None
    count = {oid: sum(oid in ids for _, ids in cases) for oid in finder.ids}
    ranking = sorted((o for o in finder.ids if count[o]), key=lambda o: -count[o])
    lines = "; ".join(f"{c.strip()} gets {', '.join(ids)}" for c, ids in cases)
    return Reading(ranking=ranking, conditional=[lines])
