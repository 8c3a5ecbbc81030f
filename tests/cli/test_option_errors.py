"""An option whose value fails downstream is named in the one-line error (issue 46,
item 7): `view --host 999.1.1.1` used to fail with the resolver's words alone."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from disputelab.cli import app


def _run(store: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, ["--store", str(store), *args])
    return r.exit_code, " ".join(r.output.split())


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("options") / "runs"
    code, text = _run(root, "run", "tenancy", "--budget", "2")
    assert code == 0, text
    return root


def _one_error(code: int, text: str, *needles: str) -> None:
    assert code == 2, text
    assert text.count("error:") == 1 and "Traceback" not in text, text
    for needle in needles:
        assert needle in text, text


@pytest.mark.parametrize("host", ["999.1.1.1", "no-such-host.invalid", "8.8.8.8", "a" * 300])
def test_a_host_that_cannot_be_listened_on_names_host(store: Path, host: str) -> None:
    _one_error(*_run(store, "view", "--host", host, "--port", "0"), f"--host {host[:40]}")


def test_a_port_in_use_names_port(store: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = str(taken.getsockname()[1])
        _one_error(*_run(store, "view", "--port", port), f"--port {port}", "in use")
    finally:
        taken.close()


@pytest.mark.parametrize("fmt", ["md", "parquet"])
def test_a_report_file_that_cannot_be_written_names_out(
    store: Path, tmp_path: Path, fmt: str
) -> None:
    out = tmp_path / "missing-folder" / f"r.{fmt}"
    _one_error(*_run(store, "report", "last", "--format", fmt, "--out", str(out)), f"--out {out}")


def test_a_model_url_with_an_impossible_address_says_so_not_proxy(store: Path) -> None:
    model = "openai:m@http://999.1.1.1:9/v1"
    code, text = _run(store, "run", "tenancy", "--model", model, "--budget", "2")
    _one_error(code, text, "999.1.1.1", "not a valid IPv4 address")
    assert "proxy" not in text
