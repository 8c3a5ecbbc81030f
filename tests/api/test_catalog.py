"""`disputelab.api.catalog`: what the library holds before anything runs, as plain data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from disputelab import api
from disputelab.api import catalog


def test_scenarios_lists_the_built_in_library() -> None:
    rows = catalog.scenarios()
    ids = [r["id"] for r in rows]
    assert {"tenancy", "workplace", "community-centre"} <= set(ids)
    assert tuple(ids) == catalog.scenario_ids()
    tenancy = next(r for r in rows if r["id"] == "tenancy")
    assert set(tenancy) == {"id", "domain", "parties", "topics", "title"}
    assert tenancy["parties"] >= 2 and tenancy["topics"] >= 1


def test_show_scenario_writes_yaml_or_json_as_a_condition_changes_it() -> None:
    plain = yaml.safe_load(catalog.show_scenario("tenancy"))
    as_json = json.loads(catalog.show_scenario("tenancy", format="json"))
    assert plain["id"] == as_json["id"] == "tenancy"
    more = yaml.safe_load(catalog.show_scenario("tenancy", condition="parties:+1"))
    assert len(more["parties"]) == len(plain["parties"]) + 1


def test_show_scenario_refuses_an_unknown_format_or_scenario() -> None:
    with pytest.raises(api.CatalogError, match="unknown format 'xml'; use yaml or json"):
        catalog.show_scenario("tenancy", format="xml")
    with pytest.raises(api.ScenarioError):
        catalog.show_scenario("no-such-case")


def test_conditions_lists_every_condition_and_socrates_fifteen() -> None:
    names = [c.name for c in catalog.conditions()]
    assert names[0] == "general" and {"posture", "culture", "expertise"} <= set(names)
    assert all(c.usage and c.description for c in catalog.conditions())
    assert len(catalog.socrates_conditions()) == 15


def test_behaviour_parameters_give_each_default_neutral_value_and_range() -> None:
    params = catalog.behaviour_parameters()
    assert params and len({p.name for p in params}) == len(params)
    for p in params:
        assert p.low <= p.high and p.what and p.source


def test_condition_effects_name_the_parameters_moved_and_the_numbers_per_party() -> None:
    effect = catalog.condition_effects("posture:competing", "tenancy")
    assert effect.scenario == "tenancy" and effect.parameters and not effect.added
    assert effect.changes and all(c.before != c.after for c in effect.changes)
    added = catalog.condition_effects("parties:+1", "tenancy")
    assert added.parameters == [] and len(added.added) == 1


def test_protocols_lists_every_registered_protocol() -> None:
    names = [p.name for p in catalog.protocols()]
    assert set(names) == set(api.PROTOCOLS.names())
    assert all(p.summary and p.seats for p in catalog.protocols())


def test_describe_protocol_staged_lists_its_turn_budget_and_parameters() -> None:
    staged = catalog.describe_protocol("staged")
    assert (staged.turn_budget, staged.turn_budget_unit) == ("rounds", "bargaining rounds")
    params = {p.name: p for p in staged.parameters}
    assert "rounds" in params and params["rounds"].type == "int"
    assert all(p.help and not p.help.endswith(".") for p in staged.parameters)
    seats = {s.role: s for s in staged.seats}
    assert "parties" in seats and seats["parties"].kinds
    assert staged.evaluators and "agentmediation" in staged.presets


def test_describe_protocol_names_the_protocols_there_are_for_an_unknown_one() -> None:
    with pytest.raises(api.CatalogError, match=r"unknown protocol 'nope'; available: .*staged"):
        catalog.describe_protocol("nope")


def test_a_parameter_of_a_few_values_is_typed_by_them() -> None:
    roundtable = catalog.describe_protocol("roundtable")
    typed = {p.name: p.type for p in roundtable.parameters}
    assert any(t.startswith("one of ") for t in typed.values())


def test_presets_give_paper_protocol_and_settings_and_describe_one_in_markdown() -> None:
    presets = {p.name: p for p in catalog.presets()}
    assert "socrates" in presets and presets["socrates"].settings
    text = catalog.describe_preset("socrates")
    assert text.startswith("### `socrates`") and "| setting | value |" in text
    with pytest.raises(api.CatalogError, match="unknown preset 'nope'"):
        catalog.describe_preset("nope")


def test_datasets_say_where_each_is_fetched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DISPUTELAB_DATA", str(tmp_path / "data"))
    assert catalog.dataset_root() == tmp_path / "data"
    found = {d.name: d for d in catalog.datasets()}
    assert {"agentmediation", "promediate"} <= set(found)
    assert all(d.here is None and d.url.startswith("https://") for d in found.values())


def test_fetch_dataset_refuses_an_unknown_name() -> None:
    with pytest.raises(catalog.DatasetError, match="unknown dataset 'nope'"):
        catalog.fetch_dataset("nope")


def test_the_most_used_catalog_functions_are_the_front_doors_own() -> None:
    assert api.describe_protocol is catalog.describe_protocol
    assert api.scenarios is catalog.scenarios
    assert {"describe_protocol", "scenarios", "protocols", "presets"} <= set(api.__all__)
