"""`disputelab view`: the store's reports in a browser, served read-only on this machine."""

from __future__ import annotations

from typing import Annotated

import typer

from disputelab.api.stores import is_loopback, listen_problem, report_server
from disputelab.cli.common import err, fail, open_store, out

DEFAULT_PORT = 8765


def view(
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to listen on; other than loopback, anyone who can reach it can read.",
        ),
    ] = "127.0.0.1",
    port: Annotated[
        int, typer.Option("--port", help="Port to listen on; 0 picks a free one.")
    ] = DEFAULT_PORT,
) -> None:
    """Serve the store's runs and their HTML reports, read-only, until Ctrl-C."""
    if not 0 <= port <= 65535:
        fail(f"--port must be from 0 to 65535, not {port}")
    if not host.strip():
        # An empty address binds every interface: say it, never do it by accident.
        fail("--host is empty; give an address (0.0.0.0 listens on every interface)")
    root = open_store(writable=False, create=False).root
    if not is_loopback(host):
        err.print(
            f"warning: listening on {host}, not loopback: anyone who can reach this machine "
            "can read every transcript in the store",
            highlight=False,
        )
    try:
        server = report_server(root, host, port)
    except (OSError, ValueError, OverflowError) as exc:  # ValueError: UnicodeError, a NUL
        fail(listen_problem(host, port, exc))
    out.print(
        f"serving the reports of {root} at {server.url} (read-only; Ctrl-C stops)", highlight=False
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
