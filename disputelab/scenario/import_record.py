"""Which scenario files an import wrote, and what they held then: so that importing again
rewrites its own files (a corrected case, a newer reader) but keeps one a user has edited
since, which only a digest of what was written can tell apart.

The record is `.imported.json` in the output folder: file name -> SHA-256 of the text
written. A file it does not list (written before the record existed, or by hand) and
that differs from what the import would write is kept too: nothing can tell whose it is.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

RECORD_NAME = ".imported.json"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ImportRecord:
    """The record of one output folder, read once and written back with `save`."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / RECORD_NAME
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = {}  # none yet, or unreadable: every differing file is then kept
        self.written: dict[str, str] = (
            {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
        )

    def may_write(self, path: Path, text: str) -> bool:
        """Whether writing `text` to `path` loses nothing: there is no file, it holds
        `text` already, or it still holds what an import wrote there."""
        try:
            current = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return True
        except (OSError, ValueError):
            return False  # unreadable or not text: not ours to replace
        return current == text or self.written.get(path.name) == digest(current)

    def wrote(self, path: Path, text: str) -> None:
        self.written[path.name] = digest(text)

    def save(self) -> None:
        self.path.write_text(json.dumps(self.written, indent=1, sort_keys=True), encoding="utf-8")
