"""Reading files a user names, and parsing their YAML and JSON, within stated limits.

Every reader of a user file (scenarios, experiment specs, importer case files, statute
corpora, curation seeds) goes through `read_user_file`, and every YAML or JSON parse of one
through `load_yaml` or `load_json`. A hostile or mistaken input (a device such as
/dev/zero, a FIFO, a file of gigabytes, a 5,000-digit number, nesting thousands deep, a
YAML alias bomb) then fails at once with one line that names the problem, instead of a
hang, a traceback or memory without bound. The limits are documented in docs/concepts.md
("Input limits").
"""

from __future__ import annotations

import fnmatch
import glob
import json
import os
import re
import stat
from collections.abc import Hashable
from itertools import accumulate
from pathlib import Path
from typing import Any

import yaml

from disputelab.errors import DisputelabError

# A scenario, spec, YAML corpus or seed file. The biggest real scenario (an imported
# ProMediate case with every profile in its private notes) is about 80 KB.
MAX_FILE_BYTES = 4 * 1024 * 1024
# An importer's case file or a JSONL statute corpus: AgentMediation's whole dataset is
# 2 MB (cases.jsonl 0.8 MB, raw.jsonl 1.2 MB), ProMediate's biggest case 74 KB.
MAX_DATASET_BYTES = 64 * 1024 * 1024
# Containers inside containers. A scenario needs 6 levels, a spec 3, an importer record 4.
MAX_DEPTH = 32
# Digits of an integer literal. Seeds, the largest numbers anywhere, have 16; Python
# refuses to convert more than 4,300 at all.
MAX_INT_DIGITS = 64
# Values in one YAML document, counting each use of an alias in full (which defeats alias
# bombs). The pure-Python YAML parser takes about 25 us per value, so this bounds a parse
# to a few seconds; the biggest real scenario has about 1,000 values.
MAX_YAML_VALUES = 100_000


# A glob in a spec: the paths it may match, and the directory entries the search may look
# at (a pattern such as /*/*/*/*/x would otherwise walk the whole file system).
MAX_GLOB_MATCHES = 1_000
MAX_GLOB_VISITS = 100_000


class UserFileError(DisputelabError, ValueError):
    """A user file that cannot be read. `str()` is the problem in one line, without the
    path, which is in `path`: callers put it where their messages put the source."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        self.problem = problem
        super().__init__(problem)


class InputLimitError(DisputelabError, ValueError):
    """Parsed text beyond a limit (nesting, integer digits, values); one line."""


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MiB" if n >= 1024 * 1024 else f"{n:,} bytes"


def _kind_of(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_user_file(
    path: str | Path, max_bytes: int = MAX_FILE_BYTES, what: str = "a scenario file"
) -> str:
    """The UTF-8 text of a regular file of at most `max_bytes`, or UserFileError.

    `what` names what the file should be ("a scenario file") for the message. The file is
    checked with stat before it is opened: opening a device can block or act (a FIFO waits
    for a writer, some devices rewind or arm on open), and /dev/zero never ends."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise UserFileError(p, "no such file; check the path") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise UserFileError(p, f"cannot be read: {_why(exc)}") from None
    if stat.S_ISDIR(st.st_mode):
        raise UserFileError(p, f"is a directory; give {what}")
    if not stat.S_ISREG(st.st_mode):
        raise UserFileError(p, f"is {_kind_of(st.st_mode)}, not a regular file; give {what}")
    if st.st_size > max_bytes:
        raise UserFileError(p, _too_big(st.st_size, max_bytes, what))
    try:
        # O_NONBLOCK: should the path become a FIFO after the check, open must not wait.
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise UserFileError(p, f"is not a regular file; give {what}")
            # One byte over the limit tells a file that grew (or a /proc file, whose
            # size says 0) from one that fits.
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise UserFileError(p, f"cannot be read: {_why(exc)}") from None
    if len(data) > max_bytes:
        raise UserFileError(p, _too_big(len(data), max_bytes, what))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserFileError(
            p,
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save it as UTF-8",
        ) from None


