"""Presets: a paper's setting in one word, for `run --preset` and `preset:` in specs.
Every setting given explicitly overrides the preset's value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.plan.spec import ExperimentSpec
from disputelab.protocols.base import get_protocol
from disputelab.protocols.presets import PRESETS, get_preset, preset_markdown

DOCS = Path(__file__).resolve().parents[2] / "docs" / "presets.md"


@pytest.fixture(autouse=True)
def _isolated_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DISPUTELAB_STORE", raising=False)


PAPERS = {"agentmediation", "socrates", "promediate", "settleagent", "remediator"}


def test_the_five_papers_have_presets_whose_values_fit_their_protocols() -> None:
    assert set(PRESETS.names()) == PAPERS
    for _, preset in PRESETS.items():
        get_protocol(preset.protocol).params(preset.params())  # raises if a value is wrong
        assert all(s.source and s.before for s in preset.settings)


@pytest.mark.parametrize(
    ("name", "protocol"), [("settleagent", "settlement"), ("remediator", "bilateral")]
)
def test_settleagent_and_the_remediator_name_where_in_the_paper_each_value_is(
    name: str, protocol: str
) -> None:
    preset = get_preset(name)
    assert preset.protocol == protocol
    for setting in preset.settings:  # a section, a table or an appendix of the paper
        assert any(mark in setting.source for mark in ("§", "Table", "App.")), setting
    shown = CliRunner().invoke(app, ["presets", "show", name])
    assert shown.exit_code == 0, shown.output
    assert all(f"`{s.key}`" in shown.output for s in preset.settings)
    mediator, scenario = {"settlement": ("mcts", "settle-gym-slip")}.get(
        protocol, ("zero-shot", "product-sale")
    )
    spec = ExperimentSpec(name="x", scenarios=[scenario], mediators=[mediator], preset=name)
    assert spec.protocol == protocol


def test_a_spec_preset_sets_the_protocol_and_its_parameters() -> None:
    spec = ExperimentSpec(name="x", scenarios=["tenancy"], preset="socrates")
    assert spec.protocol == "roundtable"
    assert spec.params["parties_temperature"] == 0.6
    assert spec.params["context"] == 0 and spec.params["mediator_every_turn"] is True
    staged = ExperimentSpec(name="y", scenarios=["tenancy"], preset="agentmediation")
    assert staged.protocol == "staged" and staged.params["verdict_calls"] == "two"


def test_explicit_settings_override_the_preset_in_a_spec() -> None:
    spec = ExperimentSpec.model_validate(
        {
            "name": "x",
            "scenarios": ["tenancy"],
            "preset": "socrates",
            "parties_temperature": 0.2,  # the shorthand, at the top level
            "params": {"context": 8},
        }
    )
    assert spec.params["parties_temperature"] == 0.2 and spec.params["context"] == 8
    assert spec.params["culture_statement"] == "described"  # the rest still the preset's


def test_a_spec_preset_with_another_protocol_is_refused() -> None:
    with pytest.raises(ValueError, match="plays the staged protocol, not roundtable"):
        ExperimentSpec(
            name="x", scenarios=["tenancy"], preset="agentmediation", protocol="roundtable"
        )


def test_an_unknown_spec_preset_is_refused() -> None:
    with pytest.raises(ValueError, match="preset: unknown 'nope'"):
        ExperimentSpec(name="x", scenarios=["tenancy"], preset="nope")


def test_the_presets_tracker_applies_only_with_a_judge_and_yields_to_an_explicit_one() -> None:
    plain = ExperimentSpec(name="x", scenarios=["tenancy"], preset="promediate")
    assert plain.tracker == "oracle"  # rule parties, no judge: the default source
    judged = ExperimentSpec(
        name="x", scenarios=["tenancy"], preset="promediate", models={"judge": "local"}
    )
    assert judged.tracker == "per-turn" and "per-turn" in judged.evaluators
    mine = ExperimentSpec(
        name="x",
        scenarios=["tenancy"],
        preset="promediate",
        models={"judge": "local"},
        tracker="self-report",
    )
    assert mine.tracker == "self-report"


def answer(body: dict[str, Any]) -> Scripted:
    schema = requested_schema(body)
    reply = fill(schema, text="We should talk.")
    if "signal" in reply:
        reply["signal"] = "continue"
    return Scripted(content=json.dumps(reply))


def named(requests: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [
        r
        for r in requests
        if ((r.get("response_format") or {}).get("json_schema") or {}).get("name") == name
    ]


def test_run_preset_reaches_the_requests_and_an_option_overrides_it(tmp_path: Path) -> None:
    with fake_openai(answer) as server:
        args = ["--store", str(tmp_path / "runs"), "run", "tenancy", "--preset", "socrates"]
        args += ["--model", f"openai:m@{server.url}", "--mediator", "generic", "--budget", "4"]
        result = CliRunner().invoke(app, [*args, "--parties-temperature", "0.1"])
    assert result.exit_code == 0, result.output
    parties = named(server.requests, "party_action")
    when = named(server.requests, "when")
    assert {r["temperature"] for r in parties} == {0.1}  # the option, not the preset's 0.6
    assert {r["temperature"] for r in when} == {0.6}  # the preset's
    assert len(when) == 3  # consulted after every party turn but the last


def test_run_preset_with_another_protocol_is_one_line_and_status_2(tmp_path: Path) -> None:
    args = ["--store", str(tmp_path), "run", "tenancy", "--preset", "agentmediation"]
    result = CliRunner().invoke(app, [*args, "--protocol", "roundtable"])
    assert result.exit_code == 2
    assert "plays the staged protocol" in result.output and "Traceback" not in result.output


def test_presets_show_lists_every_setting_and_its_source() -> None:
    result = CliRunner().invoke(app, ["presets", "show", "promediate"])
    assert result.exit_code == 0
    for s in get_preset("promediate").settings:
        assert f"`{s.key}`" in result.output
    assert "4 x N x M" in result.output
    bad = CliRunner().invoke(app, ["presets", "show", "nope"])
    assert bad.exit_code == 2 and "unknown preset 'nope'" in bad.output


def test_the_docs_table_is_the_presets_own() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for _, preset in PRESETS.items():
        assert preset_markdown(preset) in text, f"docs/presets.md is stale for {preset.name}"
