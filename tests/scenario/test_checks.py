"""A scenario whose parties can never agree on some topic is flagged, naming the topic."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.scenario.checks import unsettlable
from disputelab.scenario.io import save_scenario
from disputelab.scenario.library import builtin_scenarios
from disputelab.scenario.schema import Scenario


def _disjoint(topic: str = "rent") -> Scenario:
    s = builtin_scenarios()["tenancy"].model_copy(deep=True)
    options = [o.id for o in next(t for t in s.topics if t.id == topic).options]
    first, second = s.parties[0], s.parties[1]
    first.preferences[topic].ranking = options[:1]
    first.preferences[topic].unacceptable = options[1:]
    second.preferences[topic].ranking = options[1:]
    second.preferences[topic].unacceptable = options[:1]
    return s


def test_every_built_in_scenario_can_settle() -> None:
    assert {sid: unsettlable(s) for sid, s in builtin_scenarios().items() if unsettlable(s)} == {}


def test_a_topic_without_a_shared_acceptable_option_is_named() -> None:
    (line,) = unsettlable(_disjoint("rent"))
    assert line.startswith("topic rent: no option is acceptable to every party (tenant accepts")


def test_scenarios_validate_warns_and_still_passes_the_file(tmp_path: Path) -> None:
    path = tmp_path / "never.yaml"
    save_scenario(_disjoint("rent"), path)
    result = CliRunner().invoke(app, ["scenarios", "validate", str(path)])
    assert result.exit_code == 0
    flat = " ".join(result.output.split())
    assert "ok " in flat and "warning:" in flat and "topic rent: no option is acceptable" in flat
