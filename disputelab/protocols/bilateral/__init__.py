"""The bilateral protocol (the socially-aware remediator): a buyer and a seller bargain
over one price while a remediator rewrites norm-violating utterances, with in-context
exemplars chosen by value impact (`remediation`).

Importing this package registers the protocol, its bargainer, remediator, moderator and
detector kinds and its evaluator. Its tables are read only when a report is made.

This module is the protocol's face: outside its folder, only the API imports it, for the
remediator's exemplar tools (`disputelab exemplars`). Those play episodes and bring the
statistics, so the remediation functions are imported on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from disputelab.protocols.bilateral import evaluation, presets
from disputelab.protocols.bilateral.agents.exemplars import ExemplarFile, save_exemplars
from disputelab.protocols.bilateral.agents.imported import SOURCES as IMPORT_SOURCES
from disputelab.protocols.bilateral.agents.imported import ImportedPool, import_pool
from disputelab.protocols.bilateral.agents.library import (
    BUILTIN,
    NAME,
    exemplar_dir,
)
from disputelab.protocols.bilateral.agents.library import resolve as resolve_exemplars
from disputelab.protocols.bilateral.protocol import Bilateral, BilateralParams
from disputelab.protocols.bilateral.remediation.simulate import Cast

# isort: split
# A person's kind is listed after the agents' kinds of each seat.
from disputelab.protocols.bilateral.agents import human

__all__ = [
    "BUILTIN",
    "IMPORT_SOURCES",
    "NAME",
    "Bilateral",
    "BilateralParams",
    "Budget",
    "Cast",
    "Comparison",
    "ExemplarFile",
    "ImportedPool",
    "compare",
    "comparison_markdown",
    "evaluation",
    "exemplar_dir",
    "generate_pool",
    "human",
    "import_pool",
    "presets",
    "resolve_exemplars",
    "save_exemplars",
    "select_exemplars",
    "selection_methods",
]

# Name -> (module of the remediation package, name there), imported on first use.
_LAZY = {
    "Budget": ("select", "Budget"),
    "select_exemplars": ("select", "select_exemplars"),
    "generate_pool": ("pool", "generate_pool"),
    "Comparison": ("compare", "Comparison"),
    "compare": ("compare", "compare"),
    "comparison_markdown": ("compare", "comparison_markdown"),
    "selection_methods": ("compare", "methods"),
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _LAZY[name]
    value = getattr(import_module(f"{__name__}.remediation.{module}"), attr)
    globals()[name] = value  # looked up once
    return value


if TYPE_CHECKING:
    from disputelab.protocols.bilateral.remediation.compare import (
        Comparison,
        compare,
        comparison_markdown,
    )
    from disputelab.protocols.bilateral.remediation.compare import methods as selection_methods
    from disputelab.protocols.bilateral.remediation.pool import generate_pool
    from disputelab.protocols.bilateral.remediation.select import Budget, select_exemplars
