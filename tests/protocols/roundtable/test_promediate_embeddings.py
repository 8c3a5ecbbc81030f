"""The promediate preset's embeddings, as ProMediate takes them: asked of the run's
endpoint (its `/embeddings`), never of an in-process model unless that is named; an
endpoint without the route stops the run in one line before anything is stored; and
whichever is used is said at the start and recorded with the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.embedding import embedding_available
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.plan.run import plan_run
from disputelab.store.sqlite import Store

ROOT = Path(__file__).resolve().parents[3]
# Plays the command line in a fresh interpreter, then says whether the sentence model's
# package was ever imported: what loading the in-process model cannot avoid.
PLAY = """
import runpy, sys
sys.argv = ["disputelab", *sys.argv[1:]]
code = 0
try:
    runpy.run_module("disputelab", run_name="__main__")
except SystemExit as exc:
    code = exc.code or 0
loaded = "sentence_transformers" in sys.modules
print("in-process model: " + ("loaded" if loaded else "not loaded"), file=sys.stderr)
sys.exit(code)
"""


def answer(body: dict[str, Any]) -> Scripted:
    reply = fill(requested_schema(body), text="We should talk about the rent.")
    if "signal" in reply:
        reply["signal"] = "continue"
    return Scripted(content=json.dumps(reply))


def run_args(store: Path, url: str, *extra: str) -> list[str]:
    return [
        "--store",
        str(store),
        "run",
        "tenancy",
        "--preset",
        "promediate",
        "--model",
        f"openai:m@{url}",
        "--mediator",
        "none",
        "--budget",
        "1",
        *extra,
    ]


def play(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DISPUTELAB_STORE", None)
    return subprocess.run(
        [sys.executable, "-c", PLAY, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,  # a hang fails the test rather than the suite; no speed is asserted
        check=False,
    )


def stored_config(store: Path) -> dict[str, Any]:
    db = Store(store)
    (run,) = db.runs()
    return db.run_info(str(run["run_id"]))[1]


def test_a_promediate_run_asks_its_endpoint_and_loads_no_in_process_model(
    tmp_path: Path,
) -> None:
    with fake_openai(answer) as server:
        done = play(run_args(tmp_path / "runs", server.url), tmp_path)
        embedded = [text for body in server.embedding_requests for text in body["input"]]
    assert done.returncode == 0, done.stderr
    assert "in-process model: not loaded" in done.stderr
    endpoint = f"openai:m@{server.url}"
    assert f"embeddings: {endpoint}, through its /embeddings endpoint" in done.stderr
    assert len(embedded) > 1 and all(b["model"] == "m" for b in server.embedding_requests)
    assert any("rent" in text for text in embedded)  # the parties' thoughts were ranked
    assert stored_config(tmp_path / "runs")["embeddings_model"] == endpoint


def test_a_rerun_takes_every_embedding_from_the_response_cache(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        args = run_args(tmp_path / "runs", server.url)
        first = CliRunner().invoke(app, args)
        asked = len(server.embedding_requests)
        again = CliRunner().invoke(app, args)
    assert first.exit_code == 0 and again.exit_code == 0, again.output
    assert asked > 0 and len(server.embedding_requests) == asked


def test_an_endpoint_without_embeddings_stops_the_run_in_one_line(tmp_path: Path) -> None:
    with fake_openai(answer, embeddings=False) as server:
        result = CliRunner().invoke(app, run_args(tmp_path / "runs", server.url))
        chats = len(server.requests)
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.output
    assert "serves no embeddings (404" in errors[0]
    assert "--embeddings-model local" in errors[0]
    assert chats == 0  # stopped before the first turn, never falling back to another
    assert Store(tmp_path / "runs").runs() == []  # nothing recorded


def test_rule_parties_rank_lexically_and_name_no_embeddings() -> None:
    plan = plan_run("tenancy", preset="promediate")
    assert plan.embeddings is None
    assert "embeddings_model" not in plan.cast.describe(plan.protocol, plan.params)


def test_embeddings_follow_the_parties_model_and_yield_to_one_named() -> None:
    kw: dict[str, Any] = {"preset": "promediate", "mediator": "none"}
    own = plan_run("tenancy", model="openai:m@http://127.0.0.1:9/v1", **kw)
    assert own.embeddings == "openai:m@http://127.0.0.1:9/v1"
    named = plan_run(
        "tenancy",
        model="openai:m@http://127.0.0.1:9/v1",
        models={"embeddings": "openai:emb@http://127.0.0.1:8/v1"},
        **kw,
    )
    assert named.embeddings == "openai:emb@http://127.0.0.1:8/v1"
    assert "openai:emb@http://127.0.0.1:8/v1" in named.models  # opened and checked
    lexical = plan_run(
        "tenancy", model="openai:m@http://127.0.0.1:9/v1", models={"embeddings": "lexical"}, **kw
    )
    assert lexical.embeddings == "lexical" and "lexical" not in lexical.models


def test_a_spec_records_the_embeddings_and_its_dry_run_says_them(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "name: pm\npreset: promediate\nscenarios: [tenancy]\nmediators: [none]\n"
        "parties: llm\nmodels: {parties: 'openai:m@http://127.0.0.1:9/v1'}\n"
    )
    result = CliRunner().invoke(app, ["experiment", str(spec), "--dry-run"])
    assert result.exit_code == 0, result.output
    line = "embeddings: openai:m@http://127.0.0.1:9/v1, through its /embeddings endpoint"
    assert line in result.stdout
    from disputelab.plan.experiment import plan_experiment

    config = plan_experiment(spec).config
    assert config["models"]["embeddings"] == "openai:m@http://127.0.0.1:9/v1"


@pytest.mark.slow  # loads the sentence-embedding model
@pytest.mark.skipif(embedding_available() is not None, reason="needs the embed extra")
def test_embeddings_local_ranks_with_the_in_process_model(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        args = run_args(tmp_path / "runs", server.url, "--embeddings-model", "local")
        done = play(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "embeddings: all-MiniLM-L6-v2 in process (local)" in done.stderr
    assert "in-process model: loaded" in done.stderr
    assert server.embedding_requests == []
    assert stored_config(tmp_path / "runs")["embeddings_model"] == "local"


def test_rule_as_embeddings_is_refused_in_the_words_of_the_command_line(tmp_path: Path) -> None:
    args = ["--store", str(tmp_path), "run", "tenancy", "--preset", "promediate"]
    args += ["--model", "openai:m@http://127.0.0.1:9/v1", "--embeddings-model", "rule"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "error: --embeddings-model: rule is no embeddings" in result.stderr
