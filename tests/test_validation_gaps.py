"""Input that could never work is refused up front in one line with exit status 2: a
seed beyond what the store and backends hold, a key given twice in YAML, an empty case
file, and a model URL no request could reach (issue 18, item 8)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app


def _run(tmp_path: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, ["--store", str(tmp_path / "runs"), *args])
    return r.exit_code, " ".join(r.output.split())


def _one_error(code: int, text: str, *needles: str) -> None:
    assert code == 2, text
    assert text.count("error:") == 1 and "Traceback" not in text
    for n in needles:
        assert n in text, text


def test_a_base_seed_beyond_2_to_the_53_is_refused_before_anything_runs(tmp_path: Path) -> None:
    spec = tmp_path / "big.yaml"
    spec.write_text(
        "name: big\nscenarios: [tenancy]\nconditions: [general]\nmediators: [none]\n"
        f"base_seed: {2**63}\n"
    )
    _one_error(*_run(tmp_path, "experiment", str(spec)), "base_seed", "less than or equal")
    # A usage error: typer's own box under CliRunner, one line from the console script.
    code, text = _run(tmp_path, "run", "tenancy", "--seed", str(2**63))
    assert code == 2 and str(2**53) in text
    assert not (tmp_path / "runs" / "disputelab.sqlite").exists()


def test_a_key_given_twice_is_an_error_in_specs_and_scenarios(tmp_path: Path) -> None:
    spec = tmp_path / "dup.yaml"
    spec.write_text("name: a\nname: b\nscenarios: [tenancy]\nconditions: [general]\n")
    _one_error(*_run(tmp_path, "experiment", str(spec), "--dry-run"), "duplicate key 'name'")
    sc = tmp_path / "dup-scenario.yaml"
    sc.write_text("id: x\ntitle: t\nid: y\n")
    code, text = _run(tmp_path, "scenarios", "validate", str(sc))
    assert code == 2 and "duplicate key 'id' at line 3" in text


def test_an_empty_agentmediation_file_is_an_error_not_zero_cases(tmp_path: Path) -> None:
    empty = tmp_path / "cases.jsonl"
    empty.write_text("\n")
    code, text = _run(tmp_path, "scenarios", "import", "--from", "agentmediation", str(empty))
    assert code == 2 and "holds no case records" in text


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://127.0.0.1:9/v1", "must be an http:// or https:// URL, not ftp"),
        ("http://127.0.0.1:184401/v1", "the port must be a number"),
        ("http://127.0.0.1:notaport/v1", "the port must be a number"),
        ("http:///v1", "names no host"),
    ],
)
def test_a_model_url_no_request_could_reach_fails_at_once(
    tmp_path: Path, url: str, why: str
) -> None:
    _one_error(*_run(tmp_path, "run", "tenancy", "--model", f"openai:m@{url}"), why)
