"""Names the API re-exports from modules that are slow to import (the experiment runner,
the statistics, SALib): each is imported the first time it is asked for, so that the
command line, which imports the API to start, does not pay for what it does not run."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any


def lazy_attribute(namespace: dict[str, Any], homes: Mapping[str, str], name: str) -> Any:
    """`name` from its module in `homes` (name -> module), kept in `namespace` (a module's
    globals) so that it is looked up once; AttributeError for a name not listed."""
    if name not in homes:
        module = namespace.get("__name__", "module")
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    value = getattr(import_module(homes[name]), name)
    namespace[name] = value
    return value
