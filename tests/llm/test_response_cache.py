"""The response cache serves a reply the moment it arrives and writes replies to its file
in groups: within a short delay, before the episode that asked for them is finished,
when the file is opened again, and when the process exits."""

from __future__ import annotations

import asyncio
import gc
import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.experiments.runner import run_experiment
from disputelab.llm import cache as cache_module
from disputelab.llm.base import ChatResponse
from disputelab.llm.cache import CacheError, ResponseCache
from disputelab.llm.models import ModelHub, Profile
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.store.sqlite import Store


def _on_disk(path: Path) -> int:
    """Rows another connection sees: what a killed process would have left."""
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


def _reply(i: int) -> ChatResponse:
    return ChatResponse(f"reply {i}", "m", 10, 2)


def test_replies_are_served_at_once_and_written_in_one_transaction(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    commits: list[str] = []
    cache.db.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)

    async def fifty() -> tuple[list[str], int, int]:
        for i in range(50):
            cache.put(f"k{i}", _reply(i))
        served = [hit.text for i in range(50) if (hit := cache.get(f"k{i}")) is not None]
        before = _on_disk(cache.path)
        await asyncio.sleep(cache_module.WRITE_DELAY_S * 4)
        return served, before, _on_disk(cache.path)

    served, before, after = asyncio.run(fifty())
    assert served == [f"reply {i}" for i in range(50)]
    assert cache.get("k7") == ChatResponse("reply 7", "m", 10, 2, cached=True)
    assert (before, after) == (0, 50)
    assert commits == ["COMMIT"]


