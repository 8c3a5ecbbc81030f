"""`disputelab sensitivity`: its files, resume, and one-line errors for bad input."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from disputelab.cli import app


def _cli(tmp_path: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), *args])
    return result.exit_code, result.output


def _spec(tmp_path: Path, **fields: object) -> str:
    data = {
        "name": "sens",
        "scenarios": ["tenancy"],
        "conditions": ["posture:competing"],
        "mediators": ["rule"],
        "replicates": 1,
        "budget": 40,
        **fields,
    }
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_it_writes_the_table_csv_and_plot_and_resumes(tmp_path: Path) -> None:
    spec, out = _spec(tmp_path), str(tmp_path / "out")
    args = ["sensitivity", spec, "--param", "beta.competing", "--param", "cause.legal.reactivity"]
    args += ["--samples", "2", "--out", out, "--metric", "socrates-oracle:party_turns"]
    code, text = _cli(tmp_path, *args)
    assert code == 0, text
    assert "6 points" in text and "12 episodes to run" in text  # 2 x (2 + 1) points x 2
    assert "| rank | parameter | mu* | mu* 95% CI | sigma | mu |" in text
    md = (tmp_path / "out" / "sensitivity.md").read_text()
    assert "## socrates-oracle:party_turns (rule)" in md
    assert (tmp_path / "out" / "sensitivity.png").stat().st_size > 1000
    with (tmp_path / "out" / "sensitivity.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    legal = [r for r in rows if r["parameter"] == "cause.legal.reactivity"]
    assert legal and all(float(r["mu_star"]) == 0.0 for r in legal)
    code, again = _cli(tmp_path, *args)
    assert code == 2 and "pass --resume" in again and len(again.strip().splitlines()) == 1
    code, resumed = _cli(tmp_path, *args, "--resume")
    assert code == 0, resumed
    assert "0 episodes to run, 12 already stored" in resumed


def test_sobol_ranks_by_total_index(tmp_path: Path) -> None:
    # Two disputes and a longer budget: on tenancy alone in 40 turns, negotiating parties
    # end the same way at every sampled beta.competing, which leaves nothing to rank.
    spec = _spec(tmp_path, scenarios=["tenancy", "workplace"], budget=60)
    args = ["sensitivity", spec, "--method", "sobol", "--samples", "2"]
    args += ["--param", "beta.competing", "--out", str(tmp_path / "out")]
    code, text = _cli(tmp_path, *args)
    assert code == 0, text
    assert "| rank | parameter | S1 | S1 95% CI | ST | ST 95% CI |" in text


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--param", "beta.compting"], "unknown behaviour parameter"),
        (["--param", "beta.competing=4:1"], "must be below"),
        (["--param", "beta.competing=x"], "LOW:HIGH"),
        (["--method", "fast"], "--method takes morris or sobol"),
        (["--samples", "0"], "--samples must be at least 1"),
        (["--samples", "-3"], "--samples must be at least 1"),
        (["--seed", "-1"], "--seed must be 0 or more"),
        (["--method", "sobol", "--samples", "3"], "power of 2"),
        (["--param", "beta.competing", "--param", "beta.competing"], "more than once"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, extra: list[str], match: str) -> None:
    code, text = _cli(tmp_path, "sensitivity", _spec(tmp_path), *extra)
    assert code == 2, text
    assert match in text and "Traceback" not in text
    assert len(text.strip().splitlines()) == 1


def test_a_spec_whose_conditions_act_through_nothing_asks_for_param(tmp_path: Path) -> None:
    code, text = _cli(tmp_path, "sensitivity", _spec(tmp_path, conditions=["general"]))
    assert code == 2 and "--param" in text and len(text.strip().splitlines()) == 1


def test_a_protocol_without_behaviour_parameters_is_refused(tmp_path: Path, toy: object) -> None:
    spec = tmp_path / "toy.yaml"
    toy_spec = {"name": "toy", "protocol": "show-of-hands", "scenarios": ["tenancy"]}
    spec.write_text(yaml.safe_dump({**toy_spec, "mediators": ["counter"]}), encoding="utf-8")
    code, text = _cli(tmp_path, "sensitivity", str(spec))
    assert code == 2 and "no behaviour parameters" in text
    assert len(text.strip().splitlines()) == 1


def test_an_unknown_metric_is_one_line_listing_the_known_ones(tmp_path: Path) -> None:
    args = ["sensitivity", _spec(tmp_path), "--param", "beta.competing", "--samples", "1"]
    code, text = _cli(tmp_path, *args, "--metric", "socrates-oracle:nope")
    assert code == 2
    assert "no metric socrates-oracle:nope" in text and "party_turns" in text
    assert "Traceback" not in text
    # What was played is kept, and the message says how to go on from it.
    assert "run again with --resume" in " ".join(text.split())
    out = ["--out", str(tmp_path / "table")]  # never the working directory
    code, text = _cli(tmp_path, *args, "--metric", "socrates-oracle:party_turns", "--resume", *out)
    assert code == 0, text


@pytest.mark.parametrize("metric", ["bogus", "promediate:cc", "socrates-oracle:", "nope:final"])
def test_a_metric_of_no_evaluator_of_the_grid_is_refused_before_anything_is_played(
    tmp_path: Path, metric: str
) -> None:
    args = ["sensitivity", _spec(tmp_path), "--param", "beta.competing", "--samples", "1"]
    code, text = _cli(tmp_path, *args, "--metric", metric, "--out", str(tmp_path / "out"))
    assert code == 2 and len(text.strip().splitlines()) == 1
    assert f"--metric {metric}: not a metric this grid scores" in text
    assert "socrates-oracle" in text  # the evaluators it could name
    assert not (tmp_path / "runs").exists() and not (tmp_path / "out").exists()


def test_an_out_that_is_a_file_is_refused_before_anything_is_played(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("mine")
    args = ["sensitivity", _spec(tmp_path), "--param", "beta.competing", "--samples", "1"]
    code, text = _cli(tmp_path, *args, "--out", str(afile))
    assert code == 2 and "--out" in text and "is a file" in text
    code, text = _cli(tmp_path, *args, "--out", str(afile / "under"))
    assert code == 2 and "--out" in text and "part of the path is a file" in text
    assert not (tmp_path / "runs").exists() and afile.read_text() == "mine"


def test_a_missing_spec_is_one_line(tmp_path: Path) -> None:
    code, text = _cli(tmp_path, "sensitivity", str(tmp_path / "none.yaml"))
    assert code == 2 and len(text.strip().splitlines()) == 1
