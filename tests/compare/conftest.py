from __future__ import annotations

from collections.abc import Iterator

import pytest

from disputelab.llm.models import ModelHub
from tests.compare.stubs import three_models


@pytest.fixture
def hub() -> Iterator[ModelHub]:
    with three_models() as models:
        yield models
