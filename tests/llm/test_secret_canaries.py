"""Secrets are masked wherever text is written (issue 46, item 3).

Canaries are planted in the API key, in a model URL's password and under several query
names. A provider that echoes the key it was sent, in an error body and in a reply, then
drives a failing and two succeeding runs; every file the runs wrote (store, cache,
reports in every format, the viewer's pages) and everything printed is searched for each
canary. What is shown instead is still useful: the endpoint, with `***` in their place.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.llm.testing import FakeOpenAI, Scripted, fake_openai, fill, requested_schema
from disputelab.redact import HIDDEN, redact, redact_url, remember_secret
from disputelab.report.serve import ReportServer
from disputelab.store.sqlite import Store

KEY = "sk-canary-k3y-0001"
PASSWORD = "canary-pa55-0002"
QUERY = {"sk": "canary-q-sk-0003", "deployment_token": "canary-q-dt-0004", "x": "canary-x-0005"}
CANARIES = (KEY, PASSWORD, *QUERY.values())


def _query() -> str:
    return "&".join(f"{k}={v}" for k, v in QUERY.items())


def _echoing(server: list[FakeOpenAI], fail: bool) -> Any:
    """A provider that quotes the credentials it received back at the caller, as real
    ones quote part of a wrong key."""

    def reply(body: dict[str, Any]) -> Scripted:
        headers = server[0].headers[-1]
        auth = headers.get("Authorization") or headers.get("authorization") or ""
        if fail:
            message = f"bad request from {auth}: key {KEY} is not valid for ?sk={QUERY['sk']}"
            raw = json.dumps({"error": {"message": message}}).encode()
            return Scripted(status=401, raw=raw)
        said = f"As my key {KEY} says, let us split it."
        return Scripted(content=json.dumps(fill(requested_schema(body), text=said)))

    return reply


def _cli(store: Path, *args: str) -> Any:
    return CliRunner().invoke(app, ["--store", str(store), *args])


def _run(store: Path, fail: bool, url_of: Any) -> list[Any]:
    holder: list[FakeOpenAI] = []
    with fake_openai(_echoing(holder, fail)) as server:
        holder.append(server)
        model = f"openai:test-model@{url_of(server)}"
        given = store.parent / "input"  # the user's own files: not searched
        given.mkdir(exist_ok=True)
        n = len(list(given.glob("spec-*")))
        spec = given / f"spec-{n}.yaml"
        spec.write_text(
            f"name: canary-{n}\nscenarios: [tenancy]\nmediators: [social]\nparties: llm\n"
            f"models: {{parties: '{model}', mediator: '{model}'}}\nbudget: 2\nreplicates: 1\n"
        )
        return [
            _cli(
                store, "run", "tenancy", "--model", model, "--mediator", "social", "--budget", "2"
            ),
            _cli(store, "experiment", str(spec), "--concurrency", "1"),
        ]


def _reports(store: Path, out: Path) -> list[Any]:
    results = []
    for fmt in ("md", "json", "csv", "html"):
        results.append(
            _cli(store, "report", "last", "--format", fmt, "--out", str(out / f"r.{fmt}"))
        )
    results.append(_cli(store, "runs", "--format", "json"))
    return results


def _viewer_pages(store: Path) -> str:
    import http.client

    srv = ReportServer(store, quiet=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        s = Store(store, writable=False)
        paths = ["/", *(f"/run/{r['run_id']}" for r in s.runs())]
        s.close()
        pages = []
        for path in paths:
            conn = http.client.HTTPConnection("127.0.0.1", srv.server_address[1], timeout=60)
            conn.request("GET", path)
            pages.append(conn.getresponse().read().decode())
            conn.close()
        return "".join(pages)
    finally:
        srv.shutdown()
        srv.server_close()


def test_canaries_in_the_key_url_password_and_query_are_found_nowhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    store, out = tmp_path / "runs", tmp_path / "out"
    out.mkdir()
    with_query = lambda s: f"{s.url}?{_query()}"  # noqa: E731
    with_password = lambda s: s.url.replace("://", f"://alice:{PASSWORD}@") + f"?{_query()}"  # noqa: E731
    failing = _run(store, True, with_query)
    assert failing[0].exit_code == 2 and failing[1].exit_code != 0, [r.output for r in failing]
    assert "401" in failing[0].output and HIDDEN in failing[0].output
    passing = _reports(store, out)
    passing += _run(store, False, with_query) + _run(store, False, with_password)
    passing += _reports(store, out)
    assert all(r.exit_code == 0 for r in passing), [r.output for r in passing if r.exit_code]
    results = failing + passing
    printed = "".join(r.output for r in results) + "".join(capfd.readouterr())
    files = [p for p in sorted(tmp_path.rglob("*")) if p.is_file() and "input" not in p.parts]
    written = b"".join(p.read_bytes() for p in files)
    viewer = _viewer_pages(store)
    for canary in CANARIES:
        assert canary not in printed, canary
        assert canary.encode() not in written, canary
        assert canary not in viewer, canary
    # Still informative: the endpoint is named, with the secrets hidden.
    assert "sk=***" in viewer and "127.0.0.1" in viewer


def test_every_query_value_of_a_url_is_hidden_whatever_its_name() -> None:
    shown = redact_url(f"http://h/v1?{_query()}&api-version=2024-06-01")
    assert shown == "http://h/v1?sk=***&deployment_token=***&x=***&api-version=2024-06-01"


def test_a_remembered_secret_is_masked_in_any_text_and_bearer_tokens_always_are() -> None:
    remember_secret("canary-remembered-0006")
    assert redact("echo: canary-remembered-0006!") == "echo: ***!"
    assert redact("from Bearer sk-whatever.123 at noon") == "from Bearer *** at noon"
    remember_secret("1")  # too short to mask without mangling ordinary text
    assert redact("turn 1 of 10") == "turn 1 of 10"
