"""Credentials typed into a model URL are used, and never written or shown anywhere.

`openai:M@http://user:secret@host/v1` authenticates with HTTP Basic auth and the rest of
the system only ever sees `http://***@host/v1`: the store, the response cache, stdout,
stderr, error text and every report format.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.models import ModelConfigError, parse_model
from disputelab.llm.testing import Scripted, fake_openai, fill, requested_schema
from disputelab.redact import redact, redact_url, split_userinfo

SECRET = "s3cr3t-Pa55-c4n4ry"


def answer(body: dict[str, Any]) -> Scripted:
    schema = requested_schema(body)
    return Scripted(content=json.dumps(fill(schema, text="Let us meet halfway.")))


def _cli(store: Path, *args: str) -> Any:
    return CliRunner().invoke(app, ["--store", str(store), *args])


# ---- the pure function ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://user:pw@host:8000/v1", "http://***@host:8000/v1"),
        ("https://token@host/v1", "https://***@host/v1"),
        ("http://host/v1?api_key=abc&x=1", "http://host/v1?api_key=***&x=***"),
        ("http://host/v1?sig=abc&access_token=t", "http://host/v1?sig=***&access_token=***"),
        ("http://host/v1?X-Amz-Credential=abc", "http://host/v1?X-Amz-Credential=***"),
        ("http://host:8000/v1", "http://host:8000/v1"),
        ("http://host/v1?api-version=2024-01", "http://host/v1?api-version=2024-01"),
    ],
)
def test_userinfo_and_credential_query_values_are_hidden(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_urls_inside_text_are_redacted_and_other_text_is_left_alone() -> None:
    text = "model 'openai:m@http://u:p@h/v1': server error 500: see http://h/x?token=t"
    assert (
        redact(text)
        == "model 'openai:m@http://***@h/v1': server error 500: see http://h/x?token=***"
    )
    assert redact("no url here: user:pw@host") == "no url here: user:pw@host"


@given(
    user=st.text(alphabet="abcxyz019-_.", min_size=1, max_size=8),
    password=st.text(alphabet="abcXYZ019-_.~!$", min_size=4, max_size=16),
)
def test_a_password_never_survives_redaction(user: str, password: str) -> None:
    url = f"http://{user}:{password}@127.0.0.1:9/v1"
    assert password not in redact(f"openai:m@{url}").replace("127.0.0.1:9/v1", "")
    assert split_userinfo(url) == ("http://127.0.0.1:9/v1", (user, password))


def test_credentials_in_the_url_and_a_key_variable_in_a_profile_are_refused() -> None:
    from disputelab.llm.models import Profile

    profile = Profile(model="m", base_url=f"http://u:{SECRET}@h/v1", api_key_env="K")
    with pytest.raises(ModelConfigError, match="credentials twice") as exc:
        parse_model("p", {"p": profile})
    assert SECRET not in str(exc.value)


def test_config_errors_show_the_url_redacted() -> None:
    with pytest.raises(ModelConfigError) as exc:
        parse_model(f"openai:m@http://u:{SECRET}@h:99999/v1", {})
    assert "port" in str(exc.value) and SECRET not in str(exc.value)


# ---- end to end ----------------------------------------------------------------------


def _everything_written(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())


def test_url_credentials_authenticate_and_are_found_nowhere_after_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-that-must-not-be-sent")
    store = tmp_path / "runs"
    with fake_openai(answer) as server:
        host = server.url.removeprefix("http://")
        model = f"openai:test-model@http://alice:{SECRET}@{host}"
        results = [
            _cli(store, "run", "tenancy", "--model", model, "--mediator", "social", "--budget", "4")
        ]
        assert results[0].exit_code == 0, results[0].output
        spec = tmp_path / "spec.yaml"
        spec.write_text(
            f"name: grid\nscenarios: [tenancy]\nmediators: [social]\nparties: llm\n"
            f"models: {{parties: '{model}', mediator: '{model}'}}\nbudget: 2\n"
        )
        results.append(_cli(store, "experiment", str(spec), "--dry-run"))
        results.append(_cli(store, "experiment", str(spec)))
        results.append(_cli(store, "experiment", str(spec), "--resume"))
        assert [r.exit_code for r in results] == [0, 0, 0, 0], [r.output for r in results]
        auth = {h.get("Authorization") or h.get("authorization") for h in server.headers}
    # URL credentials win over the key variable, as documented.
    expected = "Basic " + base64.b64encode(f"alice:{SECRET}".encode()).decode()
    assert auth == {expected}
    reports = tmp_path / "reports"
    reports.mkdir()
    for run in ("last", "grid"):
        for fmt in ("md", "json", "csv", "parquet"):
            out = reports / f"{run}.{fmt}"
            r = _cli(store, "report", run, "--format", fmt, "--out", str(out))
            assert r.exit_code == 0, r.output
            results.append(r)
    results.append(_cli(store, "report", "grid", "--plots", str(reports / "plots")))
    results.append(_cli(store, "runs", "--format", "json"))
    for r in results:
        assert SECRET not in r.output
    captured = capfd.readouterr()
    assert SECRET not in captured.out + captured.err
    assert SECRET.encode() not in _everything_written(store)
    assert SECRET.encode() not in _everything_written(reports)
    # What is stored is still informative: the endpoint, with its userinfo hidden.
    db = sqlite3.connect(store / "disputelab.sqlite")
    (model_shown,) = {r[0] for r in db.execute("SELECT model FROM usage")}
    assert model_shown == f"openai:test-model@http://***@{host}"


def test_an_unreachable_endpoint_with_credentials_fails_without_showing_them(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "runs"
    model = f"openai:m@http://bob:{SECRET}@127.0.0.1:9/v1"
    r = _cli(store, "--timeout", "1", "run", "tenancy", "--model", model, "--budget", "2")
    assert r.exit_code == 2, r.output  # run reports a failed model as one line, status 2
    assert "cannot connect" in r.output
    captured = capfd.readouterr()
    assert SECRET not in r.output + captured.out + captured.err
    assert SECRET.encode() not in _everything_written(store)
