"""Credentials out of model names before anything is written or shown.

A model may be named with its endpoint, `openai:MODEL@http://user:pass@host/v1?key=...`.
The real URL lives only in the backend's memory; every name that reaches the store, the
response cache, an error message, the terminal or a report goes through `redact` first,
so a password or token typed into a URL is never written anywhere.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

HIDDEN = "***"

# Query parameters that carry a credential in the wild: API keys, bearer and access
# tokens, signed-URL signatures, passwords. Matched on the name, case-insensitively.
_SECRET_PARAM = re.compile(
    r"(^|[_-])(key|apikey|token|sig|signature|secret|password|passwd|pwd|auth|"
    r"authorization|credential|credentials|code)$|^(x-amz-|x-goog-)",
    re.IGNORECASE,
)
_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")


def redact_url(url: str) -> str:
    """`url` with its userinfo and any credential-like query value replaced by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return _redact_unparsable(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = HIDDEN + "@" + netloc.rpartition("@")[2]
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_SECRET_PARAM.search(k) for k, _ in pairs):
            query = urlencode(
                [(k, HIDDEN if _SECRET_PARAM.search(k) else v) for k, v in pairs], safe="*"
            )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _redact_unparsable(url: str) -> str:
    """A URL `urlsplit` refuses (a bad IPv6 literal): hide everything after the scheme
    that could hold a credential, rather than risk showing it."""
    scheme, _, rest = url.partition("://")
    host = rest.rpartition("@")[2] if "@" in rest else rest
    return f"{scheme}://{HIDDEN}@{host.split('?')[0]}" if "@" in rest else url.split("?")[0]


def redact(text: str) -> str:
    """Every URL inside `text` (a model name, an error message) redacted."""
    if "://" not in text:
        return text
    return _URL.sub(lambda m: redact_url(m.group(0)), text)


def redact_deep(value: Any) -> Any:
    """`redact` applied to every string inside nested dicts, lists and tuples."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: redact_deep(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_deep(v) for v in value)
    return value


def split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """`url` without its userinfo, and the (user, password) it carried, if any."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    clean = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    return clean, (unquote(user), unquote(password))
