"""Progress for long commands: a live bar on a terminal, plain lines when output goes to a
file or a pipe (at most one every few seconds), so a run under nohup still shows it is
alive. Each shows work done of the total, model calls and elapsed time."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from disputelab.cli.common import err

if TYPE_CHECKING:
    from disputelab.api import ModelHub

PLAIN_EVERY_S = 5.0
BEAT_EVERY_S = 1.0  # how often the heartbeat looks; plain lines still come every 5 s


class Ticker:
    """Counts work done; says so on a terminal bar or in plain lines."""

    def __init__(self, what: str, hub: ModelHub | None, progress: Progress | None) -> None:
        self.what = what
        self.hub = hub
        self.progress = progress
        # Until the total is known the work is still being planned, and says so.
        self.task = (
            progress.add_task(f"{what} (planning)", total=None, note="") if progress else None
        )
        self.total: int | None = None
        self.done = 0
        self.failed = 0
        self.started = time.monotonic()
        self.last_line = self.started  # quick work prints no line at all
        self.lines = 0

    def plan(self, total: int) -> None:
        self.total = total
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, total=total, description=self.what)
        else:
            self._line()

    def advance(self, failed: bool = False) -> None:
        self.done += 1
        self.failed += failed
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, advance=1, note=self.note())
        else:
            # The last line once the work is done, if earlier lines were printed.
            self._line(force=self.done == self.total and self.lines > 0)

    def note(self) -> str:
        parts = [f"failed {self.failed}"] if self.failed else []
        if self.hub is not None and self.hub.ledger.roles:
            roles = self.hub.ledger.roles.values()
            calls = sum(u.calls for u in roles)
            cached = sum(u.cached for u in roles)
            parts.append(f"{calls} model calls, {cached} from cache")
        generating = _model_activity()
        if generating is not None:
            parts.append(generating)
        return "; ".join(parts)

    def beat(self) -> None:
        """Say the work is alive while nothing finishes: a long model call in flight."""
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, note=self.note())
        else:
            self._line()

    def _line(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last_line < PLAIN_EVERY_S:
            return
        self.last_line = now
        self.lines += 1
        of = f" of {self.total}" if self.total is not None else ""
        note = self.note()
        note = f"; {note}" if note else ""
        err.print(
            f"{self.what}: {self.done}{of} done{note}; {now - self.started:.0f} s",
            highlight=False,
            soft_wrap=True,
        )


def _model_activity() -> str | None:
    """What the embedded model is generating now, if it is loaded and busy."""
    import sys

    local = sys.modules.get("disputelab.llm.local")  # never imported just to ask
    return None if local is None else local.local_activity()


@contextmanager
def heartbeat(t: Ticker, every_s: float = BEAT_EVERY_S) -> Iterator[None]:
    """Beat `t` every few seconds from a thread while the block runs."""
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(every_s):
            t.beat()

    thread = threading.Thread(target=beat, name="progress-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=every_s)


@contextmanager
def ticker(what: str, hub: ModelHub | None = None, transient: bool = False) -> Iterator[Ticker]:
    """A Ticker that draws a bar on a terminal (gone when done, if `transient`) and writes
    plain lines otherwise, with a heartbeat so that a long model call shows progress."""
    if not err.is_terminal:
        t = Ticker(what, hub, None)
        with heartbeat(t):
            yield t
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[note]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=transient,
    ) as progress:
        t = Ticker(what, hub, progress)
        with heartbeat(t):
            yield t
