"""Credentials out of model names before anything is written or shown.

A model may be named with its endpoint, `openai:MODEL@http://user:pass@host/v1?key=...`.
The real URL lives only in the backend's memory; every name that reaches the store, the
response cache, an error message, the terminal or a report goes through `redact` first,
so a password or token typed into a URL is never written anywhere.

A URL's query values are all hidden but a few known to be harmless (`api-version`): a
token may travel under any name (`?sk=...`). And the secrets themselves (the API key's
value, a model URL's password and query values) are remembered when a backend is built,
so that text quoting them anywhere (a provider's error body echoing the key, a reply) is
masked as well, whoever wrote it.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

HIDDEN = "***"

_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")
# Query parameters known to carry no secret: shown, since they tell endpoints apart.
_HARMLESS_PARAM = frozenset({"api-version", "api_version"})
# An HTTP credential quoted in text, as providers quote the header they were sent.
# A token has a digit or a symbol in it, so "basic terms" is left alone.
_AUTH_HEADER = re.compile(
    r"\b(Bearer|Basic)\s+(?=[A-Za-z.~-]*[0-9+/=_])[A-Za-z0-9._~+/=-]{6,}", re.IGNORECASE
)
# Shorter values are not remembered: masking "1" or "gpt" everywhere would garble text,
# and a credential is never that short. Nor are values without a letter.
MIN_SECRET_CHARS = 6
_secrets: set[str] = set()
_secrets_lock = threading.Lock()


def remember_secret(value: str | None) -> None:
    """Mask `value` in every text `redact` sees from now on (and its JSON-escaped form,
    for text that is JSON)."""
    if not value or len(value) < MIN_SECRET_CHARS or not any(c.isalpha() for c in value):
        return  # digits alone could be any number in a stored record: never rewritten
    escaped = json.dumps(value)[1:-1]
    with _secrets_lock:
        _secrets.update({value, escaped})


def remember_url_secrets(url: str) -> None:
    """Remember the password and every query value of a model URL."""
    try:
        parts = urlsplit(url)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        password = userinfo.partition(":")[2] or userinfo
        remember_secret(password)
        remember_secret(unquote(password))
    for name, value in pairs:
        if name.lower() not in _HARMLESS_PARAM:
            remember_secret(value)


def mask_secrets(text: str) -> str:
    """`text` with every remembered secret replaced by ***."""
    if not _secrets:
        return text
    for secret in sorted(_secrets, key=len, reverse=True):  # a longer one may hold another
        if secret in text:
            text = text.replace(secret, HIDDEN)
    return text


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
        query = urlencode([(k, _shown_value(k, v)) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _shown_value(name: str, value: str) -> str:
    return value if name.lower() in _HARMLESS_PARAM else HIDDEN


def _redact_unparsable(url: str) -> str:
    """A URL `urlsplit` refuses (a bad IPv6 literal): hide everything after the scheme
    that could hold a credential, rather than risk showing it."""
    scheme, _, rest = url.partition("://")
    host = rest.rpartition("@")[2] if "@" in rest else rest
    return f"{scheme}://{HIDDEN}@{host.split('?')[0]}" if "@" in rest else url.split("?")[0]


def redact(text: str) -> str:
    """Every URL inside `text` (a model name, an error message) redacted, every HTTP
    credential it quotes and every remembered secret masked."""
    text = mask_secrets(text)
    if "Bearer" in text or "Basic" in text or "bearer" in text or "basic" in text:
        text = _AUTH_HEADER.sub(lambda m: f"{m.group(1)} {HIDDEN}", text)
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
