"""LLM, hybrid and mediator agents end to end over real HTTP to a local scripted server."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.episode import Status
from disputelab.experiments.episodes import run_single
from disputelab.llm.models import ModelHub
from disputelab.llm.testing import FakeOpenAI, Scripted, fake_openai, fill, requested_schema
from disputelab.plan.cast import Cast
from disputelab.store.sqlite import Store
from tests.helpers import scenario

SAY = "I hear you. Could we look at the repairs first?"


def answer(body: dict[str, Any]) -> Scripted:
    """Play any role: fill the requested schema with valid values."""
    schema = requested_schema(body)
    return Scripted(
        content=json.dumps(fill(schema, text=SAY)), prompt_tokens=300, completion_tokens=40
    )


def _run(store: Store, server: FakeOpenAI, **agents: str) -> Any:
    model = f"openai:test-model@{server.url}"
    kinds = {"parties": "rule", "mediator": "none", **agents}
    cast = Cast(kinds, {"parties": model, "mediator": model})
    hub = ModelHub(store.root / "cache.sqlite")
    return asyncio.run(
        run_single(store, scenario("tenancy"), cast, 3, "roundtable", {"budget": 6}, hub=hub)
    )


def _by_schema(server: FakeOpenAI, name: str) -> list[dict[str, Any]]:
    return [
        r
        for r in server.requests
        if (r.get("response_format") or {}).get("json_schema", {}).get("name") == name
    ]


def test_llm_parties_take_typed_turns_and_usage_is_recorded(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        store = Store(tmp_path)
        result = _run(store, server, parties="llm", mediator="generic")
    ep = result.episode
    assert ep.outcome.status is Status.BUDGET and ep.party_turns == 6
    first = ep.turns[0]
    assert first.text == SAY and set(first.action.stances) == {
        "repairs",
        "arrears",
        "rent",
        "lease",
    }
    # The unmediated twin asked first; the mediated arm's identical opening turn (same
    # prompt, same seed) then comes from the cache, which is what "matched" should mean.
    base_first = result.baseline.turns[0]
    assert base_first.usage.calls == 1 and base_first.usage.input_tokens == 300
    assert first.usage.calls == 0 and first.text == base_first.text
    assert ep.intervention_positions(), "the scripted generic mediator always speaks"
    usage = {u["role"]: u for u in store.usage(result.episode_id)}
    assert 1 <= usage["parties"]["calls"] <= 6 and usage["mediator"]["calls"] >= 2
    assert usage["parties"]["cost_usd"] is None  # no prices given: unknown, not $0
    # LLM parties have no hidden state: oracle metrics are NaN with a reason, not 0.
    assert not result.scores["final_consensus"].defined


def test_mediators_never_see_private_briefs(tmp_path: Path) -> None:
    s = scenario("tenancy")
    with fake_openai(answer) as server:
        _run(Store(tmp_path), server, parties="llm", mediator="social")
        mediator_prompts = json.dumps(
            [_by_schema(server, n) for n in ("candidates", "ratings", "articulate")]
        )
        party_prompts = _by_schema(server, "party_action")
    assert _by_schema(server, "ratings"), "the social mediator rated its candidates"
    for p in s.parties:
        for secret in (p.objective, p.private_notes, p.fallback.description):
            assert secret not in mediator_prompts
    tenant_prompt = party_prompts[0]["messages"][0]["content"]
    assert s.party("tenant").private_notes in tenant_prompt
    assert s.party("landlord").private_notes not in tenant_prompt


def test_the_social_mediator_rates_on_four_factors_before_speaking(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        result = _run(Store(tmp_path), server, parties="llm", mediator="social")
    (first, *_) = [t for t in result.episode.turns if t.role == "mediator"]
    for factor in (
        "perception_alignment",
        "emotional_dynamics",
        "cognitive_challenges",
        "communication_breakdowns",
    ):
        assert factor in first.intervention.thought
    # It waits until every party has spoken since its last intervention.
    positions = result.episode.intervention_positions()
    assert all(b - a >= 2 for a, b in itertools.pairwise(positions))


def test_hybrid_parties_keep_the_rule_policys_moves_and_the_oracle(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        result = _run(Store(tmp_path), server, parties="hybrid", mediator="rule")
    ep = result.episode
    assert ep.turns[0].text == SAY
    assert "target" in ep.turns[0].action.thought  # the rule policy's own reasoning
    assert result.scores["final_consensus"].defined
    assert result.scores["consensus_gain"].defined


def test_a_rerun_with_the_same_seed_is_served_from_the_cache(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        store = Store(tmp_path)
        first = _run(store, server, parties="llm", mediator="social")
        calls_after_first = server.calls
        second = _run(store, server, parties="llm", mediator="social")
    assert server.calls == calls_after_first
    assert second.hub.ledger.calls == 0
    texts = [[t.text for t in r.episode.turns] for r in (first, second)]
    assert texts[0] == texts[1]


def test_an_unusable_model_reply_fails_the_episode_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with fake_openai(lambda body: Scripted(content="I refuse to answer in JSON.")) as server:
        result = CliRunner().invoke(
            app,
            [
                "--store",
                "runs",
                "run",
                "tenancy",
                "--model",
                f"openai:m@{server.url}",
                "--budget",
                "2",
            ],
        )
    assert result.exit_code == 2
    assert "did not fit the expected structure after 3 attempts" in result.output
    store = Store(tmp_path / "runs")
    (eid,) = store.episode_ids(store.resolve_run("last"))
    assert store.load_episode(eid).status is Status.FAILED


def test_an_agent_that_cannot_be_seated_leaves_a_failed_episode_not_an_empty_run(
    tmp_path: Path,
) -> None:
    """Model names are checked before a command runs anything; a library caller can
    still pass one the hub refuses while seating, after the run is recorded."""
    store = Store(tmp_path / "runs")
    cast = Cast({"parties": "llm"}, {"parties": "no-such-profile"})
    with pytest.raises(ValueError, match="unknown model 'no-such-profile'"):
        asyncio.run(run_single(store, scenario(), cast, 1, "roundtable", {"budget": 2}))
    (run,) = store.runs()
    assert (run["status"], run["failed"], run["complete"]) == ("failed", 1, 0)
    (eid,) = store.episode_ids(run["run_id"])
    record = store.load_episode(eid)
    assert record.status is Status.FAILED and "no-such-profile" in (record.error or "")


def test_the_api_key_never_reaches_the_store_logs_or_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    canary = "sk-canary-7f3a9c1e5b2d4f60-DO-NOT-LEAK"
    monkeypatch.setenv("CANARY_KEY", canary)
    monkeypatch.chdir(tmp_path)
    with fake_openai(answer) as server:
        (tmp_path / "disputelab.toml").write_text(
            "[models.canary]\n"
            'model = "test-model"\n'
            f'base_url = "{server.url}"\n'
            'api_key_env = "CANARY_KEY"\n'
            "input_price_per_m = 1.0\n"
            "output_price_per_m = 2.0\n"
        )
        runner = CliRunner()
        outputs = [
            runner.invoke(
                app,
                [
                    "--store",
                    "runs",
                    "run",
                    "tenancy",
                    "--model",
                    "canary",
                    "--mediator",
                    "social",
                    "--budget",
                    "4",
                ],
            )
        ]
        assert outputs[0].exit_code == 0, outputs[0].output
        for fmt in ("md", "json", "csv"):
            outputs.append(
                runner.invoke(app, ["--store", "runs", "report", "last", "--format", fmt])
            )
        sent = [h.get("Authorization") or h.get("authorization") for h in server.headers]
    assert all(s == f"Bearer {canary}" for s in sent), "the key is used to authenticate"
    assert "cost $" in outputs[0].output  # priced profile: cost is known
    for out in outputs:
        assert canary not in out.output
    captured = capfd.readouterr()
    assert canary not in captured.out + captured.err
    for path in (tmp_path / "runs").rglob("*"):
        if path.is_file():
            assert canary.encode() not in path.read_bytes(), path
    db = sqlite3.connect(tmp_path / "runs" / "disputelab.sqlite")
    assert db.execute("SELECT COUNT(*) FROM usage").fetchone()[0] > 0


def test_keys_in_the_config_file_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "disputelab.toml").write_text('[models.bad]\nmodel = "m"\napi_key = "sk-123"\n')
    result = CliRunner().invoke(app, ["run", "tenancy", "--model", "bad"])
    assert result.exit_code == 2
    assert "keys do not belong in files" in result.output
    assert "sk-123" not in result.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("models = 5\n", "models: a table of profiles ([models.NAME] sections), not int"),
        ("models = [1, 2]\n", "models: a table of profiles ([models.NAME] sections), not list"),
        ("[models]\nx = 3\n", "models.x: a table of settings ([models.x]), not int"),
    ],
)
def test_a_config_file_of_the_wrong_shape_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "disputelab.toml").write_text(text)
    result = CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), "run", "tenancy"])
    assert result.exit_code == 2, result.output
    assert f"error: disputelab.toml: {message}" in " ".join(result.output.split())


def test_an_unknown_model_name_is_a_one_line_error() -> None:
    result = CliRunner().invoke(app, ["run", "tenancy", "--model", "gpt-9"])
    assert result.exit_code == 2
    assert "unknown model 'gpt-9'; use rule, local, openai:MODEL" in " ".join(result.output.split())


def test_a_profiles_file_that_is_not_a_regular_file_is_one_line_not_a_hang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    os.mkfifo(tmp_path / "disputelab.toml")  # reading it would wait for a writer forever
    result = CliRunner().invoke(app, ["run", "tenancy", "--model", "somewhere"])
    assert result.exit_code == 2
    assert "is a FIFO (named pipe), not a regular file" in " ".join(result.output.split())
