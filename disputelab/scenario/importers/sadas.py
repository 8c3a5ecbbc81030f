"""The socially-aware remediator's released data (SADAS; paper: "Assistive Large Language
Model Agents for Socially-Aware Negotiation Dialogues", https://arxiv.org/abs/2402.01737),
read from a copy a user has on disk.

Two files of its public repository are read, in the shapes below (the tests build small
files of these shapes; no data is shipped):

- the in-context exemplars, `data/all_icl_example.json`: a JSON list of objects
  `{"conversation", "last_sentence", "remediation"}`. `conversation` is a Chinese
  negotiation, one `speaker: text` line per turn (`buyer:`/`seller:` or `人物A:`/`人物B:`,
  under a `# Dialogue:` header), and marks the violating line with `【violation】`;
  `remediation` is its rewrite (under a `# Remediation:` header);
- the rewrite pairs, `data/train_bargaining.csv`: one `text` column, each value an
  instruction-formatted pair `<s>Human: ... 人物A: ...\\n人物B: ... 最后一句话"X"...
  </s><s>Assistant: Y</s>`: the dialogue, the last sentence X to rewrite, and the rewrite Y.

A record is one violation in its dialogue (`SadasRecord`). What cannot be read at all (no
dialogue, no rewrite, a field of the wrong type) is a problem naming the record, counted
from 1 in file order; what is read past (no `【violation】` mark, a quoted last sentence
that is not the dialogue's last line, a speaker label or a quote around the rewrite) is
a note on the record, which importers warn about and keep.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from disputelab.errors import DisputelabError
from disputelab.scenario.inputs import MAX_DATASET_BYTES, load_json, read_user_file

# The marks the released simulator accepts for a violating line.
TAGS = ("【violation】", "【违规】", "【违反社会规范】", "【违反规范】", "[violation]")
# Who may speak a line: the files' labels, and the roles a hand-made file would use.
SPEAKERS = r"人物[A-Z]|buyer|seller|user|assistant|买方|卖方|买家|卖家|HR|求职者|雇主|招聘方"
_LINE = re.compile(rf"^\s*(?P<who>{SPEAKERS})\s*[:：]\s*(?P<text>.*)$", re.I)
_QUOTED = re.compile(r"最后一句话\s*[“\"「『]+(?P<s>.+?)\s*[”\"」』]+", re.S)
_ANSWER = re.compile(r"<s>\s*Assistant\s*[:：]", re.I)
_HEADER = re.compile(r"^\s*#\s*(?:Dialogue|Remediation)\s*:\s*", re.I)


class SadasError(DisputelabError, ValueError):
    """A SADAS file that cannot be read as a whole (not a JSON list, no `text` column)."""


@dataclass(frozen=True)
class Line:
    speaker: str  # as the file writes it: buyer, seller, 人物A, ...
    text: str


@dataclass
class SadasRecord:
    """One violation in its dialogue: the lines up to and including the violating one,
    the violating sentence, its rewrite, and what was read past (`notes`)."""

    number: int  # counted from 1 in file order
    lines: tuple[Line, ...]
    violation: str
    remediation: str
    notes: list[str] = field(default_factory=list)

    @property
    def history(self) -> tuple[Line, ...]:
        """The dialogue before the violating line."""
        return self.lines[:-1]


@dataclass
class SadasFile:
    """What a file gave: its records, and the ones that could not be read (number, why)."""

    path: Path
    kind: str  # "exemplars" (the JSON list) or "pairs" (the CSV)
    records: list[SadasRecord] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)


class _Unreadable(ValueError):
    """One record that cannot be read; the message says why."""


def read_sadas(path: Path) -> SadasFile:
    """The records of a SADAS file: a JSON list (the exemplars) or a CSV with a `text`
    column (the rewrite pairs), told apart by the first character. SadasError (or the
    file's UserFileError), saying what is wrong without the path, when the file as a
    whole cannot be read."""
    text = read_user_file(path, MAX_DATASET_BYTES, "a SADAS file (.json list or .csv)")
    if text.lstrip().startswith("{"):
        raise SadasError("a SADAS exemplar file holds a JSON list of records, not one object")
    if text.lstrip().startswith("["):
        try:
            data = load_json(text)
        except ValueError as exc:
            raise SadasError(f"not JSON: {str(exc).splitlines()[0]}") from None
        return _read_all(path, "exemplars", data, _exemplar_record)
    return _read_all(path, "pairs", _csv_texts(text), _pair_record)


def _read_all(
    path: Path, kind: str, items: Any, read: Callable[[int, Any], SadasRecord]
) -> SadasFile:
    if not isinstance(items, list):
        raise SadasError("a SADAS exemplar file holds a JSON list of records")
    out = SadasFile(path, kind)
    for number, item in enumerate(items, start=1):
        try:
            out.records.append(read(number, item))
        except _Unreadable as exc:
            out.problems.append((number, str(exc)))
    return out


def _csv_texts(text: str) -> list[str]:
    """The `text` column of a rewrite-pair CSV, one value per record."""
    reader = csv.DictReader(io.StringIO(text))
    try:
        if "text" not in (reader.fieldnames or []):
            raise SadasError(
                "no `text` column: a SADAS file is a JSON list of exemplars (starting"
                " with `[`) or a rewrite-pair CSV with a `text` column"
            )
        return [row.get("text") or "" for row in reader]
    except csv.Error as exc:
        raise SadasError(f"not a CSV file: {exc}") from None


def _exemplar_record(number: int, item: object) -> SadasRecord:
    """One object of the exemplar list."""
    if not isinstance(item, dict):
        raise _Unreadable("not a JSON object")
    fields = {}
    for key in ("conversation", "last_sentence", "remediation"):
        value = item.get(key)
        if not isinstance(value, str):
            got = "missing" if value is None else f"not text ({type(value).__name__})"
            raise _Unreadable(f"'{key}' is {got}")
        fields[key] = value
    notes: list[str] = []
    lines = _speaker_lines(_HEADER.sub("", fields["conversation"].strip()))
    lines = _cut_at_mark(lines, notes)
    return _record(number, lines, fields["last_sentence"], fields["remediation"], notes)


def _pair_record(number: int, text: object) -> SadasRecord:
    """One `text` value of the rewrite-pair CSV."""
    if not isinstance(text, str) or not text.strip():
        raise _Unreadable("empty `text`")
    answer = _ANSWER.search(text)
    if answer is None:
        raise _Unreadable("no '<s>Assistant:' part holding the rewrite")
    human, rewrite = text[: answer.start()], text[answer.end() :]
    notes: list[str] = []
    quoted = _QUOTED.search(human)
    lines = _speaker_lines(_before(human, quoted.start()) if quoted else human)
    if quoted is None:
        notes.append("no quoted last sentence; the dialogue's last line taken")
        said = lines[-1].text if lines else ""
    else:
        said = quoted.group("s")
    return _record(number, lines, said, rewrite.replace("</s>", ""), notes)


def _before(human: str, quote_at: int) -> str:
    """The dialogue of a pair's human part: the text before the line that quotes the last
    sentence (or, should that line be a turn itself, before the quote)."""
    line_start = human.rfind("\n", 0, quote_at) + 1
    return human[:quote_at] if _LINE.match(human[line_start:quote_at]) else human[:line_start]


def _speaker_lines(text: str) -> list[Line]:
    """`speaker: text` lines; a line without a speaker continues the one before (text
    before the first speaker, an instruction, is passed over)."""
    lines: list[Line] = []
    for raw in text.splitlines():
        m = _LINE.match(raw)
        if m:
            lines.append(Line(m.group("who"), m.group("text").strip()))
        elif lines and raw.strip():
            lines[-1] = Line(lines[-1].speaker, f"{lines[-1].text} {raw.strip()}")
    return lines


def _cut_at_mark(lines: list[Line], notes: list[str]) -> list[Line]:
    """The lines up to the last one marked as a violation, marks removed."""
    marked = [i for i, ln in enumerate(lines) if any(t in ln.text for t in TAGS)]
    clean = [Line(ln.speaker, _untagged(ln.text)) for ln in lines]
    if not marked:
        if lines:
            notes.append("no 【violation】 mark; the dialogue's last line taken as the violation")
        return clean
    last = marked[-1]
    if len(marked) > 1:
        notes.append(f"{len(marked)} lines marked as violations; the last one taken")
    if last < len(lines) - 1:
        notes.append(f"{len(lines) - 1 - last} line(s) after the marked one left out")
    return clean[: last + 1]


def _untagged(text: str) -> str:
    for tag in TAGS:
        text = text.replace(tag, "")
    return text.strip()


def _rewrite(text: str, notes: list[str]) -> str:
    """The rewrite without its header, a speaker label or quotes around it."""
    out = _HEADER.sub("", text.strip()).strip()
    label = re.match(r"^(?:assistant|remediation)\s*[:：]\s*", out, re.I)
    if label:
        out = out[label.end() :].strip()
        notes.append("a speaker label before the rewrite removed")
    if len(out) > 1 and out[0] in '"“「' and out[-1] in '"”」':
        out = out[1:-1].strip()
        notes.append("quotes around the rewrite removed")
    return out


def _same(a: str, b: str) -> bool:
    return "".join(a.split()) == "".join(b.split())


def _record(
    number: int, lines: list[Line], said: str, rewrite: str, notes: list[str]
) -> SadasRecord:
    if not lines:
        raise _Unreadable("no dialogue lines ('speaker: text', e.g. '人物A: ...')")
    remediation = _rewrite(rewrite, notes)
    if not remediation:
        raise _Unreadable("an empty rewrite")
    said = _untagged(said)
    if not said:
        said = lines[-1].text
        notes.append("no last sentence given; the dialogue's last line taken")
    elif not _same(said, lines[-1].text):
        notes.append("the last sentence given is not the dialogue's last line; the given one taken")
    last = Line(lines[-1].speaker, said)
    return SadasRecord(number, (*lines[:-1], last), said, remediation, notes)
