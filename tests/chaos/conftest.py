"""The chaos suite's summary lines: each test says in one line what it did, and
tests/conftest.py prints those lines in a `chaos` section at the end of the run (from
the report's user properties, which pytest-xdist carries back from its workers)."""

from __future__ import annotations

from collections.abc import Callable

import pytest


@pytest.fixture
def chaos_summary(request: pytest.FixtureRequest) -> Callable[[str], None]:
    def say(line: str) -> None:
        request.node.user_properties.append(("chaos", line))

    return say
