"""A person's seat at a terminal: `TerminalMoves` prints what the seat has heard since
its last move, then asks each choice of the move on a line of its own.

Enter alone takes the default shown in brackets (holding one's last position, a
sensible first move), so that a scripted terminal can play an episode through. `?`
explains the choice at hand, `?brief` shows the seat's brief again and `?log` the whole
dialogue as the seat heard it. An answer a choice cannot take is refused with a one-line
reason and asked again. Ctrl-C (or the end of input) stops the episode where it is, as
an interrupted run stops: the finished turns are in the store and it can be resumed.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from disputelab.humans.moves import MoveError, asked, default_shown, field_help, parse, validate
from disputelab.humans.prompt import Field, Line, Move, PickField, SeatPrompt, Value

HELP, BRIEF, LOG = "?", "?brief", "?log"
RULE_LINE = "-" * 60


def _print(text: str) -> None:
    print(text, flush=True)


@contextmanager
def _interruptible() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt at once while the person is typing: an event
    loop's own handler would only cancel its task once the line was entered."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _read_line(prompt: str) -> str:
    with _interruptible():
        try:
            return input(prompt)
        except EOFError:
            _print("")
            raise KeyboardInterrupt from None  # the input has ended: stop as Ctrl-C does


@dataclass
class TerminalMoves:
    """A move source that asks at a terminal (or any pair of line functions)."""

    read: Callable[[str], str] = _read_line
    write: Callable[[str], None] = _print
    heard: dict[str, int] = field(default_factory=dict)  # seat -> last turn index shown
    explained: set[str] = field(default_factory=set)  # choices whose options were shown

    async def move(self, prompt: SeatPrompt) -> Move:
        self.catch_up(prompt)
        where = f" (party turn {prompt.turn + 1} of {prompt.budget})" if prompt.budget else ""
        self.write(f"--- {prompt.seat.name}: {prompt.ask}{where} ---")
        values: dict[str, Value] = {}
        for f in prompt.fields:
            if asked(f, values):
                values[f.key] = self.answer(prompt, f)
        return validate(prompt, values)

    def catch_up(self, prompt: SeatPrompt) -> None:
        """The brief, the first time a seat is asked, and what it heard since."""
        key = prompt.seat.key
        if key not in self.heard:
            self.write(RULE_LINE)
            self.write(prompt.brief)
            self.write(RULE_LINE)
            self.write(
                "Enter takes the choice in brackets; ? explains a choice, ?brief "
                "shows your brief, ?log the dialogue."
            )
        last = self.heard.get(key, -1)
        for line in prompt.transcript:
            if line.index > last:
                self.write(self.said(line))
        self.heard[key] = prompt.transcript[-1].index if prompt.transcript else last

    def said(self, line: Line) -> str:
        who = "You" if line.mine else line.name
        text = line.text.replace("\n", "\n      ")
        return f"  {who}: {text}"

    def answer(self, prompt: SeatPrompt, f: Field) -> Value:
        """Ask `f` until what is typed is an answer it takes."""
        if isinstance(f, PickField) and f.key not in self.explained:
            self.explained.add(f.key)
            self.write(f"{f.label}: " + "; ".join(f"{o.id}) {o.label}" for o in f.options))
        while True:
            shown = default_shown(f)
            raw = self.read(f"{f.label} [{shown}]: " if shown else f"{f.label}: ")
            command = raw.strip().lower()
            if command == HELP:
                for text in field_help(f):
                    self.write(f"  {text}")
            elif command == BRIEF:
                self.write(prompt.brief)
            elif command == LOG:
                for line in prompt.transcript:
                    self.write(self.said(line))
            else:
                try:
                    return parse(f, raw)
                except MoveError as exc:
                    self.write(f"  ! {exc.reason} (? for help)")
