#!/usr/bin/env python3
"""Photograph the two party pages of a hosted `tenancy` table at one turn, as the docs
show them (docs/img/host-tenant.png and docs/img/host-landlord.png):

    python scripts/host_screenshots.py docs/img [--store DIR]

It plays what tests/web/test_host_browser.py plays: `disputelab host tenancy` with the
rule mediator in a process of its own (its store a temporary folder, or `--store DIR` to
keep the episode for `disputelab --store DIR report last`), two people in two
windows of a headless Chromium (Debian's `chromium` and `chromium-driver`, and
`pip install '.[browser,host]'`), each agreeing to the consent and moving through the
page's controls until the episode is resolved, then answering the questionnaire. As
the tenant is asked their second move, both whole pages are saved: the tenant's with
its form (and, under `--turn-seconds 600`, its deadline and default move), the
landlord's waiting, each with its own party's private brief.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="where to write the two PNGs")
    parser.add_argument("--store", type=Path, help="keep the run here (default: a temp folder)")
    args = parser.parse_args()
    folder = args.folder
    sys.path.insert(0, str(REPO))  # the browser steps are the test's own
    try:
        from tests.live_browser import NoBrowser
        from tests.web.host_pages import SEATS
    except ImportError as exc:  # selenium, or the host extra
        print(f"host_screenshots: {exc}; pip install '.[browser,host]'", file=sys.stderr)
        return 2
    folder.mkdir(parents=True, exist_ok=True)
    paths = {s: folder / f"host-{s.split(':')[1]}.png" for s in SEATS}
    try:
        _shoot(paths, args.store)
    except NoBrowser as exc:
        print(f"host_screenshots: {exc}", file=sys.stderr)
        return 2
    for path in paths.values():
        print(path)
    return 0


def _shoot(paths: dict[str, Path], keep: Path | None) -> None:
    from tests.live_browser import headless_chromium
    from tests.web.host_pages import (
        SHOT_AT,
        answer_questions,
        hosted,
        negotiate,
        photograph,
        take_seats,
    )

    with (
        headless_chromium(width=1000) as driver,
        tempfile.TemporaryDirectory() as scratch,
        hosted(keep or Path(scratch), "--turn-seconds", "600") as (server, links),
    ):
        windows = take_seats(driver, links)

        def before(n: int, seat: str) -> None:
            if n == SHOT_AT:
                photograph(driver, windows, seat, paths)

        negotiate(driver, windows, before)
        answer_questions(driver, windows)
        server.communicate(timeout=300)  # it stops once both have answered


if __name__ == "__main__":
    sys.exit(main())
