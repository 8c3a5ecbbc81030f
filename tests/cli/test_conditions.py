"""`disputelab conditions parameters|show` and `run --behaviour`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.scenario.behaviour import PARAMETERS
from disputelab.store.sqlite import Store


def _cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), *args])
    return result.exit_code, result.output


def test_parameters_lists_the_whole_table(tmp_path: Path) -> None:
    code, text = _cli(tmp_path, "conditions", "parameters", "--format", "json")
    assert code == 0
    rows = json.loads(text)
    assert [r["parameter"] for r in rows] == list(PARAMETERS)
    assert {r["neutral"] for r in rows if r["parameter"] == "resentment.walk_away"} == {
        "none (a level)"
    }
    # The range `disputelab sensitivity` samples, as the behaviour table declares it.
    walk_away = PARAMETERS["resentment.walk_away"]
    ranges = {r["parameter"]: r["range sampled"] for r in rows}
    assert ranges["resentment.walk_away"] == f"{walk_away.low:g} to {walk_away.high:g}"


def test_show_names_the_parameters_and_the_change_per_party(tmp_path: Path) -> None:
    code, text = _cli(tmp_path, "conditions", "show", "cause:resource", "--scenario", "tenancy")
    assert code == 0, text
    assert "cause.resource.reactivity" in text and "cause.resource.top_topic_points" in text
    assert "weight of the top topic" in text and "40" in text and "50" in text


def test_show_says_when_a_condition_is_structural(tmp_path: Path) -> None:
    code, text = _cli(tmp_path, "conditions", "show", "parties:+1")
    assert code == 0
    assert "no behaviour parameter" in text and "third-party" in text


def test_show_rejects_an_unknown_condition_in_one_line(tmp_path: Path) -> None:
    code, text = _cli(tmp_path, "conditions", "show", "mood:grumpy")
    assert code == 2
    assert "unknown condition 'mood'" in text and "Traceback" not in text


def test_run_takes_behaviour_and_stores_it_with_the_run(tmp_path: Path) -> None:
    code, text = _cli(tmp_path, "run", "tenancy", "--behaviour", "mediator.calming=0")
    assert code == 0, text
    store = Store(tmp_path / "runs")
    (run,) = store.runs()
    assert store.run_info(run["run_id"])[1]["behaviour"] == {"mediator.calming": 0.0}
    code, bad = _cli(tmp_path, "run", "tenancy", "--behaviour", "mediator.calmin=0")
    assert code == 2 and "did you mean mediator.calming" in bad


def test_param_sets_one_behaviour_entry_beside_those_of_behaviour(tmp_path: Path) -> None:
    code, text = _cli(
        tmp_path,
        "run",
        "tenancy",
        "--behaviour",
        "mediator.calming=0",
        "--param",
        "behaviour.beta.avoiding=0.5",
    )
    assert code == 0, text
    store = Store(tmp_path / "runs")
    (run,) = store.runs()
    stored = store.run_info(run["run_id"])[1]["behaviour"]
    assert stored == {"mediator.calming": 0.0, "beta.avoiding": 0.5}
    code, bad = _cli(tmp_path, "run", "tenancy", "--param", "behaviour.beta.bogus=1")
    assert code == 2 and "unknown behaviour parameter 'beta.bogus'" in bad


@pytest.mark.parametrize(
    ("args", "said"),
    [
        # the same entry from both options: neither is silently preferred
        (
            ["--behaviour", "beta.avoiding=0.2", "--param", "behaviour.beta.avoiding=0.5"],
            "behaviour.beta.avoiding given twice, with --behaviour and --param; keep one",
        ),
        # the mapping given whole and by entry
        (
            ["--param", "behaviour=junk", "--param", "behaviour.beta.avoiding=0.5"],
            "--param behaviour.beta.avoiding: behaviour is also given whole, as 'junk'; keep one",
        ),
        (
            ["--param", "budget.x=1"],
            "--param budget.x: budget is not a mapping parameter; give --param budget=VALUE",
        ),
        (["--param", ".x=1"], "--param takes KEY=VALUE or MAPPING.ENTRY=VALUE, not '.x'"),
        (
            ["--param", "behaviour.beta.avoiding=1", "--param", "behaviour.beta.avoiding=2"],
            "--param behaviour.beta.avoiding given twice ('1', '2'); keep one",
        ),
        (
            ["--protocol", "show-of-hands", "--param", "behaviour.beta.avoiding=0.5"],
            "--param behaviour.beta.avoiding: behaviour is not a parameter of the "
            "show-of-hands protocol",
        ),
    ],
)
def test_param_refuses_an_entry_it_cannot_place(
    tmp_path: Path, args: list[str], said: str, toy: object
) -> None:
    code, text = _cli(tmp_path, "run", "tenancy", *args)
    assert code == 2, text
    assert said in " ".join(text.split()), text
    assert "Traceback" not in text
