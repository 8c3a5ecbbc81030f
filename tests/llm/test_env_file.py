"""A `.env` file supplies keys the environment lacks (issue 41, item 10).

The real environment wins over the file; only a key lookup reads it; a line that does not
parse is one error naming the file and line, never the line itself; and a key that came
from the file reaches the server, as a bearer token, and nothing else: not the store,
not the cache, not the output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.keys import parse_env, read_key
from disputelab.llm.model_errors import EnvFileError
from disputelab.llm.models import parse_model
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema

KEY = "vllm-dotenv-canary-7731"


@pytest.fixture(autouse=True)
def here(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The working directory, where the .env is looked for; no key in the environment."""
    for name in ("VLLM_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "DISPUTELAB_STORE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _answer(body: dict[str, Any]) -> Scripted:
    return Scripted(content=json.dumps(fill(requested_schema(body), text="Let us split it.")))


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, ["--store", "runs", *args])


def test_the_accepted_forms() -> None:
    text = (
        "# keys for the lab\n"
        "\n"
        "A=plain\n"
        "export B=exported\n"
        "C = spaced   # a comment\n"
        'D="two words # kept" # dropped\n'
        "E='single $NOT_EXPANDED'\n"
        'F="tab\\"quote\\\\"\n'
        "G=\n"
        "H=has#hash\n"
    )
    assert parse_env(text) == {
        "A": "plain",
        "B": "exported",
        "C": "spaced",
        "D": "two words # kept",
        "E": "single $NOT_EXPANDED",
        "F": 'tab"quote\\',
        "G": "",
        "H": "has#hash",
    }


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        ("A=1\nsk-pasted-key-alone\n", ".env:2", "not a NAME=value line"),
        ("1A=x\n", ".env:1", "not a NAME=value line"),
        ("A=1\n\nB='open-secret\n", ".env:3", "B: the ' quote is not closed"),
        ('A="x" trailing\n', ".env:1", "A: text after the closing quote"),
        ("A=it's\n", ".env:1", "A: a quote inside an unquoted value"),
        ("A=1\nA=2\n", ".env:2", "A is set again (first on line 1)"),
    ],
)
def test_a_line_that_does_not_parse_names_the_file_and_line_but_never_its_text(
    text: str, where: str, problem: str
) -> None:
    with pytest.raises(EnvFileError) as exc:
        parse_env(text, ".env")
    message = str(exc.value)
    assert message.startswith(f"{where}: ") and problem in message and "\n" not in message
    for secret in ("sk-pasted-key-alone", "open-secret", "it's", "trailing"):
        assert secret not in message


def test_the_real_environment_wins_over_the_file(
    here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (here / ".env").write_text("VLLM_API_KEY=from-the-file\n", encoding="utf-8")
    assert read_key("VLLM_API_KEY") == "from-the-file"
    monkeypatch.setenv("VLLM_API_KEY", "from-the-shell")
    assert read_key("VLLM_API_KEY") == "from-the-shell"
    assert read_key("NOT_SET_ANYWHERE") == ""


def test_only_a_key_lookup_reads_the_file(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (here / ".env").write_text("this line is broken\n", encoding="utf-8")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "exported")
    parse_model("anthropic/claude-x", {})  # its key is exported: the file is not opened
    ran = _cli("run", "tenancy")  # rule agents look no key up
    assert ran.exit_code == 0, ran.output


def test_a_broken_file_stops_a_model_that_consults_it(here: Path) -> None:
    (here / ".env").write_text("GOOD=1\nthis line is broken\n", encoding="utf-8")
    with pytest.raises(EnvFileError, match=r"^\.env:2: not a NAME=value line"):
        parse_model("vllm/m@http://127.0.0.1:9/v1", {})


def test_a_broken_file_ends_a_run_with_one_line_and_status_2(here: Path) -> None:
    (here / ".env").write_text("GOOD=1\nsk-pasted-alone\n", encoding="utf-8")
    ran = _cli("run", "tenancy", "--model", "vllm/m@http://127.0.0.1:9/v1")
    assert ran.exit_code == 2
    assert ran.stderr.strip().splitlines() == [
        "error: .env:2: not a NAME=value line (NAME is letters, digits and _, not starting "
        "with a digit); the line is not shown, it may hold a key"
    ]
    assert "sk-pasted-alone" not in ran.output


def test_a_key_from_the_file_reaches_the_server_and_nothing_else(
    here: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (here / ".env").write_text(f"# the lab's vLLM\nVLLM_API_KEY={KEY}\n", encoding="utf-8")
    with fake_openai(_answer) as server:
        model = f"vllm/test-model@{server.url}"
        ran = _cli("run", "tenancy", "--model", model, "--mediator", "social", "--budget", "2")
        report = _cli("report", "last", "--format", "json")
        runs = _cli("runs", "--format", "json")
    assert ran.exit_code == 0, ran.output
    assert report.exit_code == 0 and runs.exit_code == 0, report.output + runs.output
    assert server.calls > 0
    assert {h.get("Authorization") for h in server.headers} == {f"Bearer {KEY}"}
    assert server.requests[0]["model"] == "test-model"
    assert "vllm/test-model@http://127.0.0.1:" in ran.stdout  # the usage line names it
    printed = ran.output + report.output + runs.output + "".join(capfd.readouterr())
    written = b"".join(p.read_bytes() for p in (here / "runs").rglob("*") if p.is_file())
    assert written and b"vllm/test-model" in written  # the store names the model...
    assert KEY not in printed and KEY.encode() not in written  # ...and never the key


def test_the_plan_names_the_provider_its_endpoint_and_key_variable(here: Path) -> None:
    (here / "grid.yaml").write_text(
        "name: providers\nscenarios: [tenancy]\nmediators: [social]\nparties: llm\n"
        "models: {parties: 'anthropic/claude-x', mediator: 'vllm/q@http://127.0.0.1:9/v1'}\n"
        "replicates: 1\n",
        encoding="utf-8",
    )
    plan = _cli("experiment", "grid.yaml", "--dry-run")
    assert plan.exit_code == 0, plan.output
    flat = " ".join(plan.stdout.split())
    assert "model calls, parties (anthropic/claude-x)" in flat
    assert "Anthropic at https://api.anthropic.com/v1/, key from ANTHROPIC_API_KEY" in flat
    assert "vLLM at http://127.0.0.1:9/v1, key from VLLM_API_KEY if set" in flat
    assert "needs an API key: set ANTHROPIC_API_KEY" in " ".join(plan.stderr.split())
