"""The `disputelab view` server: a store's reports in a browser, read-only.

`/` lists the store's runs; `/run/<id>` is that run's HTML report, rendered on demand and
kept while the run does not change. GET and HEAD are the only methods; any method that
could change something is answered 405. The store is opened read-only for each request,
in the thread that serves it (SQLite connections stay in their own thread).

Bound to loopback, the server also refuses requests whose Host header names another
host, so a web page that rebinds its own name to 127.0.0.1 cannot read the reports.
"""

from __future__ import annotations

import errno
import ipaddress
import socket
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable
from contextlib import closing
from html import escape
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from disputelab.report.html import index_html, run_html
from disputelab.store.sqlite import Store, StoreError

LOOPBACK = "127.0.0.1"
KEPT_REPORTS = 4  # rendered reports kept in memory; a 2,000-episode one is ~20 MB


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def listen_problem(host: str, port: int, exc: BaseException) -> str:
    """Why `ReportServer(host, port)` failed, in one line naming the option at fault."""
    why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    number = getattr(exc, "errno", None)
    shown = host[:60] + ("..." if len(host) > 60 else "")
    if number == errno.EADDRINUSE:
        return f"--port {port}: already in use on {shown}; pick another, or 0 for a free one"
    if number == errno.EACCES:
        return f"--port {port}: not permitted ({why}); ports below 1024 need privileges"
    if isinstance(exc, socket.gaierror | UnicodeError | ValueError) or number in (
        errno.EADDRNOTAVAIL,
        errno.EAFNOSUPPORT,
    ):
        return (
            f"--host {shown}: cannot listen there ({why}); give an address of this machine "
            "(127.0.0.1, or 0.0.0.0 for every interface)"
        )
    return f"--host {shown} --port {port}: cannot listen ({why})"


class ReportServer(ThreadingHTTPServer):
    """Serves the reports of the store at `root`; port 0 picks a free port."""

    daemon_threads = True

    def __init__(self, root: Path, host: str = LOOPBACK, port: int = 0, quiet: bool = False):
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host.strip("[]"), port), _Handler)
        self.root = Path(root)
        self.quiet = quiet
        self.loopback = is_loopback(host)
        self._kept: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        host, port = str(self.server_address[0]), int(self.server_address[1])
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/"

    def allowed_host(self, header: str | None) -> bool:
        if not self.loopback:
            return True  # whoever binds elsewhere has chosen to be reached by any name
        if header is None:
            return False
        name = urlsplit(f"//{header}").hostname or ""
        return is_loopback(name)

    def report(self, run_id: str, key: tuple[Any, ...], render: Callable[[], str]) -> bytes:
        """The run's report, rendered again only when its episodes have changed."""
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        page = render().encode("utf-8")
        with self._lock:
            self._kept[key] = page
            while len(self._kept) > KEPT_REPORTS:
                self._kept.popitem(last=False)
        return page


class _Handler(BaseHTTPRequestHandler):
    server: ReportServer
    server_version = "disputelab-view"

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def _refuse(self) -> None:
        self._send(
            HTTPStatus.METHOD_NOT_ALLOWED, _page("Read-only: only GET."), {"Allow": "GET, HEAD"}
        )

    do_POST = do_PUT = do_PATCH = do_DELETE = _refuse

    def log_message(self, format: str, *args: Any) -> None:
        if not self.server.quiet:
            super().log_message(format, *args)

    def _answer(self, body: bool) -> None:
        if not self.server.allowed_host(self.headers.get("Host")):
            self._send(HTTPStatus.MISDIRECTED_REQUEST, _page("Unknown host."), body=body)
            return
        path = urlsplit(self.path).path
        try:
            status, page = self._route(path)
        except (StoreError, sqlite3.Error) as exc:
            status, page = HTTPStatus.INTERNAL_SERVER_ERROR, _page(f"The store failed: {exc}")
        self._send(status, page, body=body)

    def _route(self, path: str) -> tuple[HTTPStatus, bytes]:
        if path == "/":
            with closing(Store(self.server.root, writable=False)) as store:
                page = index_html(str(self.server.root), store.runs())
            return HTTPStatus.OK, page.encode("utf-8")
        if path.startswith("/run/"):
            run_id = unquote(path.removeprefix("/run/"))
            with closing(Store(self.server.root, writable=False)) as store:
                run = next((r for r in store.runs() if r["run_id"] == run_id), None)
                if run is None:
                    return HTTPStatus.NOT_FOUND, _page(f"No run {run_id!r} in this store.")
                key = (run_id, run["episodes"], run["complete"], run["failed"])
                return HTTPStatus.OK, self.server.report(
                    run_id, key, lambda: run_html(store, run_id)
                )
        return HTTPStatus.NOT_FOUND, _page("Not found.")

    def _send(
        self,
        status: HTTPStatus,
        page: bytes,
        headers: dict[str, str] | None = None,
        body: bool = True,
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Content-Security-Policy", "frame-ancestors 'none'")
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if body:
            self.wfile.write(page)


def _page(message: str) -> bytes:
    return (
        "<!doctype html><meta charset='utf-8'><title>disputelab view</title>"
        f"<p>{escape(message)}</p><p><a href='/'>All runs</a></p>"
    ).encode()
