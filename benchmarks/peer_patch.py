"""Patch a copy of a peer's clone so that it runs here: small search-and-replace steps.

The user's clone is never touched: `patched_copy` copies it into a temporary folder and
applies the steps there. Each step names a file, a short anchor it looks for and a
one-line reason. A step whose file or anchor is missing means the folder is not the peer,
or the peer has moved on since the benchmark was written: `PeerMismatch` says which, and
`refuse` turns it into the one-line error (exit status 2) the scripts end with. Steps
marked optional fix something later versions may have fixed already (Python 3.12-only
syntax, for one), and are skipped when their anchor is gone.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn


class PeerMismatch(Exception):
    """The folder is not the peer this benchmark was written for, or no longer matches it."""


@dataclass(frozen=True)
class Replace:
    """Replace every occurrence of `anchor` in `path` by `text`."""

    path: str
    anchor: str
    text: str
    why: str
    optional: bool = False

    def apply(self, root: Path) -> bool:
        source = _read(root, self.path)
        if self.anchor not in source:
            if self.optional:
                return False
            raise PeerMismatch(
                f"{self.path}: {self.anchor!r} not found (step: {self.why}); "
                "is this the peer's clone, and at the version the benchmark knows?"
            )
        (root / self.path).write_text(source.replace(self.anchor, self.text), encoding="utf-8")
        return True


@dataclass(frozen=True)
class ReplacePattern:
    """Replace every match of the regular expression `pattern` in `path` by `text`: for a
    line whose exact text the benchmark cannot know (a value a user fills in)."""

    path: str
    pattern: str
    text: str
    why: str

    def apply(self, root: Path) -> bool:
        source = _read(root, self.path)
        patched, count = re.subn(self.pattern, lambda _: self.text, source)
        if count == 0:
            raise PeerMismatch(
                f"{self.path}: nothing matches {self.pattern!r} (step: {self.why}); "
                "is this the peer's clone, and at the version the benchmark knows?"
            )
        (root / self.path).write_text(patched, encoding="utf-8")
        return True


@dataclass(frozen=True)
class CopyIfMissing:
    """Copy `source` to `path` unless `path` exists (a template the peer asks users to copy)."""

    source: str
    path: str
    why: str

    def apply(self, root: Path) -> bool:
        if (root / self.path).exists():
            return False
        if not (root / self.source).is_file():
            raise PeerMismatch(f"{self.source}: missing (step: {self.why}); is this the peer?")
        shutil.copyfile(root / self.source, root / self.path)
        return True


@dataclass(frozen=True)
class AddFile:
    """Write a file of our own into the copy (a stand-in for a package not installed)."""

    path: str
    text: str
    why: str

    def apply(self, root: Path) -> bool:
        (root / self.path).write_text(self.text, encoding="utf-8")
        return True


Step = Replace | ReplacePattern | CopyIfMissing | AddFile


def guarded_import(line: str, names: str, why: str) -> str:
    """`line` (an import) in a try block that binds `names` to None when it fails."""
    fallback = " = ".join([*names.split(), "None"])
    return f"try:\n    {line}\nexcept ImportError:  # {why}\n    {fallback}"


def _read(root: Path, path: str) -> str:
    try:
        return (root / path).read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError) as e:
        raise PeerMismatch(f"{path}: cannot read it ({type(e).__name__}); is this the peer?") from e


def patched_copy(clone: Path, steps: Sequence[Step], into: Path) -> Path:
    """A copy of `clone` in `into` with `steps` applied; the clone itself is only read.
    Its git history and earlier outputs are left behind."""
    if not clone.is_dir():
        raise PeerMismatch(f"{clone}: not a folder")
    copy = into / clone.resolve().name
    ignore = shutil.ignore_patterns(".git", "output*", "test_*", "__pycache__")
    shutil.copytree(clone, copy, ignore=ignore)
    for step in steps:
        step.apply(copy)
    return copy


def describe(steps: Sequence[Step]) -> list[str]:
    """One line per step, for --help and the README: the file and why."""
    return [f"{s.path}: {s.why}" for s in steps]


def refuse(message: str) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)
