"""The embedded model end to end. Skipped, with the reason printed, when it is not installed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.base import ChatRequest, Message
from disputelab.llm.local import LocalLlama, find_gguf, local_available
from disputelab.llm.structured import MAX_SCHEMA_STRING, ask_structured

REASON = local_available()
pytestmark = [
    pytest.mark.skipif(REASON is not None, reason=f"embedded model absent: {REASON}"),
    pytest.mark.slow,  # loads the embedded model and decodes on the CPU
]


class Offer(BaseModel):
    utterance: str
    option: str


def test_the_gguf_is_found_without_importing_llm() -> None:
    path = find_gguf()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000


def test_a_schema_constrained_reply_parses() -> None:
    schema = {
        "type": "object",
        "properties": {
            "utterance": {"type": "string"},
            "option": {"type": "string", "enum": ["A", "B", "C"]},
        },
        "required": ["utterance", "option"],
    }
    request = ChatRequest(
        (
            Message("system", "You are a tenant negotiating rent."),
            Message("user", "The landlord proposes option B. Reply."),
        ),
        max_tokens=120,
        schema=schema,
    )
    reply, responses = asyncio.run(ask_structured(LocalLlama(), request, Offer.model_validate))
    assert reply.option in {"A", "B", "C"}
    assert responses[-1].input_tokens and responses[-1].output_tokens


def test_a_real_episode_runs_and_a_rerun_is_free_and_identical(tmp_path: Path) -> None:
    runner = CliRunner()
    args = [
        # A call deadline a loaded 2-core machine meets (three times this): decoding runs
        # at a few tokens a second there.
        "--timeout",
        "900",
        "--store",
        str(tmp_path),
        "run",
        "tenancy",
        "--model",
        "local",
        "--seed",
        "1",
        "--budget",
        "2",
    ]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    report1 = runner.invoke(app, ["--store", str(tmp_path), "report", "last", "--format", "json"])
    second = runner.invoke(app, args)
    assert second.exit_code == 0, second.output
    assert "model use, parties (local): 0 calls" in " ".join(second.output.split())
    report2 = runner.invoke(app, ["--store", str(tmp_path), "report", "last", "--format", "json"])
    turns = [
        [(t["text"], t["action"]) for t in e["turns"]]
        for e in (
            json.loads(report1.output)["episodes"][0],
            json.loads(report2.output)["episodes"][0],
        )
    ]
    assert turns[0] == turns[1] and len(turns[0]) == 2


def test_the_longest_string_bound_allowed_compiles_into_a_grammar() -> None:
    """MAX_SCHEMA_STRING is what llama.cpp can still turn into a grammar: a reply held to
    it comes back as JSON (a bound over about 1,000 characters fails to parse)."""
    schema = {
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": MAX_SCHEMA_STRING}},
        "required": ["text"],
    }
    request = ChatRequest(
        (Message("user", "Describe a fair settlement in one sentence."),),
        max_tokens=24,
        schema=schema,
    )
    reply = asyncio.run(LocalLlama().complete(request))
    assert reply.text.lstrip().startswith("{")


def test_a_string_bound_llama_cpp_cannot_compile_is_refused_before_any_call() -> None:
    schema = {"type": "object", "properties": {"text": {"type": "string", "maxLength": 1500}}}
    request = ChatRequest((Message("user", "Hi"),), schema=schema, schema_name="brief")
    with pytest.raises(ValueError, match=r"brief\.properties\.text: maxLength 1500 is over 800"):
        asyncio.run(ask_structured(LocalLlama(), request, dict))


def _turns(backend: LocalLlama, n: int) -> list[str]:
    """Two seats speaking in turn, each prompt its own brief and the dialogue so far."""
    briefs = {
        "tenant": "You are the tenant. A 12% rent rise is unfair; repairs come first.",
        "landlord": "You are the landlord. Costs rose; the rent rise stands, repairs later.",
    }
    said: list[str] = []
    for i in range(n):
        seat = ("tenant", "landlord")[i % 2]
        request = ChatRequest(
            (
                Message("system", briefs[seat]),
                *(Message("user", line) for line in said),
                Message("user", f"Answer as the {seat}, in one short sentence."),
            ),
            max_tokens=24,
        )
        said.append(f"{seat}: " + asyncio.run(backend.complete(request)).text)
    return said


def test_a_seats_next_prompt_restores_its_cached_prefix_without_changing_replies() -> None:
    before = LocalLlama.reuse.evaluated, LocalLlama.reuse.prompt_tokens
    uncached = _turns(LocalLlama(cache_mb=0, threads=1), 4)
    uncached_read = LocalLlama.reuse.evaluated - before[0]
    given = LocalLlama.reuse.prompt_tokens - before[1]
    middle = LocalLlama.reuse.evaluated
    cached = _turns(LocalLlama(cache_mb=64, threads=1), 4)
    cached_read = LocalLlama.reuse.evaluated - middle
    assert cached == uncached
    # Seats alternate, so without the cache each prompt is read again from its start.
    assert uncached_read > 0.9 * given and cached_read < uncached_read
