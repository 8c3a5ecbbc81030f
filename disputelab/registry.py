"""Named registries of plug-ins, and the one rule that finds them.

A plug-in is a module: importing it registers what it defines (protocols, agent kinds,
evaluators, presets), each with a decorator or call beside the definition. disputelab's
own plug-ins are the modules of `BUILTIN_PLUGINS`; an installed package adds its own by
naming modules under the entry-point group `disputelab.plugins`:

    [project.entry-points."disputelab.plugins"]
    show-of-hands = "my_package.protocol"

Every registry imports all plug-ins the first time it is read, so a lookup never depends
on import order, and a plug-in found through an entry point is listed, played and
reported exactly as a built-in one.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from typing import Generic, TypeVar

from disputelab.errors import DisputelabError

T = TypeVar("T")

PLUGIN_GROUP = "disputelab.plugins"
# The package's own plug-ins. A protocol's package registers its agents, evaluators and
# presets as it is imported; the shared kinds and evaluators have modules of their own.
BUILTIN_PLUGINS = (
    "disputelab.agents.parties.kinds",
    "disputelab.agents.paraphrase.kinds",
    "disputelab.evaluation.evaluators",
    "disputelab.protocols.bilateral",
    "disputelab.protocols.roundtable",
    "disputelab.protocols.settlement",
    "disputelab.protocols.staged",
)


class PluginError(ImportError):
    """An installed plug-in that cannot be imported: named, so that a broken third-party
    package is not mistaken for a fault of disputelab."""


class _Plugins:
    """Whether the plug-ins are imported yet; loading is once per process (scanning the
    installed packages' entry points costs tens of milliseconds)."""

    loaded = False
    loading = False

    def load(self) -> None:
        # A plug-in module may read a registry while it is imported (a protocol listing
        # agent kinds for its help text): that read must not start the loading again.
        if self.loaded or self.loading:
            return
        self.loading = True
        try:
            for module in BUILTIN_PLUGINS:
                importlib.import_module(module)
            for ep in entry_points(group=PLUGIN_GROUP):
                _import_entry_point(ep.name, ep.value)
            self.loaded = True
        finally:
            self.loading = False


def _import_entry_point(name: str, value: str) -> None:
    module = value.split(":")[0].strip()
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise PluginError(
            f"the plug-in {name!r} ({PLUGIN_GROUP} entry point {value!r}) cannot be imported: {exc}"
        ) from exc


PLUGINS = _Plugins()


def load_plugins() -> None:
    """Import every plug-in, built-in and installed, once."""
    PLUGINS.load()


class UnknownPluginError(DisputelabError, ValueError):
    """A name no plug-in of that kind was registered under."""


class Registry(Generic[T]):
    """Plug-ins of one kind by name, in registration order."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, T] = {}

    def register(self, name: str, item: T, replace: bool = False) -> T:
        """Add `item` under `name`; registering a taken name is an error unless `replace`."""
        if name in self._items and not replace:
            raise ValueError(f"a {self.kind} named {name!r} is already registered")
        self._items[name] = item
        return item

    def unregister(self, name: str) -> None:
        self._items.pop(name, None)

    def get(self, name: str) -> T:
        load_plugins()
        try:
            return self._items[name]
        except KeyError:
            raise UnknownPluginError(
                f"unknown {self.kind} {name!r}; available: {', '.join(self.names())}"
            ) from None

    def __contains__(self, name: object) -> bool:
        load_plugins()
        return name in self._items

    def names(self) -> tuple[str, ...]:
        load_plugins()
        return tuple(self._items)

    def items(self) -> Iterator[tuple[str, T]]:
        load_plugins()
        return iter(list(self._items.items()))

    def decorator(self, name: str) -> Callable[[T], T]:
        def add(item: T) -> T:
            return self.register(name, item)

        return add
