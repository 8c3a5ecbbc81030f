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
from collections.abc import Mapping
from dataclasses import dataclass, field

from disputelab.humans.moves import MoveError, validate
from disputelab.humans.prompt import Line, Move, SeatPrompt, SeatRef


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
    the last post was refused."""

    seat: str
    prompt: SeatPrompt | None = None
    name: str = ""  # how the table calls the seat's occupant, once the seat has heard
    brief: str = ""
    heard: tuple[Line, ...] = ()
    error: str = ""
    version: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    _waiting: asyncio.Future[Move] | None = None

    def hear(self, seat: SeatRef, brief: str, transcript: tuple[Line, ...]) -> None:
        """The seat's dialogue after a turn (only its own view): the page reloads."""
        self.name, self.brief, self.heard = seat.name, brief, transcript
        self.bump()

    async def move(self, prompt: SeatPrompt) -> Move:
        self.prompt = prompt
        self.name, self.brief, self.heard = prompt.seat.name, prompt.brief, prompt.transcript
        self.error = ""
        self._waiting = asyncio.get_running_loop().create_future()
        self.bump()
        try:
            return await self._waiting
        finally:
            self.prompt, self._waiting = None, None
            self.bump()

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

    def stop(self) -> None:
        """The server is closing: a wait still open ends the episode as Ctrl-C does."""
        if self._waiting is not None and not self._waiting.done():
            self._waiting.set_exception(KeyboardInterrupt())
