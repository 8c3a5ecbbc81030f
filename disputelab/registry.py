"""Named registries of plug-ins, and the one rule that finds them.

A plug-in is a module: importing it registers what it defines (protocols, agent kinds,
evaluators, presets), each with a decorator or call beside the definition. disputelab's
own plug-ins are the modules of `BUILTIN_PLUGINS`; an installed package adds its own by
naming modules under the entry-point group `disputelab.plugins`:

    [project.entry-points."disputelab.plugins"]
    show-of-hands = "my_package.protocol"

Every registry imports all plug-ins the first time it is read, so a lookup never depends
on import order, and a plug-in found through an entry point is listed, played and
reported exactly as a built-in one. Nor does a listing: it is in plug-in order (those of
`BUILTIN_PLUGINS` as listed, then installed ones by entry-point name), each plug-in's
entries in the order it registers them, whichever module happened to be imported first.
"""

from __future__ import annotations

import importlib
import itertools
import sys
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
    "disputelab.humans.party_kind",
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
    # The plug-in modules in listing order: the built-in ones, then the installed ones.
    modules: tuple[str, ...] = BUILTIN_PLUGINS

    def load(self) -> None:
        # A plug-in module may read a registry while it is imported (a protocol listing
        # agent kinds for its help text): that read must not start the loading again.
        if self.loaded or self.loading:
            return
        self.loading = True
        try:
            installed = sorted(entry_points(group=PLUGIN_GROUP), key=lambda ep: ep.name)
            self.modules = BUILTIN_PLUGINS + tuple(_module_of(ep.value) for ep in installed)
            for module in BUILTIN_PLUGINS:
                importlib.import_module(module)
            for ep in installed:
                _import_entry_point(ep.name, ep.value)
            self.loaded = True
        finally:
            self.loading = False

    def rank(self, module: str) -> int:
        """Where the plug-in that `module` belongs to is listed; after every plug-in for
        code that registers at run time (a test's toy protocol)."""
        for i, plugin in enumerate(self.modules):
            if module == plugin or module.startswith(plugin + "."):
                return i
        return len(self.modules)

    def rank_of_stack(self, stack: tuple[str, ...]) -> int:
        """The rank of the innermost plug-in module of `stack` (see `calling_modules`)."""
        return min((self.rank(m) for m in stack), default=len(self.modules))


def calling_modules() -> tuple[str, ...]:
    """The modules on the call stack, innermost first: the plug-in whose import registers
    something is among them. Kept whole, since an installed plug-in imported before the
    entry points are read is known to be one only later."""
    names: list[str] = []
    frame = sys._getframe(1)
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if name and name not in names:
            names.append(name)
        frame = frame.f_back  # type: ignore[assignment]
    return tuple(names)


def _module_of(value: str) -> str:
    return value.split(":")[0].strip()


def _import_entry_point(name: str, value: str) -> None:
    module = _module_of(value)
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
        # Per name, the plug-in module that registered it and when: the listing order.
        self._origin: dict[str, tuple[tuple[str, ...], int]] = {}
        self._count = itertools.count()
        # The listing, worked out once per change: hot paths (an episode's seats, an
        # evaluator's lookup) list a registry many times per episode, and ranking each
        # name's call stack costs far more than the lookup itself.
        self._listing: tuple[tuple[str, ...], tuple[str, ...]] | None = None

    def register(self, name: str, item: T, replace: bool = False) -> T:
        """Add `item` under `name`; registering a taken name is an error unless `replace`
        (which keeps the name's place in the listing)."""
        if name in self._items and not replace:
            raise ValueError(f"a {self.kind} named {name!r} is already registered")
        self._items[name] = item
        if name not in self._origin:
            self._origin[name] = (calling_modules(), next(self._count))
        self._listing = None
        return item

    def unregister(self, name: str) -> None:
        self._items.pop(name, None)
        self._origin.pop(name, None)
        self._listing = None

    def _ordered(self) -> tuple[str, ...]:
        """The names in plug-in order, then in the order each plug-in registered them;
        worked out again only when a name comes or goes or the plug-ins are read."""
        if self._listing is not None and self._listing[0] is PLUGINS.modules:
            return self._listing[1]

        def place(name: str) -> tuple[int, int]:
            stack, count = self._origin[name]
            return PLUGINS.rank_of_stack(stack), count

        ordered = tuple(sorted(self._items, key=place))
        self._listing = (PLUGINS.modules, ordered)
        return ordered

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
        return self._ordered()

    def items(self) -> Iterator[tuple[str, T]]:
        load_plugins()
        return iter([(name, self._items[name]) for name in self._ordered()])

    def decorator(self, name: str) -> Callable[[T], T]:
        def add(item: T) -> T:
            return self.register(name, item)

        return add
