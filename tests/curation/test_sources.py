"""Seed files: what they may hold, and the one-line errors for what they may not."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from disputelab.curation import FileSeedSource, Seed, SeedError, read_seed_file


def write(tmp_path: Path, name: str, body: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(body, bytes):
        p.write_bytes(body)
    else:
        p.write_text(body, encoding="utf-8")
    return p


def test_a_text_file_is_one_seed_named_after_the_file(tmp_path: Path) -> None:
    p = write(tmp_path, "Port Strike 2024.md", "# Dock strike\n\nThe union walked out.\n")
    (seed,) = read_seed_file(p)
    assert seed == Seed(
        "port-strike-2024", "Dock strike", "# Dock strike\n\nThe union walked out.", str(p)
    )


def test_a_jsonl_file_holds_one_seed_per_line_with_domain_aliases(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "batch.jsonl",
        '{"id": "Mill", "title": "Mill", "text": "A mill leaks.", "domain": "Env"}\n\n'
        '{"text": "Two firms fall out over a patent.", "domain": "B2B"}\n',
    )
    mill, patent = read_seed_file(p)
    assert (mill.id, mill.domain, mill.origin) == ("mill", "environmental", f"{p}:1")
    assert (patent.id, patent.title, patent.domain) == (
        "batch-3",
        "Two firms fall out over a patent.",
        "business-to-business",
    )


@pytest.mark.parametrize(
    ("name", "body", "message"),
    [
        ("a.jsonl", '{"text": "ok"}\n[1, 2]\n', "a.jsonl:2: is a JSON list; each line must be"),
        ("b.jsonl", '{"text": "ok", "parties": 2}\n', "b.jsonl:1: unknown field parties"),
        ("c.jsonl", '{"text": 5}\n', "c.jsonl:1: text must be a string"),
        ("d.jsonl", '{"text": "x"\n', "d.jsonl:1: not valid JSON"),
        ("e.jsonl", "\n\n", "e.jsonl: empty; add one JSON object per line"),
        ("f.txt", "   \n", "f.txt: no seed text"),
        ("g.txt", b"\xff\xfe\x00bad", "g.txt: not UTF-8 text"),
        ("h.txt", "x" * 20_001, "h.txt: seed text is 20,001 characters"),
        ("i.docx", "x", "i.docx: unsupported file type; use .txt, .md, .jsonl"),
    ],
)
def test_bad_seed_input_gets_one_line_naming_file_and_line(
    tmp_path: Path, name: str, body: str | bytes, message: str
) -> None:
    p = write(tmp_path, name, body)
    with pytest.raises(SeedError) as err:
        read_seed_file(p)
    assert str(err.value).startswith(str(tmp_path / message.split(":")[0]))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_directory_is_read_in_name_order_and_an_empty_one_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "b.txt", "Second\nrow")
    write(tmp_path, "a.md", "First\nrow")
    write(tmp_path, "notes.pdf", "ignored")
    seeds = asyncio.run(FileSeedSource([tmp_path]).seeds())
    assert [s.id for s in seeds] == ["a", "b"]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SeedError, match="directory holds no"):
        asyncio.run(FileSeedSource([empty]).seeds())
