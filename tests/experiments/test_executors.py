"""Episodes played in worker processes land in the driver's store exactly as episodes
played in the runner's own loop: the same transcripts, scores, usage and failures."""

from __future__ import annotations

import asyncio
import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from disputelab.experiments.executors import (
    ProcessExecutor,
    RelayStore,
    _context,
    merge_usage,
    worker_failure,
)
from disputelab.experiments.runner import Summary, run_experiment
from disputelab.llm.models import ModelHub, Profile
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.llm.wrappers import Ledger, RoleUsage
from disputelab.plan.experiment import plan_experiment
from disputelab.plan.spec import ExperimentSpec
from disputelab.store.sqlite import Store

RULE_GRID = ExperimentSpec(
    name="grid",
    scenarios=["tenancy", "workplace"],
    mediators=["rule"],
    replicates=3,
    params={"budget": 20},
)


def _run(
    root: Path, spec: ExperimentSpec, executor: ProcessExecutor | None, hub: ModelHub | None = None
) -> Summary:
    store = Store(root / "runs")
    try:
        return asyncio.run(
            run_experiment(
                store, plan_experiment(spec, base=root), hub or ModelHub(None), executor=executor
            )
        )
    finally:
        store.close()


def _stored(root: Path, run_id: str) -> dict[str, Any]:
    """Each episode's transcript (without wall-clock latencies), outcome and scores."""
    store = Store(root / "runs", writable=False)
    out = {}
    for eid in store.episode_ids(run_id):
        rec = store.load_episode(eid)
        turns = [
            {k: v for k, v in t.to_dict().items() if k != "latency_s"} for t in rec.episode.turns
        ]
        scores = sorted((s.metric, s.value) for s in store.scores(eid))
        outcome = rec.episode.outcome.to_dict() if rec.episode.outcome else None
        out[eid] = (turns, outcome, scores)
    store.close()
    return out


def test_a_rule_grid_in_two_worker_processes_stores_what_the_local_runner_does(
    tmp_path: Path,
) -> None:
    local = _run(tmp_path / "local", RULE_GRID, None)
    spread = _run(tmp_path / "spread", RULE_GRID, ProcessExecutor(2))
    assert local.done == spread.done == 12 and spread.failed == 0
    assert _stored(tmp_path / "spread", "grid") == _stored(tmp_path / "local", "grid")


def _answer(body: dict[str, Any]) -> Scripted:
    schema = requested_schema(body)
    return Scripted(content=json.dumps(fill(schema, text="Shall we share the repairs?")))


def _llm_spec(name: str) -> ExperimentSpec:
    return ExperimentSpec(
        name=name,
        scenarios=["tenancy"],
        mediators=["none"],
        parties="llm",
        models={"parties": "stub"},
        replicates=4,
        params={"budget": 3},
    )


def test_worker_calls_reach_the_ledger_and_the_shared_cache(tmp_path: Path) -> None:
    with fake_openai(_answer) as server:
        profiles = {"stub": Profile(model="m", base_url=server.url)}
        cache = tmp_path / "cache.sqlite"
        first = ModelHub(cache, profiles, concurrency=4)
        done = _run(tmp_path, _llm_spec("first"), ProcessExecutor(2), first)
        assert done.done == 4 and done.failed == 0
        retried = first.ledger.roles["parties"].retries  # a dropped keep-alive, say
        assert first.ledger.calls == 12  # 4 episodes x 3 party turns
        assert server.calls == 12 + retried
        again = ModelHub(cache, profiles, concurrency=4)
        _run(tmp_path, _llm_spec("again"), ProcessExecutor(2), again)
    assert server.calls == 12 + retried  # the re-run's replies all came from the cache
    assert again.ledger.calls == 0 and again.ledger.roles["parties"].cached == 12
    store = Store(tmp_path / "runs", writable=False)
    usage = store.db.execute("SELECT SUM(calls) FROM usage").fetchone()[0]
    assert usage == 12


