"""The registries list their plug-ins in one order, whatever was imported first: the
order of `BUILTIN_PLUGINS` (then installed plug-ins by entry-point name), each plug-in's
entries as it registers them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from disputelab.registry import BUILTIN_PLUGINS, PLUGINS, Registry

ROOT = Path(__file__).resolve().parents[1]
LISTING = """
{first}
from disputelab.agents.registry import AGENT_KINDS
from disputelab.evaluation.registry import EVALUATORS
from disputelab.protocols.base import PROTOCOLS
from disputelab.protocols.presets import PRESETS
for registry in (PROTOCOLS, AGENT_KINDS, EVALUATORS, PRESETS):
    print(",".join(registry.names()))
from disputelab.cli import app
app(["protocols", "list"], standalone_mode=False)
"""


def _listing(first: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-c", LISTING.format(first=first)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
        check=True,
    )
    return done.stdout


@pytest.mark.parametrize(
    "first",
    [
        "import disputelab.protocols.staged",  # a protocol's package before the others
        "import disputelab.protocols.settlement.agents.memory",  # what `memory` reaches
        "import disputelab.api.exemplars",  # the bilateral face, through the API
        "import disputelab.evaluation.evaluators",
    ],
)
def test_what_is_imported_first_does_not_change_any_listing(first: str) -> None:
    assert _listing(first) == _listing("")


def test_protocols_are_listed_in_the_order_of_the_builtin_plugins() -> None:
    from disputelab.protocols.base import PROTOCOLS

    folders = [
        m.rsplit(".", 1)[1] for m in BUILTIN_PLUGINS if m.startswith("disputelab.protocols.")
    ]
    assert [n for n in PROTOCOLS.names() if n in folders] == folders


def test_an_entry_registered_at_run_time_comes_after_every_plugin() -> None:
    registry: Registry[int] = Registry("number")
    registry.register("late", 1)
    assert PLUGINS.rank_of_stack(registry._origin["late"][0]) == len(PLUGINS.modules)
    registry.register("later", 2)
    registry.register("late", 3, replace=True)  # keeps its place
    assert registry.names() == ("late", "later")
