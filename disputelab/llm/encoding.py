"""JSON for requests whose largest part repeats: the schema.

An agent sends the same JSON schema with every call, and encoding its nested objects was
most of the CPU that encoding a whole request cost (26 of 39 us for a party's move). The
schema is encoded once per schema object and spliced into each request's text; the
result is byte for byte what `json.dumps` gives, so cache keys do not change.
"""

from __future__ import annotations

import json
from typing import Any

from disputelab.memo import ByIdentity

# A string no request holds in practice. If one ever does, splicing is skipped.
_SLOT = "\x00disputelab:slot\x00"
_ENCODED: ByIdentity[str] = ByIdentity()


def encoded_once(value: object, sort_keys: bool = False, ensure_ascii: bool = True) -> str:
    """`json.dumps(value, ...)`, remembered for this very object: callers pass schemas
    they never change once built."""
    options = (sort_keys, ensure_ascii)
    known = _ENCODED.get(value, options)
    if known is not None:
        return known
    text = json.dumps(value, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    return _ENCODED.put(value, text, options)


def dumps_spliced(
    payload: dict[str, Any], key: str, sort_keys: bool = False, ensure_ascii: bool = True
) -> str:
    """`json.dumps(payload, sort_keys=..., ensure_ascii=...)`, with `payload[key]` encoded
    by `encoded_once`. Exactly equal to the plain call for every payload."""
    value = payload[key]
    if value is None or isinstance(value, str | int | float | bool):
        return json.dumps(payload, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    text = json.dumps({**payload, key: _SLOT}, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    token = json.dumps(_SLOT, ensure_ascii=ensure_ascii)
    head, found, tail = text.partition(token)
    if not found or token in tail:  # the slot string is somewhere else too: no shortcut
        return json.dumps(payload, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
    return head + encoded_once(value, sort_keys, ensure_ascii) + tail