def make_user_dir(path: str | Path) -> Path:
    """The folder at `path`, made with its parents where missing; UserFileError when it
    cannot be (a file is in the way, or it may not be written)."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UserFileError(p, "is a file; give a folder") from None
    except NotADirectoryError:
        raise UserFileError(p, "cannot be made: part of the path is a file") from None
    except (OSError, ValueError) as exc:
        raise UserFileError(p, f"cannot be made: {_why(exc)}") from None
    return p


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _too_big(size: int, max_bytes: int, what: str) -> str:
    return (
        f"is {_size(size)} or more, over the {_size(max_bytes)} limit for {what}; "
        "trim it or split it into smaller files"
    )


def path_kind(path: str | Path) -> str:
    """'file' (regular), 'dir', 'other' (a device, FIFO or socket), 'missing', or
    'unreadable' (a name too long, a NUL in it, no permission): never raises, where
    `Path.is_file()` raises on a name too long."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except (OSError, ValueError):
        return "unreadable"
    if stat.S_ISREG(mode):
        return "file"
    return "dir" if stat.S_ISDIR(mode) else "other"


def glob_paths(pattern: str) -> list[str]:
    """The paths `pattern` matches, sorted, as `glob.glob` finds them (`*`, `?` and `[...]`
    within one path component; a leading dot matched only by a leading dot), or
    InputLimitError past MAX_GLOB_MATCHES matches or MAX_GLOB_VISITS entries looked at.
    A pattern without wildcards is returned as it is."""
    if not glob.has_magic(pattern):
        return [pattern]
    current = ["/"] if pattern.startswith("/") else [""]
    visits = 0
    for part in (p for p in pattern.split("/") if p):
        found: list[str] = []
        for folder in current:
            if not glob.has_magic(part):
                found.append(os.path.join(folder, part))
                continue
            try:
                entries = list(os.scandir(folder or "."))
            except (OSError, ValueError):
                continue  # not a folder, or one that cannot be listed: no match here
            visits += len(entries)
            if visits > MAX_GLOB_VISITS:
                raise InputLimitError(
                    f"the pattern makes the search look at more than {MAX_GLOB_VISITS:,} "
                    "directory entries; narrow it"
                )
            found += [
                os.path.join(folder, e.name)
                for e in entries
                if fnmatch.fnmatchcase(e.name, part)
                and (part.startswith(".") or not e.name.startswith("."))
            ]
        if len(found) > MAX_GLOB_MATCHES:
            raise InputLimitError(
                f"the pattern matches more than {MAX_GLOB_MATCHES:,} paths; narrow it"
            )
        current = found
    if pattern.endswith("/"):
        return sorted(p + "/" for p in current if os.path.isdir(p))
    return sorted(p for p in current if os.path.lexists(p))


