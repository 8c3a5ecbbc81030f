"""A new protocol is one module plus its agents: the toy plug-in package in
tests/plugins/show_of_hands registers a protocol, an agent kind for its one new seat and
an evaluator, touching no module of disputelab, and runs through `disputelab run`, an
experiment and a report. Here it is imported in this process; test_plugin_package finds
it the way an installed package is found, through its entry point.

The toy ("show of hands"): a chair opens each round, every party speaks once, and the
round ends with the chair counting hands; see the plug-in's own docstring.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.store.sqlite import Store


def _cli(store: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["--store", str(store), *args])
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def test_protocols_list_shows_the_toy_with_its_parameters_and_seats(
    toy: ModuleType, tmp_path: Path
) -> None:
    text = _cli(tmp_path, "protocols", "list")
    assert "show-of-hands" in text and "rounds=3" in text and "counter" in text


def test_disputelab_run_plays_the_toy_and_scores_it_with_its_evaluator(
    toy: ModuleType, tmp_path: Path
) -> None:
    text = _cli(
        tmp_path,
        "run",
        "tenancy",
        "--protocol",
        "show-of-hands",
        "--param",
        "rounds=2",
        "--seed",
        "1",
    )
    assert "rounds_played" in text
    store = Store(tmp_path)
    (eid,) = store.episode_ids(store.resolve_run("last"))
    rec = store.load_episode(eid)
    assert rec.episode.protocol == "show-of-hands" and rec.complete
    assert rec.episode.agents == {"parties": "rule", "chair": "counter"}
    chair_turns = [t for t in rec.episode.turns if t.speaker == "chair"]
    assert 1 <= len(chair_turns) <= 2
    # The chair heard every party in upper case; the store keeps what was said and what it heard.
    party = next(t for t in rec.episode.turns if t.role == "party")
    assert party.delivered == {"chair": party.text.upper()}
    said = [t.text for t in rec.episode.turns if t.role == "party"]
    assert toy.CHAIRS[-1].heard == [t.upper() for t in said[: len(toy.CHAIRS[-1].heard)]] != []
    # Its calls are charged under its own role.
    (usage,) = [u for u in store.usage(eid) if u["role"] == "chair"]
    assert usage["calls"] == len(chair_turns)
    (score,) = [s for s in store.scores(eid) if s.evaluator == "toy-hands"]
    assert score.value == len(chair_turns)


def test_a_parameter_the_toy_does_not_have_is_refused(toy: ModuleType, tmp_path: Path) -> None:
    r = CliRunner().invoke(
        app,
        [
            "--store",
            str(tmp_path),
            "run",
            "tenancy",
            "--protocol",
            "show-of-hands",
            "--param",
            "speed=9",
        ],
    )
    assert r.exit_code == 2
    assert "not a parameter of the show-of-hands protocol" in " ".join(r.output.split())


def test_an_experiment_runs_the_toy_and_reports_it(toy: ModuleType, tmp_path: Path) -> None:
    spec = tmp_path / "toy.yaml"
    spec.write_text(
        "name: toy-grid\nprotocol: show-of-hands\nscenarios: [tenancy, workplace]\n"
        "mediators: [counter]\nreplicates: 2\nrounds: 2\n",
        encoding="utf-8",
    )
    text = _cli(tmp_path, "experiment", str(spec))
    assert "4 episodes planned, 4 run" in text
    config = Store(tmp_path).run_info("toy-grid")[1]
    assert config["protocol"] == "show-of-hands" and config["params"] == {"rounds": 2}
    report = _cli(tmp_path, "report", "toy-grid")
    assert "show-of-hands protocol" in report and "rounds_played" in report
    r = CliRunner().invoke(app, ["--store", str(tmp_path), "report", "toy-grid", "--format", "csv"])
    header, *rows = r.output.strip().splitlines()
    assert len(rows) == 4 and "rounds_played" in header
