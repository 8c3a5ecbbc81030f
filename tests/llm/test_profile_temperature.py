"""A model profile's temperature (overall or per role) fills a role's temperature the run
leaves unset, reaches the request body, is recorded in the run's stored config, and a
resume after it changed is refused. Runs go over HTTP to the scripted server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.models import ModelConfigError, Profile
from disputelab.llm.testing import (
    FakeOpenAI,
    Scripted,
    fake_openai,
    fill,
    requested_name,
    requested_schema,
)
from disputelab.plan.spec import ExperimentSpec
from disputelab.store.sqlite import Store


def answer(body: dict[str, Any]) -> Scripted:
    schema = requested_schema(body)
    reply = fill(schema, text="Let us keep talking.")
    if requested_name(body) == "party_action":
        reply["signal"] = "continue"
    if requested_name(body) == "when":
        reply["should_speak"] = True
    return Scripted(content=json.dumps(reply))


def write_profile(folder: Path, server: FakeOpenAI, temperature: str) -> None:
    (folder / "disputelab.toml").write_text(
        f'[models.p]\nmodel = "m"\nbase_url = "{server.url}"\ntemperature = {temperature}\n',
        encoding="utf-8",
    )


def cli(tmp_path: Path, *args: str) -> Result:
    return CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), *args])


def temperatures(server: FakeOpenAI, *names: str) -> set[float]:
    return {r["temperature"] for r in server.requests if requested_name(r) in names}


def last_run_config(tmp_path: Path) -> dict[str, Any]:
    store = Store(tmp_path / "runs")
    return store.run_info(store.runs()[-1]["run_id"])[1]


RUN = ["run", "tenancy", "--model", "p", "--mediator", "generic", "--budget", "4"]


def test_a_per_role_profile_temperature_reaches_the_requests_and_the_stored_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with fake_openai(answer) as server:
        write_profile(tmp_path, server, "{parties = 0.25, mediator = 0.45}")
        result = cli(tmp_path, *RUN)
    assert result.exit_code == 0, result.output
    assert temperatures(server, "party_action") == {0.25}
    assert temperatures(server, "when", "how") == {0.45}
    config = last_run_config(tmp_path)
    assert config["parties_temperature"] == 0.25 and config["mediator_temperature"] == 0.45


def test_one_profile_temperature_serves_every_role(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with fake_openai(answer) as server:
        write_profile(tmp_path, server, "0.3")
        assert cli(tmp_path, *RUN).exit_code == 0
    assert temperatures(server, "party_action", "when", "how") == {0.3}


def test_an_explicit_temperature_wins_over_the_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with fake_openai(answer) as server:
        write_profile(tmp_path, server, "{parties = 0.25, mediator = 0.45}")
        # The explicit value equals the default: it still wins, unlike an unset one.
        result = cli(tmp_path, *RUN, "--parties-temperature", "0.7")
    assert result.exit_code == 0, result.output
    assert temperatures(server, "party_action") == {0.7}
    assert temperatures(server, "when", "how") == {0.45}
    assert last_run_config(tmp_path)["parties_temperature"] == 0.7


def test_without_a_profile_temperature_nothing_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with fake_openai(answer) as server:
        (tmp_path / "disputelab.toml").write_text(
            f'[models.p]\nmodel = "m"\nbase_url = "{server.url}"\n', encoding="utf-8"
        )
        assert cli(tmp_path, *RUN).exit_code == 0
    assert temperatures(server, "party_action") == {0.7}
    assert temperatures(server, "when", "how") == {0.6}
    config = last_run_config(tmp_path)
    assert config["parties_temperature"] == 0.7 and config["mediator_temperature"] is None


SPEC = (
    "name: warm\nscenarios: [tenancy]\nparties: llm\nmediators: [generic]\nreplicates: 1\n"
    "models: {parties: p, mediator: p}\nbudget: 2\n"
)


def test_resuming_after_the_profile_temperature_changed_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    with fake_openai(answer) as server:
        write_profile(tmp_path, server, "{parties = 0.25}")
        first = cli(tmp_path, "experiment", str(spec))
        assert first.exit_code == 0, first.output
        assert temperatures(server, "party_action") == {0.25}
        stored = Store(tmp_path / "runs").run_info("warm")[1]
        assert stored["params"]["parties_temperature"] == 0.25
        assert stored["params"]["mediator_temperature"] is None
        same = cli(tmp_path, "experiment", str(spec), "--resume")
        assert same.exit_code == 0, same.output
        write_profile(tmp_path, server, "{parties = 0.5}")
        changed = cli(tmp_path, "experiment", str(spec), "--resume")
    assert changed.exit_code == 2
    lines = changed.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in changed.output
    assert "was started with a different parties_temperature" in lines[0]


def test_a_spec_keeps_an_unset_temperature_apart_from_its_default() -> None:
    unset = ExperimentSpec.model_validate({"name": "a", "scenarios": ["tenancy"]})
    given = ExperimentSpec.model_validate(
        {"name": "a", "scenarios": ["tenancy"], "parties_temperature": 0.7}
    )
    assert "parties_temperature" not in unset.params
    assert given.params["parties_temperature"] == 0.7
    assert unset.protocol_params().parties_temperature == 0.7  # the default still applies


def test_bad_profile_temperatures_are_one_line_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="must be a number from 0 to 2"):
        Profile.model_validate({"model": "m", "temperature": 3})
    with fake_openai(answer) as server:
        write_profile(tmp_path, server, "{party = 0.2}")
        result = cli(tmp_path, *RUN)
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "temperature.party: no role of that name has a temperature" in result.output
    assert issubclass(ModelConfigError, ValueError)