def test_workers_take_the_drivers_environment_as_it_is_when_they_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Workers come from a server process forked once; the API key they send is still
    the one set when the run starts, not the one the server saw."""
    with fake_openai(_answer) as server:
        profiles = {"stub": Profile(model="m", base_url=server.url, api_key_env="STUB_KEY")}
        for key in ("first-key", "second-key"):
            monkeypatch.setenv("STUB_KEY", key)
            hub = ModelHub(None, profiles, concurrency=4)
            assert _run(tmp_path, _llm_spec(key), ProcessExecutor(2), hub).done == 4
        sent = [h.get("Authorization") or h.get("authorization") for h in server.headers]
    assert sent == ["Bearer first-key"] * 12 + ["Bearer second-key"] * 12


def test_workers_start_afresh_where_the_working_directory_shadows_a_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forkserver imports from its working directory before it takes the driver's
    path: with another disputelab there, workers would run that code."""
    assert _context().get_start_method() in ("forkserver", "spawn")
    (tmp_path / "disputelab").mkdir()
    (tmp_path / "disputelab" / "__init__.py").write_text("raise SystemExit('not ours')\n")
    monkeypatch.chdir(tmp_path)
    assert _context().get_start_method() == "spawn"
    executor = ProcessExecutor(1)
    assert _run(tmp_path / "elsewhere", RULE_GRID, executor).done == 12


def test_workers_report_their_cpu_and_peak_memory_when_they_stop(tmp_path: Path) -> None:
    executor = ProcessExecutor(2)
    assert _run(tmp_path, RULE_GRID, executor).done == 12
    assert executor.worker_cpu_s > 0
    assert len(executor.worker_peak_rss_mb) == 2
    assert all(10 < mb < 4096 for mb in executor.worker_peak_rss_mb)


def test_an_episode_that_fails_in_a_worker_is_recorded_under_its_own_error(
    tmp_path: Path,
) -> None:
    with fake_openai(lambda body: Scripted(status=400)) as server:
        hub = ModelHub(None, {"stub": Profile(model="m", base_url=server.url)}, concurrency=2)
        summary = _run(tmp_path, _llm_spec("broken"), ProcessExecutor(2), hub)
    assert summary.failed == 4 and summary.done == 0
    assert all(reason.startswith("ModelError: ") for reason in summary.reasons)
    store = Store(tmp_path / "runs", writable=False)
    errors = [r[0] for r in store.db.execute("SELECT error FROM episodes")]
    assert len(errors) == 4 and all("bad request (400)" in e for e in errors)


def _relay_and_what_it_sends() -> tuple[RelayStore, list[Any]]:
    """A relay for task 7 whose queue keeps what is put on it."""
    sent: list[Any] = []

    class Queue:
        def put(self, item: Any) -> None:
            sent.append(item)

    return RelayStore(Queue(), 7, Path("/store")), sent


def test_a_relay_forwards_only_the_writes_an_episode_makes() -> None:
    relay, sent = _relay_and_what_it_sends()
    relay.append_turns("e", [])
    assert sent[0][:2] == (7, "store") and relay.root == Path("/store")
    with pytest.raises(AttributeError, match="cannot load_episode"):
        relay.load_episode("e")


def test_a_relays_batch_travels_as_one_message_and_nothing_of_a_failed_one() -> None:
    relay, sent = _relay_and_what_it_sends()
    turns: list[Any] = ["t0"]
    with relay.batch():
        relay.append_turns("e", turns)
        turns.clear()  # the caller reuses its list: what was sent is what it held then
        with relay.batch():  # nested: part of the outer batch
            relay.finish_episode("e", "end")
    assert len(sent) == 1
    assert [pickle.loads(c) for c in sent[0][2]] == [
        ("append_turns", ("e", ["t0"]), {}),
        ("finish_episode", ("e", "end"), {}),
    ]
    with pytest.raises(RuntimeError), relay.batch():
        relay.append_turns("e", ["t1"])
        raise RuntimeError("the episode failed mid-batch")
    assert len(sent) == 1


def test_worker_usage_adds_up_and_unknown_cost_stays_unknown() -> None:
    ledger = Ledger()
    merge_usage(ledger, {"parties": RoleUsage("m", calls=2, input_tokens=10, cost_usd=0.5)})
    merge_usage(ledger, {"parties": RoleUsage("m", calls=3, input_tokens=5, cost_usd=None)})
    u = ledger.roles["parties"]
    assert (u.calls, u.input_tokens, u.cost_usd) == (5, 15, None)


def test_each_models_part_of_a_roles_usage_reaches_the_driver() -> None:
    ledger = Ledger()
    merge_usage(
        ledger, {"parties": RoleUsage("a", calls=2), ("parties", "a"): RoleUsage("a", calls=2)}
    )
    merge_usage(
        ledger, {"parties": RoleUsage("b", calls=3), ("parties", "b"): RoleUsage("b", calls=3)}
    )
    assert ledger.roles["parties"].calls == 5
    assert [(u.model, u.calls) for u in ledger.models_of("parties")] == [("a", 2), ("b", 3)]


