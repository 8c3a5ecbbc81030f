"""A named registry of plug-ins: protocols, agent kinds and evaluators each keep one.

Built-in plug-ins register themselves when their module is imported; a registry imports
those modules the first time it is read (`loaders`), so looking something up never
depends on import order, and a plug-in registered later (by a user's package or a test)
is found the same way. Installed packages can add plug-ins through the entry-point group
`disputelab.plugins`: each entry point names a module to import.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from functools import cache
from importlib.metadata import entry_points
from typing import Generic, TypeVar

T = TypeVar("T")
Loader = str | Callable[[], None]  # a module to import, or a function that imports some

PLUGIN_GROUP = "disputelab.plugins"


def subpackages(package: str) -> Callable[[], None]:
    """A loader that imports every subpackage of `package` (one per protocol folder)."""

    def load() -> None:
        pkg = importlib.import_module(package)
        for info in pkgutil.iter_modules(pkg.__path__):
            if info.ispkg:
                importlib.import_module(f"{package}.{info.name}")

    return load


def modules_named(package: str, name: str) -> Callable[[], None]:
    """A loader that imports every module called `name` anywhere below `package`."""

    def load() -> None:
        pkg = importlib.import_module(package)
        for info in pkgutil.walk_packages(pkg.__path__, f"{package}."):
            if info.name.rsplit(".", 1)[-1] == name:
                importlib.import_module(info.name)

    return load


@cache
def load_entry_point_plugins() -> None:
    """Import the modules that installed packages list under `disputelab.plugins`, once
    per process: scanning the installed packages costs tens of milliseconds."""
    for ep in entry_points(group=PLUGIN_GROUP):
        importlib.import_module(ep.value.split(":")[0])


class UnknownPluginError(ValueError):
    """A name no plug-in of that kind was registered under."""


class Registry(Generic[T]):
    """Plug-ins of one kind by name, in registration order."""

    def __init__(self, kind: str, loaders: tuple[Loader, ...] = ()) -> None:
        self.kind = kind
        self._loaders = loaders
        self._loaded = False
        self._items: dict[str, T] = {}

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            for loader in (*self._loaders, load_entry_point_plugins):
                if isinstance(loader, str):
                    importlib.import_module(loader)
                else:
                    loader()

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
