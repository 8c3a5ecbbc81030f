"""A named registry of plug-ins: protocols, agent kinds and evaluators each keep one.

Built-in plug-ins register themselves when their module is imported; a registry imports
those modules the first time it is read (`loaders`), so looking something up never
depends on import order, and a plug-in registered later (by a user's package or a test)
is found the same way.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownPluginError(ValueError):
    """A name no plug-in of that kind was registered under."""


class Registry(Generic[T]):
    """Plug-ins of one kind by name, in registration order."""

    def __init__(self, kind: str, loaders: tuple[str, ...] = ()) -> None:
        self.kind = kind
        self._loaders = loaders
        self._loaded = False
        self._items: dict[str, T] = {}

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            for module in self._loaders:
                importlib.import_module(module)

    def register(self, name: str, item: T, replace: bool = False) -> T:
        """Add `item` under `name`; registering a taken name is an error unless `replace`."""
        if name in self._items and not replace:
            raise ValueError(f"a {self.kind} named {name!r} is already registered")
        self._items[name] = item
        return item

    def unregister(self, name: str) -> None:
        self._items.pop(name, None)

    def decorator(self, name: str) -> Callable[[T], T]:
        def add(item: T) -> T:
            return self.register(name, item)

        return add

    def get(self, name: str) -> T:
        self._load()
        try:
            return self._items[name]
        except KeyError:
            raise UnknownPluginError(
                f"unknown {self.kind} {name!r}; available: {', '.join(self.names())}"
            ) from None

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._items

    def names(self) -> tuple[str, ...]:
        self._load()
        return tuple(self._items)

    def items(self) -> Iterator[tuple[str, T]]:
        self._load()
        return iter(list(self._items.items()))
