"""The `disputelab view` server: a store's reports in a browser, read-only.

`/` lists the store's runs; `/run/<id>` is that run's HTML report, rendered on demand and
kept while the run does not change; `/compare?run=A&run=B&by=run&metric=M` is the
leaderboard `disputelab compare` makes of those runs, kept the same way. A query that
cannot be answered (an unknown run or parameter, one run by run) is a 400 page saying
why. GET and HEAD are the only methods; any method that could change something is
answered 405. The store is opened read-only for each request,
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
from urllib.parse import parse_qs, unquote, urlsplit

from disputelab.compare import BY, CompareError
from disputelab.report.html import compare_html, index_html, run_html
from disputelab.store.sqlite import Store, StoreError

LOOPBACK = "127.0.0.1"
KEPT_REPORTS = 4  # rendered reports kept in memory; a 2,000-episode one is ~20 MB
COMPARE_PARAMETERS = ("run", "by", "metric")
MAX_FIELDS = 200  # a query's parameters, well past any number of runs a page could tick


class BadQuery(ValueError):
    """A `/compare` query that cannot be answered; the message is the 400 page's line."""


def compare_query(query: str) -> tuple[list[str], str, str | None]:
    """The runs, `by` and metric a `/compare` query string names. `by` defaults to
    `model`, as `disputelab compare` does; BadQuery says what is wrong with one."""
    try:
        params = parse_qs(
            query, keep_blank_values=True, strict_parsing=bool(query), max_num_fields=MAX_FIELDS
        )
    except ValueError as exc:
        raise BadQuery(f"the query cannot be read: {exc}") from None
    unknown = sorted(set(params) - set(COMPARE_PARAMETERS))
    if unknown:
        raise BadQuery(f"unknown parameter {unknown[0]!r}; use run, by and metric")
    for name in ("by", "metric"):
        if len(params.get(name, [])) > 1:
            raise BadQuery(f"give {name} once, not {len(params[name])} times")
    by = params.get("by", ["model"])[0]
    if by not in BY:
        raise BadQuery(f"by: unknown {by!r}; use {', '.join(BY)}")
    runs = params.get("run", [])
    if not runs:
        raise BadQuery("give the runs to compare: /compare?run=A&run=B")
    return runs, by, params.get("metric", [""])[0].strip() or None


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
        if path == "/compare":
            return self._compare(urlsplit(self.path).query)
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

    def _compare(self, query: str) -> tuple[HTTPStatus, bytes]:
        try:
            refs, by, metric = compare_query(query)
            with closing(Store(self.server.root, writable=False)) as store:
                ids = _resolved(store, refs)
                if by == "run" and len(ids) < 2:
                    raise BadQuery(f"by run: give two or more runs, not {len(ids)}")
                runs = {r["run_id"]: r for r in store.runs()}
                key = (
                    "compare",
                    by,
                    metric,
                    *(
                        (i, runs[i]["episodes"], runs[i]["complete"], runs[i]["failed"])
                        for i in ids
                    ),
                )
                return HTTPStatus.OK, self.server.report(
                    "compare", key, lambda: compare_html(store, ids, by, metric)
                )
        except (BadQuery, CompareError) as exc:
            return HTTPStatus.BAD_REQUEST, _page(str(exc))

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


def _resolved(store: Store, refs: list[str]) -> list[str]:
    """The run ids `refs` name (ids, unique prefixes, labels or `last`), each once."""
    try:
        return list(dict.fromkeys(store.resolve_run(r) for r in refs))
    except StoreError as exc:  # only what names no run, or more than one
        raise BadQuery(str(exc)) from None


def _page(message: str) -> bytes:
    return (
        "<!doctype html><meta charset='utf-8'><title>disputelab view</title>"
        f"<p>{escape(message)}</p><p><a href='/'>All runs</a></p>"
    ).encode()
