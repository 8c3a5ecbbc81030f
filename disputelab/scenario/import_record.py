"""Which scenario files an import wrote, and what they held then: so that importing again
rewrites its own files (a corrected case, a newer reader) but keeps one a user has edited
since, which only a digest of what was written can tell apart.

The record is `.imported.json` in the output folder: `files`, file name -> SHA-256 of the
text written, and `ids`, an id a case was once imported under -> its id now (AgentMediation
ids were line numbers before they came from the case), so that an old id still resolves.
A record written before `ids` existed is the bare `files` mapping, and still reads. A file
it does not list (written before the record existed, or by hand) and that differs from
what the import would write is kept too: nothing can tell whose it is.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import yaml

from disputelab import atomic

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
        data = data if isinstance(data, dict) else {}
        files = data.get("files", data) if isinstance(data.get("files"), dict) else data
        self.written: dict[str, str] = _strings(files)
        self.ids: dict[str, str] = _strings(data.get("ids")) if "files" in data else {}

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

    def renamed(self, old: str, new: str) -> None:
        """Case `old` is imported as `new` now; ids that pointed at `old` follow it."""
        if old != new:
            self.ids[old] = new
            for was, now in self.ids.items():
                if now == old:
                    self.ids[was] = new

    def retire(self, old: str, new: str, title: str) -> Path | None:
        """Record that case `old` is imported as `new` now, and remove `old`'s file when an
        import wrote it, nobody has edited it since and it holds the same case (`title`):
        the record resolves the old id. Returns the old file when it had to be kept."""
        self.renamed(old, new)
        path = self.path.parent / f"{old}.yaml"
        if old == new or not path.exists():
            return None
        try:
            current = path.read_text(encoding="utf-8")
        except (OSError, ValueError):
            return path
        if self.written.get(path.name) != digest(current) or _title(current) != title:
            return path
        path.unlink()
        del self.written[path.name]
        return None

    def current_id(self, sid: str) -> str | None:
        """The id now of a case once imported as `sid`, if the record knows it."""
        return self.ids.get(sid)

    def save(self) -> None:
        data = {"files": self.written, "ids": self.ids}
        atomic.write_text(self.path, json.dumps(data, indent=1, sort_keys=True))


def _title(text: str) -> object:
    """The title a scenario file's text gives (None when it cannot be read)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    return data.get("title") if isinstance(data, dict) else None


def _strings(data: object) -> dict[str, str]:
    """A mapping of strings from what a record holds (anything else: empty)."""
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items() if isinstance(v, str)}