def test_a_worker_failure_keeps_the_name_it_had() -> None:
    exc = worker_failure("ModelError", "m: bad request (400)")
    assert type(exc).__name__ == "ModelError" and str(exc) == "m: bad request (400)"


def _cli(store: Path, *args: str) -> Any:
    from typer.testing import CliRunner

    from disputelab.cli import app

    return CliRunner().invoke(app, ["--store", str(store), *args])


def test_the_experiment_command_runs_a_grid_in_worker_processes(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: w\nscenarios: [tenancy]\nmediators: [rule]\nreplicates: 2\nbudget: 12\n")
    result = _cli(tmp_path / "runs", "experiment", str(spec), "--executor", "processes")
    assert result.exit_code == 0, result.output
    assert "4 episodes planned, 4 run" in " ".join(result.output.split())
    again = _cli(tmp_path / "runs", "experiment", str(spec), "--resume", "--executor", "processes")
    assert "0 run, 4 already done" in " ".join(again.output.split())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--executor", "gpu"], "--executor takes local, processes or ray, not 'gpu'"),
        (["--workers", "2"], "--workers applies to --executor processes or ray"),
        (["--address", "ray://h:1"], "--address names a Ray cluster; use it with --executor ray"),
    ],
)
def test_executor_options_that_do_not_fit_are_one_line_and_exit_2(
    tmp_path: Path, args: list[str], message: str
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: w\nscenarios: [tenancy]\nreplicates: 1\n")
    result = _cli(tmp_path / "runs", "experiment", str(spec), *args)
    assert result.exit_code == 2 and message in result.output


def test_ray_that_is_not_installed_is_said_before_anything_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if the ray extra were absent (CI installs it): a setup error, not every
    # episode failing under it and a partial experiment left in the store.
    import importlib.util

    found = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "ray" else found(name, *a)
    )
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: w\nscenarios: [tenancy]\nreplicates: 1\n")
    result = _cli(tmp_path / "runs", "experiment", str(spec), "--executor", "ray")
    assert result.exit_code == 2
    assert "--executor ray needs Ray: pip install 'disputelab[ray]'" in result.output
    assert not (tmp_path / "runs").exists()


def test_a_ray_address_where_nothing_answers_is_said_before_anything_is_recorded(
    tmp_path: Path,
) -> None:
    import socket

    pytest.importorskip("ray", reason="without Ray, --executor ray says so first")
    with socket.socket() as s:  # a port of this host that nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: w\nscenarios: [tenancy]\nreplicates: 1\n")
    address = f"127.0.0.1:{closed}"
    result = _cli(
        tmp_path / "runs", "experiment", str(spec), "--executor", "ray", "--address", address
    )
    assert result.exit_code == 2, result.output
    assert f"--address {address}: no Ray cluster answers there" in result.output
    assert not (tmp_path / "runs").exists()


def test_episodes_of_a_worker_that_dies_fail_with_a_reason_instead_of_hanging(
    tmp_path: Path,
) -> None:
    def slow(body: dict[str, Any]) -> Scripted:
        reply = _answer(body)
        reply.delay_s = 30.0  # long enough that the worker is killed mid-call
        return reply

    executor = ProcessExecutor(1)
    with fake_openai(slow) as server:
        hub = ModelHub(None, {"stub": Profile(model="m", base_url=server.url)}, concurrency=2)

        async def kill_when_called() -> None:
            while not server.calls:
                await asyncio.sleep(0.1)
            executor._procs[0].kill()

        async def go() -> Summary:
            store = Store(tmp_path / "runs")
            killer = asyncio.ensure_future(kill_when_called())
            try:
                return await run_experiment(
                    store, plan_experiment(_llm_spec("dies"), base=tmp_path), hub, executor=executor
                )
            finally:
                killer.cancel()
                store.close()

        summary = asyncio.run(go())
    assert summary.done == 0 and summary.failed == 4
    assert any("worker process" in reason and "exited" in reason for reason in summary.reasons)


def test_processes_opening_one_new_cache_at_once_all_get_it(tmp_path: Path) -> None:
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    with ctx.Pool(4) as pool:
        sizes = pool.map(_open_cache, [tmp_path / "cache.sqlite"] * 8)
    assert sizes == [0] * 8


def _open_cache(path: Path) -> int:
    from disputelab.llm.cache import ResponseCache

    return len(ResponseCache(path))
