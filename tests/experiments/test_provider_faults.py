"""An LLM experiment against a misbehaving provider loses nothing and hangs nowhere.

A keep-alive HTTP/1.1 server answers one request in five with a fault: 429 with a short
and with an over-long Retry-After, 500, 503, a hang past the timeout, a body cut off
mid-way, a null message, a broken JSON body, or JSON of the wrong shape. Every episode
must end complete, or failed with a reason that names the endpoint; the exit status says
which; and `--resume`, once the provider has recovered, completes the rest without
running any episode twice.
"""

from __future__ import annotations

import json
import random
import sqlite3
import threading
from contextlib import closing
from pathlib import Path
from typing import Any

from click.testing import Result
from typer.testing import CliRunner

from disputelab.cli import app, hoist_global_options
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from tests.helpers import stored_turns

FAULT_RATE = 0.2
CHAT = {"id": "x", "object": "chat.completion", "created": 0, "model": "m"}


def _good(body: dict[str, Any]) -> Scripted:
    schema = requested_schema(body)
    return Scripted(content=json.dumps(fill(schema, text="Could we split the cost?")))


def _null_message() -> bytes:
    choice = {"index": 0, "finish_reason": "stop", "message": None}
    return json.dumps({**CHAT, "choices": [choice]}).encode()


FAULTS = {
    "429 short wait": lambda b: Scripted(status=429, headers={"retry-after": "0.2"}),
    "429 long wait": lambda b: Scripted(status=429, headers={"retry-after": "300"}),
    "500": lambda b: Scripted(status=500),
    "503": lambda b: Scripted(status=503),
    "hang": lambda b: Scripted(content="too late", delay_s=4.0),
    "cut-off body": lambda b: Scripted(content="x" * 200, cut_at=60),
    "null message": lambda b: Scripted(raw=_null_message()),
    "broken json": lambda b: Scripted(raw=b'{"id": "x", "choices": [{"index": 0, "mess'),
    "wrong schema": lambda b: Scripted(content='{"nothing": "useful"}'),
}


class FaultyProvider:
    """Seeded, so the same faults fall on the same requests in every CI run (as far as
    the order of concurrent requests allows)."""

    def __init__(self, seed: int = 7) -> None:
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.on = True
        self.injected: dict[str, int] = {}

    def __call__(self, body: dict[str, Any]) -> Scripted:
        with self.lock:
            draw = self.rng.random()
            kind = self.rng.choice(sorted(FAULTS))
        if not self.on or draw >= FAULT_RATE:
            return _good(body)
        with self.lock:
            self.injected[kind] = self.injected.get(kind, 0) + 1
        return FAULTS[kind](body)


def _experiment(store: Path, spec: Path, *extra: str) -> Result:
    args = ["--store", str(store), "experiment", str(spec), "--concurrency", "8", *extra]
    return CliRunner().invoke(app, hoist_global_options([*args, "--timeout", "1"]))


def _episodes(store: Path) -> list[tuple[str, str, str]]:
    with closing(sqlite3.connect(store / "disputelab.sqlite")) as db:
        rows = db.execute(
            "SELECT episode_id, status, error FROM episodes WHERE run_id = 'faults'"
        ).fetchall()
    return [(str(a), str(b), str(c)) for a, b, c in rows]


def _turn_indices(store: Path) -> dict[str, list[int]]:
    with closing(sqlite3.connect(store / "disputelab.sqlite")) as db:
        out: dict[str, list[int]] = {}
        for eid, idx in stored_turns(db):
            out.setdefault(eid, []).append(idx)
    return out


def test_a_faulty_provider_fails_episodes_with_reasons_and_resume_completes_them(
    tmp_path: Path,
) -> None:
    provider = FaultyProvider()
    store = tmp_path / "runs"
    with fake_openai(provider) as server:
        model = f"openai:m@{server.url}"
        spec = tmp_path / "faults.yaml"
        spec.write_text(
            "name: faults\nscenarios: [tenancy, workplace]\nconditions: [general]\n"
            f"mediators: [none]\nparties: llm\nmodels: {{parties: '{model}'}}\n"
            "replicates: 25\nbudget: 4\n"
        )
        first = _experiment(store, spec)
        after_first = _episodes(store)
        provider.on = False  # the provider recovers
        second = _experiment(store, spec, "--resume")
        third = _experiment(store, spec, "--resume")
    assert len(after_first) == 50
    # Every fault kind was met, and the test server kept connections alive throughout.
    assert set(provider.injected) == set(FAULTS), provider.injected
    failed = [(eid, error) for eid, status, error in after_first if status == "failed"]
    assert not [eid for eid, status, _ in after_first if status == "incomplete"]
    for eid, error in failed:
        assert error and "127.0.0.1" in error, (eid, error)  # names the endpoint
    if failed:
        assert first.exit_code == 1, first.output
        flat = " ".join(first.output.split())
        assert f"{len(failed)} episode(s) failed, by reason:" in flat
    else:
        assert first.exit_code == 0, first.output
    assert "Traceback" not in first.output + second.output + third.output
    assert second.exit_code == 0, second.output
    assert f"{len(failed)} run, {50 - len(failed)} already done" in " ".join(second.output.split())
    final = _episodes(store)
    assert len(final) == len({eid for eid, _, _ in final}) == 50  # no duplicates
    assert all(status not in ("failed", "incomplete") for _, status, _ in final)
    assert all(error == "" for _, _, error in final)  # no complete episode keeps an error
    for eid, indices in _turn_indices(store).items():
        assert indices == list(range(len(indices))), eid
    assert third.exit_code == 0 and "0 run, 50 already done" in " ".join(third.output.split())
