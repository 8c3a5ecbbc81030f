"""Fixtures several test folders share."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

from disputelab.agents.registry import AGENT_KINDS
from disputelab.evaluation.registry import EVALUATORS
from disputelab.protocols.base import PROTOCOLS
from tests.data_location import ENABLE, SKIP_PREFIX, dataset_folder, skip_reason
from tests.live_browser import NoBrowser, headless_chromium

PLUGIN = Path(__file__).resolve().parent / "plugins" / "show_of_hands"

# The suite must pass on a shared machine at load 10: Hypothesis is told to judge its
# examples, never the time they take (a deadline, or "too slow" to generate).
settings.register_profile(
    "shared-machine", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("shared-machine")


@pytest.fixture(autouse=True)
def _own_default_store(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command given no --store writes to a store of this test's own, never to
    ./disputelab-runs in the clone, which parallel workers (pytest -n 2) would share.
    A test of the default itself removes the variable."""
    monkeypatch.setenv("DISPUTELAB_STORE", str(tmp_path_factory.mktemp("default-store")))


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


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """One headless Chromium for the session (tests/live_browser.py): the report's, the
    annotators' and the hosted table's browser tests share it, and skip, saying what to
    install, where it is missing."""
    try:
        with headless_chromium() as driver:
            yield driver
    except NoBrowser as exc:
        pytest.skip(f"{exc}; browser tests skipped")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip a test marked `data(NAME, ...)` whose datasets are not found, saying how to
    fetch them (see tests/data_location.py)."""
    for item in items:
        names = [n for mark in item.iter_markers("data") for n in mark.args]
        missing = [n for n in dict.fromkeys(names) if dataset_folder(n) is None]
        if missing:
            item.add_marker(pytest.mark.skip(reason=skip_reason(missing)))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    _summary(terminalreporter, "chaos")
    _summary(terminalreporter, "fuzz")
    _data_skips_summary(terminalreporter)


def _summary(terminalreporter: pytest.TerminalReporter, section: str) -> None:
    """The lines tests recorded under `section` in their user properties, one per test,
    passed or not: the chaos suite's (tests/chaos/conftest.py) and the fuzz test's count
    of cases per input kind (tests/test_fuzz_inputs.py)."""
    lines = [
        (report.nodeid, value)
        for reports in terminalreporter.stats.values()
        for report in reports
        if getattr(report, "when", None) == "call"
        for key, value in getattr(report, "user_properties", ())
        if key == section
    ]
    if not lines:
        return
    terminalreporter.section(section)
    for nodeid, line in sorted(lines):
        terminalreporter.write_line(f"{nodeid.rsplit('::', 1)[-1]}: {line}")


def _data_skips_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Name the data tests that were skipped, and the command that runs them."""
    skipped = [
        r.nodeid
        for r in terminalreporter.stats.get("skipped", [])
        if SKIP_PREFIX in str(getattr(r, "longrepr", ""))
    ]
    if not skipped:
        return
    terminalreporter.section("tests skipped for want of the public datasets")
    for nodeid in skipped:
        terminalreporter.write_line(nodeid)
    terminalreporter.write_line(
        f"{len(skipped)} data test(s) skipped; to run them: {ENABLE}, then "
        "`python -m pytest -m data`"
    )
