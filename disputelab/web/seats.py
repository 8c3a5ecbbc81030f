"""A person's seat in a browser: `WebMoves`, the move source that waits for the seat's
form, and `Invite`, the link that opens it.

A seat's page and the episode meet here. The episode (in the server's event loop) asks
`WebMoves.move(prompt)`; the prompt is kept for the page to show and the call waits for
`answer(form)`, which validates the post with `moves.validate` and either resolves the
wait with the `Move` or keeps the `MoveError.reason` for the page to show (the prompt
stays asked). Between its moves the seat's `hear` keeps the dialogue as delivered to
that seat (and its brief) up to date, turn by turn, so a waiting page shows the others
speaking. Every change bumps `version`, which the page's event stream announces.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import secrets
import time
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import Any

from disputelab.humans.moves import MoveError, default_shown, validate
from disputelab.humans.prompt import Line, Move, PickField, SeatPrompt, SeatRef, TextField
from disputelab.humans.source import Withdrawn


def token_hash(token: str) -> str:
    """What is kept of a token: its SHA-256, so a leaked memory dump or log line of the
    table holds no working link."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass
class Invite:
    """One seat's invite: the hash of its token, when it expires (a monotonic clock
    reading) and the browser session bound to it on first open."""

    seat: str
    participant: str
    digest: str
    expires_at: float
    session: str = ""
    consented: bool = False
    answered: bool = False
    withdrawn: bool = False  # left the study (`Leave the study`)

    @classmethod
    def new(cls, seat: str, participant: str, minutes: float) -> tuple[Invite, str]:
        """An invite and its token (the only time the token is seen in the clear)."""
        token = secrets.token_urlsafe(24)
        expires = time.monotonic() + minutes * 60
        return cls(seat, participant, token_hash(token), expires), token

    def opens_with(self, token: str) -> bool:
        return hmac.compare_digest(self.digest, token_hash(token))

    def expired(self) -> bool:
        return time.monotonic() >= self.expires_at

    def bind(self, session: str) -> bool:
        """Bind the first browser session to open the seat; True when `session` is the
        bound one (only one live session per seat)."""
        if not self.session:
            self.session = session
        return hmac.compare_digest(self.session, session)


@dataclass
class WebMoves:
    """A seat's move source: the prompt asked now, what the seat has heard (its name, its
    brief and the dialogue as delivered to it, kept up to date by `hear`), and the reason
    the last post was refused.

    With `turn_seconds`, a move not made in time is the seat's default move (what an
    empty form, or Enter at a terminal, plays), kept in `defaults`; the clock starts
    once the move is asked and the person has consented (`present`). A move with no
    default (a field that needs an answer) waits without a clock."""

    seat: str
    turn_seconds: float = 0.0  # 0: no deadline
    prompt: SeatPrompt | None = None
    name: str = ""  # how the table calls the seat's occupant, once the seat has heard
    brief: str = ""
    heard: tuple[Line, ...] = ()
    error: str = ""
    version: int = 0
    deadline: float = 0.0  # when the asked move is due (time.time()), for the page; 0: none
    default: Move | None = None  # what the asked move becomes at its deadline
    defaults: list[SeatPrompt] = field(default_factory=list)  # the moves the clock made
    left: str = ""  # the participant who withdrew: every move from now on stops the episode
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    present: asyncio.Event = field(default_factory=asyncio.Event)
    _waiting: asyncio.Future[Move] | None = None

    def hear(self, seat: SeatRef, brief: str, transcript: tuple[Line, ...]) -> None:
        """The seat's dialogue after a turn (only its own view): the page reloads."""
        self.name, self.brief, self.heard = seat.name, brief, transcript
        self.bump()

    async def move(self, prompt: SeatPrompt) -> Move:
        if self.left:
            raise Withdrawn(self.left)
        self.prompt = prompt
        self.name, self.brief, self.heard = prompt.seat.name, prompt.brief, prompt.transcript
        self.error = ""
        self.default = _default_move(prompt) if self.turn_seconds else None
        if self.default is not None and self.present.is_set():  # stated with the form
            self.deadline = time.time() + self.turn_seconds
        self._waiting = asyncio.get_running_loop().create_future()
        self.bump()
        try:
            return await self._answered(prompt, self._waiting)
        finally:
            self.prompt, self._waiting, self.deadline, self.default = None, None, 0.0, None
            self.bump()

    async def _answered(self, prompt: SeatPrompt, waiting: asyncio.Future[Move]) -> Move:
        """The posted move, or the default one once the clock has run out."""
        if self.default is None:
            return await waiting
        if not self.deadline:  # asked before the person came: the clock starts at consent
            await _first(waiting, self.present.wait())
            if waiting.done():
                return waiting.result()
            self.deadline = time.time() + self.turn_seconds
            self.bump()  # the page shows the deadline
        try:
            left = max(0.0, self.deadline - time.time())
            return await asyncio.wait_for(asyncio.shield(waiting), left)
        except TimeoutError:
            waiting.cancel()  # a post from now on is refused as out of turn
            self.defaults.append(prompt)
            self.error = "The time for your move ran out; your seat made its default move."
            return self.default

    def answer(self, form: Mapping[str, object]) -> str:
        """Play the posted answers if they validate; the refusal's reason otherwise
        ('' when played). A post with no move asked is refused too."""
        if self.prompt is None or self._waiting is None or self._waiting.done():
            return "no move is asked of you now; wait for your turn"
        try:
            move = validate(self.prompt, form)
        except MoveError as exc:
            self.error = exc.reason
            self.bump()
            return exc.reason
        self._waiting.set_result(move)
        return ""

    def bump(self) -> None:
        """Tell the page's event stream that something changed."""
        self.version += 1
        self.changed.set()
        self.changed = asyncio.Event()

    def withdraw(self, participant: str) -> None:
        """`participant` left the study: a wait still open, or the next move, stops the
        episode (`Withdrawn`)."""
        self.left = participant
        if self._waiting is not None and not self._waiting.done():
            self._waiting.set_exception(Withdrawn(participant))

    def stop(self) -> None:
        """The server is closing: a wait still open ends the episode as Ctrl-C does."""
        if self._waiting is not None and not self._waiting.done():
            self._waiting.set_exception(KeyboardInterrupt())


def _default_move(prompt: SeatPrompt) -> Move | None:
    """The move an empty form makes (every field's default), or None where a field
    needs an answer."""
    try:
        return validate(prompt, {})
    except MoveError:
        return None


async def _first(waiting: asyncio.Future[Move], other: Awaitable[Any]) -> None:
    """Until `waiting` is done or `other` is (whichever first); `other` is dropped."""
    gate: asyncio.Future[Any] = asyncio.ensure_future(other)
    both: set[asyncio.Future[Any]] = {gate, waiting}
    try:
        await asyncio.wait(both, return_when=asyncio.FIRST_COMPLETED)
    finally:
        gate.cancel()


def default_words(prompt: SeatPrompt, default: Move) -> list[str]:
    """The default move in words, a line per field asked: what the deadline plays."""
    out = []
    for f in prompt.fields:
        value = default.values.get(f.key)
        if value is None or value == "" or value == ():
            shown = default_shown(f) if isinstance(f, TextField) else "none"
        elif isinstance(f, PickField) and isinstance(value, tuple):
            labels = {o.id: o.label for o in f.options}
            backed, *also = (labels.get(v, v) for v in value)
            shown = backed + (f" (also accepting: {'; '.join(also)})" if also else "")
        else:
            shown = str(value)
        out.append(f"{f.label}: {shown}")
    return out
