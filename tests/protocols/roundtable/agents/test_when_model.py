"""Model choice per mediator call (ProMediate): the mediator's when-call may go to a model
of its own, the sub-role `mediator.when`, charged under that role. Every test plays real
episodes over HTTP to the scripted server and reads which model each request named."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.experiments.episodes import RunResult, run_single
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import (
    FakeOpenAI,
    Scripted,
    fake_openai,
    fill,
    requested_name,
    requested_schema,
)
from disputelab.plan.cast import Cast
from disputelab.plan.spec import ExperimentSpec
from disputelab.store.sqlite import Store
from tests.helpers import scenario


def answer(body: dict[str, Any]) -> Scripted:
    """A valid reply for any call; the mediator always wants to speak, and rates it 5."""
    schema = requested_schema(body)
    reply = fill(schema, text="Let us keep talking.")
    if requested_name(body) == "party_action":
        reply["signal"] = "continue"
    if requested_name(body) == "when":
        reply["should_speak"], reply["rating"] = True, 5.0
    if requested_name(body) == "ratings":
        factors = ("perception_alignment", "emotional_dynamics", "cognitive_challenges")
        rating = dict.fromkeys((*factors, "communication_breakdowns"), 5.0)
        reply["ratings"] = [rating]
    return Scripted(content=json.dumps(reply), prompt_tokens=11, completion_tokens=7)


def play(
    tmp_path: Path, server: FakeOpenAI, mediator: str, params: dict[str, Any], when: bool = True
) -> tuple[RunResult, Store]:
    models = {"parties": f"openai:party@{server.url}", "mediator": f"openai:say@{server.url}"}
    if when:
        models["mediator.when"] = f"openai:decide@{server.url}"
    cast = Cast({"parties": "llm", "mediator": mediator}, models)
    store = Store(tmp_path)
    hub = ModelHub(store.root / "cache.sqlite")
    result = asyncio.run(run_single(store, scenario(), cast, 3, "roundtable", params, hub=hub))
    return result, store


def models_of(server: FakeOpenAI, *names: str) -> set[str]:
    return {r["model"] for r in server.requests if requested_name(r) in names}


@pytest.mark.parametrize(
    ("mediator", "params", "says"),
    [
        ("generic", {"budget": 6}, ("how",)),
        (
            "social",
            {"budget": 6, "social_when_call": True},
            ("candidates", "ratings", "articulate"),
        ),
    ],
)
def test_the_when_call_goes_to_its_own_model_and_is_charged_to_its_own_role(
    tmp_path: Path, mediator: str, params: dict[str, Any], says: tuple[str, ...]
) -> None:
    with fake_openai(answer) as server:
        result, store = play(tmp_path, server, mediator, params)
    when = [r for r in server.requests if requested_name(r) == "when"]
    rest = [r for r in server.requests if requested_name(r) in says]
    assert when and rest
    assert models_of(server, "when") == {"decide"}
    assert models_of(server, *says) == {"say"}
    assert models_of(server, "party_action") == {"party"}
    usage = result.episode.usage
    assert usage["mediator.when"].calls == len(when)
    assert usage["mediator"].calls == len(rest)
    assert usage["mediator.when"].input_tokens == 11 * len(when)
    stored = {u["role"]: u for u in store.usage(result.episode_id)}
    assert stored["mediator.when"]["model"].startswith("openai:decide@")
    assert stored["mediator.when"]["calls"] == len(when)
    assert stored["mediator"]["model"].startswith("openai:say@")
    assert result.episode.agents["mediator.when_model"].startswith("openai:decide@")


def test_without_a_when_model_the_when_call_uses_the_mediators_and_is_charged_to_it(
    tmp_path: Path,
) -> None:
    with fake_openai(answer) as server:
        result, _ = play(tmp_path, server, "generic", {"budget": 6}, when=False)
    assert models_of(server, "when", "how") == {"say"}
    assert "mediator.when" not in result.episode.usage
    n = len([r for r in server.requests if requested_name(r) in ("when", "how")])
    assert result.episode.usage["mediator"].calls == n
    assert "mediator.when_model" not in result.episode.agents


def test_a_spec_takes_a_when_model_only_for_a_mediator_that_makes_the_call() -> None:
    base = {"name": "x", "scenarios": ["tenancy"], "parties": "llm"}
    models = {"parties": "local", "mediator": "local", "mediator.when": "local"}
    ok = ExperimentSpec.model_validate({**base, "mediators": ["social"], "models": models})
    assert ok.models["mediator.when"] == "local"
    with pytest.raises(ValueError, match=r"mediator\.when: no mediator of this spec"):
        ExperimentSpec.model_validate({**base, "mediators": ["rule"], "models": models})
    with pytest.raises(ValueError, match=r"unknown role parties\.when"):
        ExperimentSpec.model_validate({**base, "models": {"parties.when": "local"}})


def test_run_sends_the_when_call_to_the_when_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with fake_openai(answer) as server:
        result = CliRunner().invoke(
            app,
            [
                "--store",
                str(tmp_path / "runs"),
                "run",
                "tenancy",
                "--mediator",
                "generic",
                "--model",
                f"openai:say@{server.url}",
                "--mediator-when-model",
                f"openai:decide@{server.url}",
                "--budget",
                "4",
            ],
        )
    assert result.exit_code == 0, result.output
    assert models_of(server, "when") == {"decide"} and models_of(server, "how") == {"say"}
    assert "model use, mediator.when (openai:decide@" in result.output


def test_run_refuses_a_when_model_for_a_mediator_without_a_when_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["--store", str(tmp_path / "runs"), "run", "tenancy", "--mediator", "rule"]
    result = CliRunner().invoke(app, [*args, "--mediator-when-model", "local"])
    assert result.exit_code == 2
    assert "--mediator-when-model: the rule mediator makes no when-call" in result.output
    assert "Traceback" not in result.output
