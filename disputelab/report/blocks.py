"""The markdown the table layouts write, read back as blocks the HTML page lays out.

The protocols' experiment tables (means, CIs, significance markers) are computed once, as
markdown; the HTML report takes the same text apart into headings, paragraphs and tables
rather than computing them a second time. Only what those layouts write is understood:
`#` headings, pipe tables, `>` notes, paragraphs, and `code`, **strong** and _emphasis_
spans. Everything is kept as plain text, for the template to escape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Style = Literal["", "code", "strong", "em"]
Span = tuple[Style, str]

_INLINE = re.compile(r"`([^`]+)`|\*\*(.+?)\*\*|(?<!\w)_(.+?)_(?!\w)")
_RULE = re.compile(r"^\|(\s*:?-+:?\s*\|)+$")


@dataclass
class Block:
    kind: Literal["heading", "para", "note", "table"]
    level: int = 0  # headings: 1 for `#`
    spans: list[Span] = field(default_factory=list)  # headings, paragraphs, notes
    header: list[list[Span]] = field(default_factory=list)  # tables
    rows: list[list[list[Span]]] = field(default_factory=list)


def spans(text: str) -> list[Span]:
    out: list[Span] = []
    at = 0
    for m in _INLINE.finditer(text):
        if m.start() > at:
            out.append(("", text[at : m.start()]))
        code, strong, em = m.groups()
        if code is not None:
            out.append(("code", code))
        elif strong is not None:
            out.append(("strong", strong))
        else:
            out.append(("em", em))
        at = m.end()
    if at < len(text):
        out.append(("", text[at:]))
    return out


def _cells(line: str) -> list[list[Span]]:
    return [spans(c.strip()) for c in line.strip().strip("|").split("|")]


def markdown_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    para: list[str] = []
    table: Block | None = None  # the table being read, until a line that is not a row

    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("|"):
            if table is None:
                table = Block("table", header=_cells(line))
                blocks.append(table)
            elif not _RULE.match(line):
                table.rows.append(_cells(line))
            continue
        table = None
        if para and (not line or line.startswith(("#", ">"))):
            blocks.append(Block("para", spans=spans(" ".join(para))))
            para = []
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            blocks.append(Block("heading", level, spans(line[level:].strip())))
        elif line.startswith(">"):
            blocks.append(Block("note", spans=spans(line.lstrip("> ").strip())))
        elif line:
            para.append(line)
    if para:
        blocks.append(Block("para", spans=spans(" ".join(para))))
    return blocks
