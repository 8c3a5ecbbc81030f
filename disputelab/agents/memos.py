"""Memos that the agents of one run share, owned by the run instead of the process.

Agents spare themselves work that recurs across the episodes of a run (the rule parties
read the same stated positions, state the same stances and word the same phrases again
and again). Those memos used to live in module globals, so they outlived the run that
filled them and were shared by whatever else the process played. Now a run makes one
`AgentMemos`, hands it to every episode it seats (`AgentSetup.memos`), and drops it when
the run ends. A memo changes no result: an episode played with it cold is the episode
played with it warm.

The bag knows no agent family: each keeps its own memo object in it, by type, made on
first use (`memos.of(RuleMemos)`), so agents/ and experiments/ need not know what any
family remembers.
"""

from __future__ import annotations

from typing import TypeVar, cast

T = TypeVar("T")


class AgentMemos:
    """One run's memos, one object per agent family, each made on first use; `parts`
    are ones made beforehand (a test's memos that keep forgetting, say)."""

    __slots__ = ("_parts",)

    def __init__(self, *parts: object) -> None:
        self._parts: dict[type, object] = {type(p): p for p in parts}

    def of(self, kind: type[T]) -> T:
        """The run's memo object of type `kind`, made with `kind()` the first time."""
        part = self._parts.get(kind)
        if part is None:
            part = self._parts[kind] = kind()
        return cast(T, part)
