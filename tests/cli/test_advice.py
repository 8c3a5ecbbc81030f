"""Library errors name a fix in the API's and the spec's words, since they are raised from
Python too; the command line prints them with its own options."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import disputelab.api as api
from disputelab.cli import app
from disputelab.cli.common import as_cli_advice


def test_a_setting_to_give_becomes_the_option_to_pass() -> None:
    assert as_cli_advice("tracker 'per-turn' needs a judge model: give `judges`") == (
        "tracker 'per-turn' needs a judge model: pass --judge-model"
    )
    assert as_cli_advice("llm parties need a model: give `model` or `models.parties`") == (
        "llm parties need a model: pass --model or --parties-model"
    )
    assert as_cli_advice("bad (`lenient` imports it)") == "bad (--lenient imports it)"


def test_names_the_command_line_has_no_option_for_stay_as_written() -> None:
    text = "fetch it (`disputelab datasets get x`), or give `corpus_file`"
    assert as_cli_advice(text) == text


def test_an_experiment_run_twice_asks_for_resume_in_each_front_doors_words(
    tmp_path: Path,
) -> None:
    spec = {"name": "twice", "scenarios": ["tenancy"], "replicates": 1}
    store = tmp_path / "runs"
    api.experiment(spec, store=store)
    with pytest.raises(api.StoreError) as raised:
        api.experiment(spec, store=store)
    assert "to continue it give `resume`" in str(raised.value)
    assert "--" not in str(raised.value)
    spec_file = tmp_path / "twice.yaml"
    spec_file.write_text("name: twice\nscenarios: [tenancy]\nreplicates: 1\n")
    result = CliRunner().invoke(app, ["--store", str(store), "experiment", str(spec_file)])
    assert result.exit_code == 2
    assert "to continue it pass --resume, or give the spec a new name" in result.output
