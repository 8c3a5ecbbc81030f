"""Fixtures several test folders share."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from disputelab.agents.registry import AGENT_KINDS
from disputelab.evaluation.registry import EVALUATORS
from disputelab.protocols.base import PROTOCOLS

PLUGIN = Path(__file__).resolve().parent / "plugins" / "show_of_hands"


@pytest.fixture
def toy() -> Iterator[ModuleType]:
    """The plug-in's module, imported in this process (which registers it), and its
    registrations undone afterwards so that no other test meets them."""
    sys.path.insert(0, str(PLUGIN))
    try:
        module = importlib.import_module("show_of_hands")
        if "show-of-hands" not in PROTOCOLS:
            module = importlib.reload(module)  # registered again after an earlier test
        yield module
    finally:
        PROTOCOLS.unregister("show-of-hands")
        AGENT_KINDS.unregister("toy-chair/counter")
        EVALUATORS.unregister("toy-hands")
        sys.path.remove(str(PLUGIN))