# --- JSON ---------------------------------------------------------------------------

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def json_depth(text: str) -> int:
    """How deeply the arrays and objects of JSON `text` nest (strings are skipped)."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    steps = (1 if c in "[{" else -1 for c in brackets)
    return max(accumulate(steps), default=0)


def _bounded_int(digits: str) -> int:
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise InputLimitError(
            f"holds an integer of {len(digits.lstrip('-')):,} digits; numbers have at most "
            f"{MAX_INT_DIGITS} (quote it if it is text)"
        )
    return int(digits)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise InputLimitError(f"duplicate key {_short(key)!r}; give each key once")
        seen[key] = value
    return seen


def load_json(text: str, unique_keys: bool = False) -> Any:
    """`json.loads` within MAX_DEPTH and MAX_INT_DIGITS; with `unique_keys`, a key given
    twice in one object is an error, as in YAML. Raises json.JSONDecodeError or
    InputLimitError, both ValueErrors with a one-line message."""
    # Counting brackets is needed only where there are enough of them to nest too deep.
    if text.count("[") + text.count("{") > MAX_DEPTH and json_depth(text) > MAX_DEPTH:
        raise InputLimitError(_too_deep(""))
    return json.loads(
        text, parse_int=_bounded_int, object_pairs_hook=_unique_keys if unique_keys else None
    )


def _too_deep(where: str) -> str:
    return (
        f"nests lists and mappings more than {MAX_DEPTH} levels deep{where}; flatten the structure"
    )


def _short(value: object, limit: int = 60) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- YAML ---------------------------------------------------------------------------


_YAML_TAG = "tag:yaml.org,2002:"
# The tags a document may name explicitly: YAML's standard scalars and collections.
# The others (!!binary, !!timestamp, !!set, !!omap, local tags) build values no input
# of ours holds; an unquoted date stays the text it looks like.
_STANDARD_TAGS = frozenset(
    _YAML_TAG + t for t in ("str", "int", "float", "bool", "null", "seq", "map")
)


class _SafeLoader(yaml.SafeLoader):
    """YAML's pure-Python safe loader (the C one has no depth limit and crashes on deep
    nesting), with every limit enforced while the document is composed, before any
    Python object is built:

    - a key given twice in one mapping is an error (the last one silently winning hides
      a typo in a scenario or a spec);
    - nesting deeper than MAX_DEPTH, more than `max_values` values (each alias counted at
      its full size) and an alias inside its own anchor are errors;
    - an integer of more than MAX_INT_DIGITS digits is an error."""

    max_values = MAX_YAML_VALUES

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._values = 0
        self._sizes: dict[str, int] = {}  # anchor -> values under it, aliases expanded
        self._open: set[str] = set()  # anchors of the nodes being composed

    def _event(self) -> Any:
        return self.peek_event()  # type: ignore[no-untyped-call]

    def _where(self) -> str:
        mark = self._event().start_mark
        return f" at line {mark.line + 1}" if mark is not None else ""

    def _count(self, n: int) -> None:
        self._values += n
        if self._values > self.max_values:
            raise InputLimitError(
                f"holds more than {self.max_values:,} values (aliases counted in full)"
                f"{self._where()}; split it or drop repeated aliases"
            )

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self._event()
        tag = getattr(event, "tag", None)
        if tag is not None and tag not in _STANDARD_TAGS and tag != "!":
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"the tag {_short(tag.replace(_YAML_TAG, '!!'))} is not allowed; only text, "
                "numbers, true/false, null, lists and mappings",
                event.start_mark,
            )
        if isinstance(event, yaml.AliasEvent):
            alias = str(event.anchor)
            if alias in self._open:
                raise InputLimitError(
                    f"alias *{_short(alias)} is used inside its own anchor{self._where()}; "
                    "a document may not contain itself"
                )
            self._count(self._sizes.get(alias, 1))
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise InputLimitError(_too_deep(self._where()))
        anchor: str | None = getattr(event, "anchor", None)
        before = self._values
        self._count(1)
        if anchor is not None:
            self._open.add(anchor)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
            if anchor is not None:
                self._open.discard(anchor)
        if anchor is not None:
            self._sizes[anchor] = self._values - before
        return node

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                repeated = key in seen
                seen.add(key)
            except TypeError:  # a list or mapping as a key
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    "a key is a list or a mapping; keys must be text or numbers",
                    key_node.start_mark,
                ) from None
            if repeated:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {_short(repr(key))}", key_node.start_mark
                )
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        digits = re.sub(r"[^0-9a-fA-F]", "", str(node.value))
        if len(digits) > MAX_INT_DIGITS:
            line = node.start_mark.line + 1 if node.start_mark is not None else "?"
            raise InputLimitError(
                f"holds an integer of {len(digits):,} digits at line {line}; numbers have at "
                f"most {MAX_INT_DIGITS} (quote it if it is text)"
            )
        return super().construct_yaml_int(node)


_SafeLoader.add_constructor("tag:yaml.org,2002:int", _SafeLoader.construct_yaml_int)


# A date as text: the implicit timestamp would make `title: 2001-12-14` a date object.
def _date_as_text(loader: _SafeLoader, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


_SafeLoader.add_constructor("tag:yaml.org,2002:timestamp", _date_as_text)


def load_yaml(text: str, max_values: int = MAX_YAML_VALUES) -> Any:
    """Parse one YAML document safely within the limits above. Raises yaml.YAMLError (bad
    syntax, a duplicate key) or InputLimitError."""
    loader = _SafeLoader(text)
    loader.max_values = max_values
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def yaml_problem(exc: yaml.YAMLError, lead: str = "not valid YAML") -> str:
    """'LEAD: PROBLEM at line N' for a parse error, in one line."""
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow
        return f"{lead}: character #x{exc.character:04x} is not allowed (offset {exc.position})"
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or "syntax error"
    return f"{lead}: {problem}{where}"
