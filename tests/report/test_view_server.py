"""`disputelab view`: the store's reports over HTTP, read-only and on loopback."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from disputelab.cli import app
from disputelab.report import serve
from disputelab.report.serve import ReportServer, is_loopback
from disputelab.store.sqlite import Store
from tests.report.pages import cli, embedded, fetch, motivated_run


@pytest.fixture(scope="module")
def store_with_a_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("view")
    return root, motivated_run(root, budget=10)


@pytest.fixture
def server(store_with_a_run: tuple[Path, str]) -> Iterator[ReportServer]:
    srv = ReportServer(store_with_a_run[0], quiet=True)  # loopback, a free port
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _request(
    srv: ReportServer, method: str, path: str, host: str | None = None
) -> tuple[int, dict[str, str], str]:
    return fetch(srv, path, method, host, timeout_s=60)


def test_it_listens_on_loopback_unless_told_otherwise(server: ReportServer) -> None:
    assert server.server_address[0] == "127.0.0.1"
    assert server.url.startswith("http://127.0.0.1:") and server.server_address[1] > 0


def test_the_index_lists_the_runs_and_links_each_report(
    server: ReportServer, store_with_a_run: tuple[Path, str]
) -> None:
    status, headers, body = _request(server, "GET", "/")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert f'href="/run/{store_with_a_run[1]}"' in body


def test_a_run_page_is_that_runs_html_report(
    server: ReportServer, store_with_a_run: tuple[Path, str]
) -> None:
    status, _, body = _request(server, "GET", f"/run/{store_with_a_run[1]}")
    assert status == 200
    assert embedded(body, "report-meta")["count"] == 2
    again = _request(server, "GET", f"/run/{store_with_a_run[1]}")[2]
    assert again == body  # kept, not rendered again, while the run is unchanged


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_methods_that_could_change_anything_are_refused(server: ReportServer, method: str) -> None:
    status, headers, _ = _request(server, method, "/")
    assert status == 405 and headers["Allow"] == "GET, HEAD"


def test_unknown_runs_and_paths_are_not_found(server: ReportServer) -> None:
    assert _request(server, "GET", "/run/no-such-run")[0] == 404
    assert _request(server, "GET", "/etc/passwd")[0] == 404


def test_a_request_naming_another_host_is_refused(server: ReportServer) -> None:
    # What a web page that rebinds its own name to 127.0.0.1 would send.
    assert _request(server, "GET", "/", host="attacker.example")[0] == 421
    assert _request(server, "GET", "/", host=f"localhost:{server.server_address[1]}")[0] == 200


def test_loopback_names_are_told_from_other_addresses() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.8.0.1", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "192.168.1.5", "example.org", ""]))


class _FakeServer:
    """Stands in for the server: records where it was asked to listen, then stops as
    Ctrl-C would stop it."""

    made: ClassVar[list[tuple[Any, ...]]] = []

    def __init__(self, root: Path, host: str, port: int) -> None:
        _FakeServer.made.append((root, host, port))
        self.url = f"http://{host}:{port or 43210}/"

    def serve_forever(self) -> None:
        raise KeyboardInterrupt

    def server_close(self) -> None:
        pass


def test_the_view_command_warns_when_it_listens_beyond_loopback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(serve, "ReportServer", _FakeServer)
    Store(tmp_path).close()
    quiet = CliRunner().invoke(app, ["--store", str(tmp_path), "view", "--port", "0"])
    assert quiet.exit_code == 0, quiet.output
    assert "http://127.0.0.1:43210/" in quiet.output and "warning" not in quiet.output
    loud = CliRunner().invoke(app, ["--store", str(tmp_path), "view", "--host", "0.0.0.0"])
    assert loud.exit_code == 0 and "warning: listening on 0.0.0.0, not loopback" in loud.output
    assert [m[1:] for m in _FakeServer.made[-2:]] == [("127.0.0.1", 0), ("0.0.0.0", 8765)]


def test_the_view_command_refuses_a_port_out_of_range(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["--store", str(tmp_path), "view", "--port", "70000"])
    assert r.exit_code == 2 and "--port must be from 0 to 65535" in r.output


@pytest.mark.parametrize("host", ["", "  "])
def test_the_view_command_refuses_an_empty_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    # An empty address would bind every interface, silently.
    monkeypatch.setattr(serve, "ReportServer", _FakeServer)
    Store(tmp_path).close()
    made = len(_FakeServer.made)
    r = CliRunner().invoke(app, ["--store", str(tmp_path), "view", "--host", host])
    assert r.exit_code == 2 and "--host is empty" in r.output
    assert len(_FakeServer.made) == made


def test_report_writes_the_html_page_with_format_html(
    store_with_a_run: tuple[Path, str], tmp_path: Path
) -> None:
    root, run_id = store_with_a_run
    out = tmp_path / "report.html"
    cli(root, "report", run_id, "--format", "html", "--out", str(out))
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and embedded(page, "report-meta")["count"] == 2
