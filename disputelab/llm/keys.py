"""API keys, looked up when a model is built: the environment first, then a `.env` file.

A key is read from the real environment; where a variable is unset (or empty there), from
`.env` in the working directory, if there is one. The real environment always wins, so a
key exported in the shell overrides the file. Only this lookup reads the file, and only
when a key is asked for that the environment lacks: a run of rule agents, or one whose
keys are all exported, never opens it. Values are returned to the caller and kept
nowhere else: not in `os.environ` (so no child process inherits them), not in the store.

The file is read strictly, as the common subset of what dotenv tools accept:

    # a comment
    NAME=value
    export NAME=value          # `export` is allowed; so is a trailing comment
    NAME="a value with spaces"   # \\" \\\\ and \\n are escapes in double quotes
    NAME='taken literally'

No `${VAR}` expansion and no value spanning lines. Any other line, or a name given twice,
is an `EnvFileError` naming the file and line but never the line's text, since a line
that does not parse may well be a key pasted on its own.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from disputelab.llm.model_errors import EnvFileError
from disputelab.scenario.inputs import UserFileError, read_user_file

ENV_FILE = ".env"
# The largest .env read: a few keys fit in a hundred bytes; this is generous.
MAX_ENV_BYTES = 256 * 1024

_LINE = re.compile(r"\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*")
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n"}


def read_key(name: str, path: Path | None = None) -> str:
    """The value of the variable `name`: the environment's, else the `.env` file's (in
    the working directory, or `path`), else ''. EnvFileError for a file that is there
    but does not parse, said only when the file is consulted."""
    value = os.environ.get(name)
    if value:
        return value
    return env_file(path).get(name, "")


def env_file(path: Path | None = None) -> dict[str, str]:
    """The variables a `.env` file sets ({} when there is none). Read afresh each time:
    it is read once per endpoint, and a long-lived notebook sees the file as it is."""
    p = path or Path(ENV_FILE)
    if not p.exists():
        return {}
    try:
        text = read_user_file(p, MAX_ENV_BYTES, what="a .env file of NAME=value lines")
    except UserFileError as exc:
        raise EnvFileError(f"{p}: {exc.problem}") from None
    return parse_env(text, str(p))


def parse_env(text: str, source: str = ENV_FILE) -> dict[str, str]:
    """The NAME=value pairs of a `.env` file's text; EnvFileError at the first line that
    is not one (`source:LINE: ...`), never quoting it."""
    values: dict[str, str] = {}
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None:
            raise EnvFileError(
                f"{source}:{number}: not a NAME=value line (NAME is letters, digits and _, "
                "not starting with a digit); the line is not shown, it may hold a key"
            )
        name, raw = match.groups()
        if name in seen:
            first = seen[name]
            raise EnvFileError(f"{source}:{number}: {name} is set again (first on line {first})")
        problem, value = _value(raw)
        if problem:
            raise EnvFileError(f"{source}:{number}: {name}: {problem}")
        seen[name] = number
        values[name] = value
    return values


def _value(raw: str) -> tuple[str, str]:
    """(problem, value) for the text after `=`: the problem is '' when it parses."""
    if not raw or raw[0] not in "'\"":
        value = re.split(r"\s#", raw, maxsplit=1)[0].rstrip()  # a comment after a space
        if any(q in value for q in "'\""):
            return "a quote inside an unquoted value; quote the whole value", ""
        return "", value
    quote = raw[0]
    out: list[str] = []
    i = 1
    while i < len(raw):
        c = raw[i]
        if c == quote:
            rest = raw[i + 1 :].strip()
            if rest and not rest.startswith("#"):
                return "text after the closing quote", ""
            return "", "".join(out)
        if c == "\\" and quote == '"' and i + 1 < len(raw) and raw[i + 1] in _ESCAPES:
            out.append(_ESCAPES[raw[i + 1]])
            i += 2
            continue
        out.append(c)
        i += 1
    return f"the {quote} quote is not closed on this line (values span one line)", ""
