"""An LLM experiment against a provider that fails one call in five, in every way the
suite knows, loses no episode and hangs on none; `--resume` once the provider is well
again ends with the store a run against a well provider leaves.

The provider is a real HTTP server on 127.0.0.1 (disputelab.llm.testing). Whether a call
fails, and how, is drawn from the suite's seed, the request's body and how many times
that body was sent before: the same requests meet the same faults in every run, however
the concurrent calls interleave. Request bodies carry the episode's seed and turn, so no
two episodes send the same body.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from tests.chaos.store_view import finish, launch, read_store

SEED = 20261202
FAULT_RATE = 0.2
REPLICATES = 20
PLANNED = 2 * REPLICATES
HTML = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"

FAULTS: dict[str, Callable[[], Scripted]] = {
    "429 Retry-After 0.2 s": lambda: Scripted(status=429, headers={"retry-after": "0.2"}),
    # Longer than a run waits (60 s): the call fails at once and so does its episode.
    "429 Retry-After 300 s": lambda: Scripted(status=429, headers={"retry-after": "300"}),
    "500": lambda: Scripted(status=500),
    "cut connection": lambda: Scripted(hang_up=True),
    "empty body": lambda: Scripted(raw=b""),
    "HTML body": lambda: Scripted(raw=HTML, content_type="text/html"),
    "null content": lambda: Scripted(content=None),
    "wrong schema": lambda: Scripted(content='{"nothing": "useful"}'),
    "cut at max_tokens": lambda: Scripted(
        content='{"utterance": "We could sp', finish_reason="length"
    ),
}


class FaultyProvider:
    """Answers well, except for the calls its seeded draw fails; `on = False` heals it."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.on = True
        self.lock = threading.Lock()
        self.sent: Counter[str] = Counter()  # times each request body was seen
        self.injected: Counter[str] = Counter()
        self.calls = 0

    def __call__(self, body: dict[str, Any]) -> Scripted:
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with self.lock:
            self.calls += 1
            nth = self.sent[digest]
            self.sent[digest] += 1
            draw = random.Random(f"{self.seed}:{digest}:{nth}")
            kind = draw.choice(sorted(FAULTS)) if draw.random() < FAULT_RATE else None
            if kind is not None and self.on:
                self.injected[kind] += 1
        if kind is None or not self.on:
            schema = requested_schema(body)
            return Scripted(content=json.dumps(fill(schema, text="Could we split the cost?")))
        return FAULTS[kind]()


def _spec(path: Path, url: str) -> Path:
    path.write_text(
        "name: faults\nscenarios: [tenancy, workplace]\nconditions: [general]\n"
        f"mediators: [none]\nparties: llm\nmodels: {{parties: 'openai:m@{url}'}}\n"
        f"replicates: {REPLICATES}\nbudget: 4\nconcurrency: 8\n"
    )
    return path


def _flat(log: Path) -> str:
    return " ".join(log.read_text().split())


@pytest.mark.slow
def test_a_provider_failing_one_call_in_five_loses_nothing_and_resume_completes_it(
    tmp_path: Path, chaos_summary: Callable[[str], None]
) -> None:
    provider = FaultyProvider(SEED)
    faulty, clean = tmp_path / "faulty", tmp_path / "clean"
    logs = [tmp_path / f"run{i}.log" for i in range(3)]
    with fake_openai(provider) as server:
        spec = _spec(tmp_path / "faults.yaml", server.url)
        first = finish(launch(faulty, spec, logs[0]), logs[0])
        after_first = read_store(faulty, "faults")
        calls_first, provider.on = provider.calls, False  # the provider recovers
        resumed = finish(launch(faulty, spec, logs[1], "--resume"), logs[1])
        well = finish(launch(clean, spec, logs[2]), logs[2])
    failed = sorted(e for e, s in after_first.status.items() if s == "failed")
    final, want = read_store(faulty, "faults"), read_store(clean, "faults")
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(provider.injected.items()))
    chaos_summary(
        f"seed {SEED}: {sum(provider.injected.values())} faults in {calls_first} calls "
        f"({kinds}); {len(failed)} of {PLANNED} episodes failed, then "
        f"{len(final.complete & set(failed))} completed on --resume"
    )
    assert set(provider.injected) == set(FAULTS), "a fault kind was never injected"
    text = "".join(log.read_text() for log in logs)
    assert "Traceback" not in text, text[-3000:]
    # After the faulty run: every episode is there, complete or failed with a reason
    # that names the endpoint; none was left half-done.
    assert len(after_first.status) == PLANNED and not after_first.stored_twice
    assert set(after_first.status.values()) <= {"resolved", "impasse", "budget", "failed"}
    assert all("127.0.0.1" in after_first.errors[e] for e in failed), after_first.errors
    assert failed, "no episode failed: the resume below would test nothing"
    assert first == 1 and f"{len(failed)} episode(s) failed, by reason:" in _flat(logs[0])
    # The resume ran exactly the failed ones, and the store now is the well run's.
    assert resumed == 0 and well == 0, _flat(logs[1])[-2000:]
    assert f"{len(failed)} run, {PLANNED - len(failed)} already done, 0 failed" in _flat(logs[1])
    assert final.status == want.status and final.complete == set(want.status)
    assert all(e == "" for e in final.errors.values()), "a complete episode kept its error"
    assert not final.stored_twice and final.duplicate_turns == 0 and not final.bad_turns
    assert final.turns == want.turns
