"""Values worked out once per object, for objects nobody changes once they are built.

Several hot paths derive something costly from an object they see again and again: the
JSON of an agent's reply schema, its prompt instruction, its response format. Such
objects are usually unhashable (dicts, pydantic models), so the memo keys on their
identity. It holds each object it remembers, which keeps the id from being reused by
another object while the entry lives, and it forgets everything once it is full rather
than growing without bound.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class ByIdentity(Generic[V]):
    """A bounded memo from (an object, optional hashable extras) to a value."""

    def __init__(self, limit: int = 1024) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self._limit = limit
        self._entries: dict[tuple[int, Hashable], tuple[object, V]] = {}

    def get(self, obj: object, extra: Hashable = None) -> V | None:
        """The value remembered for this very object (and `extra`), or None."""
        known = self._entries.get((id(obj), extra))
        if known is not None and known[0] is obj:
            return known[1]
        return None

    def put(self, obj: object, value: V, extra: Hashable = None) -> V:
        """Remember `value` for `obj` (and `extra`) and return it."""
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[(id(obj), extra)] = (obj, value)
        return value

    def values(self) -> list[V]:
        """Every value remembered."""
        return [value for _, value in self._entries.values()]

    def __len__(self) -> int:
        return len(self._entries)
