"""An LLM spec that sets no `concurrency:` keeps an endpoint busy without being told to,
and the plan says the episodes and calls in flight that will apply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.models import Profile
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.plan.concurrency import LLM_CONCURRENCY, RULE_CONCURRENCY, endpoint_limits
from disputelab.plan.experiment import plan_experiment

OBVIOUS = {"name": "obvious", "scenarios": ["tenancy"], "mediators": ["none"]}


def slow(body: dict[str, Any]) -> Scripted:
    content = fill(requested_schema(body), text="Half each?")
    return Scripted(content=json.dumps(content), delay_s=0.2)


def test_a_spec_that_calls_a_model_and_sets_no_concurrency_starts_high() -> None:
    spec = {**OBVIOUS, "parties": "llm", "models": {"parties": "openai:m@http://127.0.0.1:9/v1"}}
    plan = plan_experiment(spec, profiles={})
    assert plan.concurrency == LLM_CONCURRENCY
    summary = plan.summary()
    assert (summary.concurrency, summary.concurrency_set) == (LLM_CONCURRENCY, False)
    [limit] = summary.limits
    assert (limit.calls, limit.adaptive) == (LLM_CONCURRENCY, True)


def test_a_rule_only_spec_keeps_the_small_default_and_a_set_concurrency_wins() -> None:
    assert plan_experiment(OBVIOUS, profiles={}).concurrency == RULE_CONCURRENCY
    set_ = plan_experiment({**OBVIOUS, "concurrency": 7}, profiles={})
    assert (set_.concurrency, set_.summary().concurrency_set) == (7, True)
    assert set_.summary(concurrency=3).concurrency == 3


def test_a_profile_limit_and_the_embedded_model_are_the_endpoint_limits() -> None:
    profiles = {"narrow": Profile(model="m", base_url="http://h/v1", concurrency=3)}
    limits = {lim.model: lim for lim in endpoint_limits(["narrow", "local", "rule"], profiles, 64)}
    assert set(limits) == {"narrow", "local"}
    assert limits["narrow"].calls == 3 and "profile" in limits["narrow"].source
    assert limits["local"].calls == 1


def test_dry_run_prints_the_concurrency_and_each_endpoints_limit(tmp_path: Path) -> None:
    spec = tmp_path / "obvious.yaml"
    spec.write_text(
        "name: obvious\nscenarios: [tenancy]\nmediators: [none]\nparties: llm\n"
        "models: {parties: 'openai:m@http://127.0.0.1:9/v1'}\nreplicates: 64\n"
    )
    r = CliRunner().invoke(
        app, ["--store", str(tmp_path / "runs"), "experiment", str(spec), "--dry-run"]
    )
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    assert f"concurrency: {LLM_CONCURRENCY} episodes in flight (the default;" in flat
    assert f"at most {LLM_CONCURRENCY} calls in flight (the run's concurrency, backs off" in flat


def test_a_run_with_no_concurrency_has_more_calls_in_flight_than_the_old_default(
    tmp_path: Path,
) -> None:
    spec = tmp_path / "obvious.yaml"
    with fake_openai(slow) as server:
        spec.write_text(
            "name: obvious\nscenarios: [tenancy]\nmediators: [none]\nparties: llm\n"
            f"models: {{parties: 'openai:m@{server.url}'}}\nreplicates: 12\nbudget: 2\n"
        )
        r = CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), "experiment", str(spec)])
    assert r.exit_code == 0, r.output
    assert "concurrency: 64 episodes in flight" in " ".join(r.output.split())
    assert server.max_in_flight > 4  # the old default of 4 episodes at a time
    assert len(server.spans) == server.calls  # the stub logged every request it answered


def test_the_embedded_model_below_an_asked_concurrency_is_warned_once(tmp_path: Path) -> None:
    spec = tmp_path / "local.yaml"
    spec.write_text(
        "name: loc\nscenarios: [tenancy]\nmediators: [none]\nparties: llm\n"
        "models: {parties: local}\nconcurrency: 8\n"
    )
    r = CliRunner().invoke(
        app, ["--store", str(tmp_path / "runs"), "experiment", str(spec), "--dry-run"]
    )
    if r.exit_code == 2 and "not installed" in r.output:
        pytest.skip("the embedded model's extra is not installed")
    assert r.exit_code == 0, r.output
    flat = " ".join(r.stderr.split())
    assert flat.count("warning: local:") == 1
    assert "1 call in flight at a time, fewer than the concurrency of 8" in flat
