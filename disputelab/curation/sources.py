"""Where seed reports come from: files, or any source object a caller passes in.

A seed is the raw account of one real or realistic dispute (SoCRATES step 1). The
pipeline reads files (`FileSeedSource`) and takes any other object with
`async def seeds() -> list[Seed]` beside them. This package makes no network calls and
ships no web-search source: finding dispute accounts on the web is left to the caller.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from disputelab.errors import DisputelabError
from disputelab.scenario.inputs import (
    MAX_FILE_BYTES,
    InputLimitError,
    UserFileError,
    load_json,
    path_kind,
    read_user_file,
)
from disputelab.scenario.schema import SOCRATES_DOMAINS

DOMAINS: tuple[str, ...] = SOCRATES_DOMAINS
# The paper's table abbreviations and common spellings, so seed files can use either.
_DOMAIN_ALIASES = {
    "trans": "transactional",
    "heal": "healthcare",
    "health": "healthcare",
    "env": "environmental",
    "environment": "environmental",
    "b2b": "business-to-business",
    "business": "business-to-business",
    "pol": "public-policy",
    "policy": "public-policy",
    "intl": "international",
    "intra": "intra-organisational",
    "intra-organizational": "intra-organisational",
    "workplace": "intra-organisational",
}
SEED_SUFFIXES = (".txt", ".md", ".jsonl")
# A seed report is a few paragraphs to a few pages; past this it would crowd out the
# instructions in a small model's context.
MAX_SEED_CHARS = 20_000


class SeedError(DisputelabError, ValueError):
    """Seed input that cannot be used; the message is one line naming file and line."""


@dataclass(frozen=True, slots=True)
class Seed:
    """One dispute account to recast: `origin` says where it came from (file:line or URL)."""

    id: str
    title: str
    text: str
    origin: str
    domain: str | None = None


@runtime_checkable
class SeedSource(Protocol):
    """Anything that yields seeds. Raise SeedError (one line) for input it cannot read."""

    async def seeds(self) -> list[Seed]: ...


def normalise_domain(value: str, where: str) -> str:
    """A SoCRATES domain name from its name, abbreviation or a common spelling."""
    key = value.strip().lower().replace("_", "-").replace(" ", "-")
    key = _DOMAIN_ALIASES.get(key, key)
    if key not in DOMAINS:
        raise SeedError(f"{where}: unknown domain {value!r}; use one of {', '.join(DOMAINS)}")
    return key


def slug(text: str) -> str:
    """A scenario-safe id: lower case letters, digits and hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60].strip("-")


@dataclass
class FileSeedSource:
    """Seeds from files: a .txt or .md file is one seed; a .jsonl file holds one per line.

    Directories are read for those suffixes, in name order. JSONL lines are objects with
    `text` and optionally `id`, `title` and `domain`.
    """

    paths: Sequence[str | Path]

    async def seeds(self) -> list[Seed]:
        """Read every path, failing on the first bad input with a one-line SeedError."""
        out: list[Seed] = []
        for path in expand_paths(self.paths):
            out += read_seed_file(path)
        return out


def expand_paths(paths: Sequence[str | Path]) -> list[Path]:
    """Files as given, and the seed files directly inside any directory given."""
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if path_kind(p) == "dir":
            found = sorted(f for f in p.iterdir() if f.suffix.lower() in SEED_SUFFIXES)
            if not found:
                raise SeedError(f"{p}: directory holds no {', '.join(SEED_SUFFIXES)} files")
            out += found
        else:
            out.append(p)
    return out


def read_seed_file(path: str | Path) -> list[Seed]:
    """The seeds in one file, or a one-line SeedError naming the file (and line)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in SEED_SUFFIXES:
        raise SeedError(f"{p}: unsupported file type; use {', '.join(SEED_SUFFIXES)}")
    try:
        text = read_user_file(p, MAX_FILE_BYTES, f"a seed file ({', '.join(SEED_SUFFIXES)})")
    except UserFileError as exc:
        raise SeedError(f"{p}: {exc}") from None
    if suffix == ".jsonl":
        return _read_jsonl(p, text)
    return [_text_seed(slug(p.stem) or "seed", None, text, str(p), None)]


def _read_jsonl(p: Path, text: str) -> list[Seed]:
    seeds: list[Seed] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{p}:{n}"
        try:
            data: Any = load_json(line)
        except json.JSONDecodeError as exc:
            raise SeedError(f"{where}: not valid JSON: {exc.msg} at column {exc.colno}") from None
        except InputLimitError as exc:
            raise SeedError(f"{where}: {exc}") from None
        if not isinstance(data, dict):
            raise SeedError(
                f"{where}: is a JSON {type(data).__name__}; each line must be an object"
            )
        unknown = sorted(set(data) - {"id", "title", "text", "domain"})
        if unknown:
            raise SeedError(
                f"{where}: unknown field {', '.join(unknown)}; use id, title, text, domain"
            )
        for field in ("id", "title", "text", "domain"):
            if field in data and not isinstance(data[field], str):
                raise SeedError(f"{where}: {field} must be a string")
        sid = slug(data.get("id") or "") or f"{slug(p.stem) or 'seed'}-{n}"
        domain = normalise_domain(data["domain"], where) if data.get("domain") else None
        seeds.append(_text_seed(sid, data.get("title"), data.get("text", ""), where, domain))
    if not seeds:
        raise SeedError(f"{p}: empty; add one JSON object per line")
    return seeds


def _text_seed(sid: str, title: str | None, text: str, where: str, domain: str | None) -> Seed:
    body = text.strip()
    if not body:
        raise SeedError(f"{where}: no seed text; describe the dispute in a few sentences")
    if len(body) > MAX_SEED_CHARS:
        raise SeedError(
            f"{where}: seed text is {len(body):,} characters; keep it under {MAX_SEED_CHARS:,}"
        )
    first = body.splitlines()[0].lstrip("#").strip()
    return Seed(sid, (title or first)[:200].strip() or sid, body, where, domain)