def test_a_reply_stored_outside_an_event_loop_is_written_at_once(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.put("k", _reply(1))
    assert _on_disk(cache.path) == 1


def test_replies_left_by_an_event_loop_that_ended_are_written_by_the_next(
    tmp_path: Path,
) -> None:
    """A timer on a loop that has closed never fires; the next loop must not wait on it."""
    cache = ResponseCache(tmp_path / "c.sqlite")

    async def put(key: str, wait: float) -> None:
        cache.put(key, _reply(0))
        await asyncio.sleep(wait)

    asyncio.run(put("first", 0))
    assert _on_disk(cache.path) == 0
    asyncio.run(put("second", cache_module.WRITE_DELAY_S * 4))
    assert _on_disk(cache.path) == 2


def test_opening_the_file_again_in_this_process_reads_what_it_holds(tmp_path: Path) -> None:
    first = ResponseCache(tmp_path / "c.sqlite")

    async def put() -> None:
        first.put("k", _reply(3))

    asyncio.run(put())
    again = ResponseCache(tmp_path / "c.sqlite")
    assert again.get("k") == ChatResponse("reply 3", "m", 10, 2, cached=True)


def test_a_cache_dropped_with_replies_pending_still_writes_them(tmp_path: Path) -> None:
    async def put_and_drop() -> None:
        cache = ResponseCache(tmp_path / "c.sqlite")
        cache.put("k", _reply(5))

    asyncio.run(put_and_drop())  # the loop, and the timer on it, end with the cache's last use
    gc.collect()
    again = ResponseCache(tmp_path / "c.sqlite")
    assert again.get("k") == ChatResponse("reply 5", "m", 10, 2, cached=True)


def test_a_cache_that_cannot_write_at_exit_says_so_and_the_others_still_write(
    tmp_path: Path,
) -> None:
    script = (
        "import asyncio, sys\n"
        "from disputelab.llm import cache as c\n"
        "from disputelab.llm.base import ChatResponse\n"
        "c.WRITE_DELAY_S = 3600\n"
        "broken = c.ResponseCache(sys.argv[1])\n"
        "kept = c.ResponseCache(sys.argv[2])\n"
        "async def put():\n"
        "    for cache in (broken, kept):\n"
        "        cache.put('k', ChatResponse('r', 'm', 1, 1))\n"
        "asyncio.run(put())\n"
        "broken.db.close()\n"
    )
    paths = [str(tmp_path / "broken.sqlite"), str(tmp_path / "kept.sqlite")]
    done = subprocess.run(
        [sys.executable, "-c", script, *paths], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0
    assert f"1 replies were not written to the response cache {paths[0]}" in done.stderr
    assert _on_disk(Path(paths[1])) == 1


def test_a_process_that_exits_writes_the_replies_it_holds(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    script = (
        "import asyncio, sys\n"
        "from disputelab.llm import cache as c\n"
        "from disputelab.llm.base import ChatResponse\n"
        "c.WRITE_DELAY_S = 3600\n"
        "cache = c.ResponseCache(sys.argv[1])\n"
        "async def put():\n"
        "    for i in range(3):\n"
        "        cache.put(f'k{i}', ChatResponse('r', 'm', 1, 1))\n"
        "asyncio.run(put())\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=60)
    assert _on_disk(path) == 3


def _answer(body: dict[str, Any]) -> Scripted:
    return Scripted(content=json.dumps(fill(requested_schema(body), text="Split the cost?")))


def _llm_spec(name: str, replicates: int, budget: int, judge: str = "") -> ExperimentSpec:
    """Unmediated tenancy episodes with LLM parties on the stub endpoint (and, given a
    judge, the judged outcome evaluator, which calls it after the episodes)."""
    return ExperimentSpec(
        name=name,
        scenarios=["tenancy"],
        mediators=["none"],
        parties="llm",
        models={"parties": "stub", **({"judge": judge} if judge else {})},
        evaluators=["outcome-judges"] if judge else [],
        replicates=replicates,
        params={"budget": budget},
    )


def test_a_finished_episodes_replies_are_on_disk_before_the_episode_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the timer out of the way, and one episode at a time, every reply asked for so
    far is on disk when an episode is reported done (it has been committed by then)."""
    monkeypatch.setattr(cache_module, "WRITE_DELAY_S", 3600.0)
    spec = _llm_spec("cached", replicates=3, budget=3)
    store = Store(tmp_path / "runs")
    cache = tmp_path / "cache.sqlite"
    seen: list[tuple[int, int]] = []  # (replies on disk, calls made) at each episode's end
    with fake_openai(_answer) as server:
        hub = ModelHub(cache, {"stub": Profile(model="m", base_url=server.url)})

        def progress(event: str, ep: object, error: str | None) -> None:
            if event == "done":
                seen.append((_on_disk(cache), hub.ledger.calls))

        async def run() -> int:
            summary = await run_experiment(
                store, plan_experiment(spec, base=tmp_path), hub, concurrency=1, progress=progress
            )
            await hub.aclose()
            return summary.done

        try:
            done = asyncio.run(run())
        finally:
            store.close()
    assert done == 3
    assert seen == [(3, 3), (6, 6), (9, 9)]


def test_a_cache_file_that_is_not_a_database_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    path.write_bytes(b"not a database, " * 64)
    with pytest.raises(CacheError, match=r"cannot be used .*move it aside or delete it"):
        ResponseCache(path)


@pytest.mark.parametrize(
    ("column", "value"),
    [("text", b"\xff\xfe\x00"), ("input_tokens", "ten"), ("output_tokens", 1.5)],
)
def test_a_damaged_cached_reply_is_refused_with_what_to_do(
    tmp_path: Path, column: str, value: object
) -> None:
    # A reply whose text is bytes (or whose counts are not numbers) was never a reply:
    # served, it would break the run far from here, in a traceback.
    path = tmp_path / "cache.sqlite"
    cache = ResponseCache(path)
    cache.put("k", _reply(1))
    cache.close()
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE responses SET {column} = ?", (value,))
    cache = ResponseCache(path)
    try:
        with pytest.raises(CacheError, match=r"cached reply is damaged.*delete the cache file"):
            cache.get("k")
    finally:
        cache.close()


def test_a_run_with_a_model_and_a_broken_cache_fails_before_anything_is_recorded(
    tmp_path: Path,
) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "cache.sqlite").write_bytes(b"not a database, " * 64)
    args = ["--store", str(runs), "run", "tenancy", "--model", "openai:m@http://127.0.0.1:9/v1"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "the response cache" in result.output and "Traceback" not in result.output
    store = Store(runs, writable=False)
    try:
        assert store.runs() == []
    finally:
        store.close()


def test_a_judges_replies_are_on_disk_when_the_experiment_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge scores after the last episode is committed: only the write at the run's
    end can have put its replies there, the hub still open."""
    monkeypatch.setattr(cache_module, "WRITE_DELAY_S", 3600.0)
    spec = _llm_spec("judged", replicates=2, budget=2, judge="stub")
    store = Store(tmp_path / "runs")
    cache = tmp_path / "cache.sqlite"
    with fake_openai(_answer) as server:
        hub = ModelHub(cache, {"stub": Profile(model="m", base_url=server.url)})

        async def run() -> int:
            await run_experiment(store, plan_experiment(spec, base=tmp_path), hub)
            written = _on_disk(cache)
            await hub.aclose()
            return written

        try:
            written = asyncio.run(run())
        finally:
            store.close()
    assert hub.ledger.roles["judge"].calls > 0
    assert written == hub.ledger.calls
