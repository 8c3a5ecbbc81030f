"""`disputelab protocols show NAME`: where the keys of `run --param KEY=VALUE` are listed,
with the protocol's turn budget, seats, evaluators and presets."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from disputelab.cli import app


def _cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), *args])
    return result.exit_code, result.output


def test_show_lists_the_parameters_and_the_turn_budget(tmp_path: Path) -> None:
    code, out = _cli(tmp_path, "protocols", "show", "staged")
    flat = " ".join(out.split())
    assert code == 0, out
    assert flat.startswith("staged: ")
    assert "turn budget: rounds (bargaining rounds); `run --budget N` sets it" in flat
    assert "parameters (`run --param KEY=VALUE`):" in flat and "rounds" in flat
    assert "seats" in flat and "parties [" in flat
    assert "presets: agentmediation" in flat


def test_show_as_json_gives_every_parameter_with_type_default_and_help(tmp_path: Path) -> None:
    code, out = _cli(tmp_path, "protocols", "show", "roundtable", "--format", "json")
    assert code == 0, out
    data = json.loads(out)
    assert data["name"] == "roundtable" and data["turn_budget"] == "budget"
    params = {p["name"]: p for p in data["parameters"]}
    assert set(params["budget"]) == {"name", "type", "default", "help"}
    assert params["budget"]["type"] == "int" and params["budget"]["help"]
    assert all(seat["kinds"] for seat in data["seats"])


def test_show_an_unknown_protocol_is_one_line_and_status_2(tmp_path: Path) -> None:
    code, out = _cli(tmp_path, "protocols", "show", "nope")
    assert code == 2
    (line,) = out.strip().splitlines()
    assert line.startswith("error: unknown protocol 'nope'; available: ") and "staged" in line


def test_every_run_param_key_is_listed_by_show_for_its_protocol(tmp_path: Path) -> None:
    from disputelab.api import catalog

    for info in catalog.protocols():
        code, out = _cli(tmp_path, "protocols", "show", info.name, "--format", "json")
        assert code == 0
        listed = {p["name"] for p in json.loads(out)["parameters"]}
        assert listed == {p.name for p in info.parameters}
