"""Episodes played by Ray actors land in the driver's store as local ones do. The test
starts a local Ray instance of its own; it is skipped only where Ray is not installed
(`pip install 'disputelab[ray]'`; `.ci/run` installs it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from disputelab.experiments.on_ray import RayExecutor
from disputelab.llm.models import ModelHub, Profile
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.store.sqlite import Store
from tests.experiments.test_executors import RULE_GRID, _llm_spec, _run, _stored
from tests.helpers import stored_turns

ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'disputelab[ray]'")
pytestmark = pytest.mark.slow  # starts a local Ray cluster


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def test_a_rule_grid_on_ray_stores_what_the_local_runner_does(tmp_path: Path) -> None:
    local = _run(tmp_path / "local", RULE_GRID, None)
    on_ray = _run(tmp_path / "ray", RULE_GRID, RayExecutor(2))
    assert local.done == on_ray.done == 12 and on_ray.failed == 0
    assert _stored(tmp_path / "ray", "grid") == _stored(tmp_path / "local", "grid")


def _answer(body: dict[str, Any]) -> Scripted:
    schema = requested_schema(body)
    return Scripted(content=json.dumps(fill(schema, text="Half the deposit back?")))


def test_llm_episodes_on_ray_are_counted_and_cached(tmp_path: Path) -> None:
    with fake_openai(_answer) as server:
        profiles = {"stub": Profile(model="m", base_url=server.url)}
        first = ModelHub(tmp_path / "cache.sqlite", profiles, concurrency=4)
        summary = _run(tmp_path, _llm_spec("first"), RayExecutor(2), first)
        again = ModelHub(tmp_path / "cache.sqlite", profiles, concurrency=4)
        _run(tmp_path, _llm_spec("again"), RayExecutor(2), again)
    retried = first.ledger.roles["parties"].retries  # a dropped keep-alive, say
    assert summary.done == 4 and first.ledger.calls == 12
    assert server.calls == 12 + retried
    assert again.ledger.calls == 0
    store = Store(tmp_path / "runs", writable=False)
    assert len(stored_turns(store.db)) == 24
