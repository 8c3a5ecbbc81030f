"""The hosted table's Starlette app: one page per invited seat (consent, brief, the
dialogue as the seat heard it, the move's form, then the questionnaire), its event
stream, and the episode, started in the app's own event loop when the app starts."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from disputelab.humans.source import MoveSource
from disputelab.web.people import (
    DEFAULT_ITEMS,
    SCALE,
    SCALE_WORDS,
    Item,
    QuestionnaireError,
    read_answers,
    save_answers,
    save_defaults,
)
from disputelab.web.seats import Invite, WebMoves, default_words

COOKIE = "disputelab_seat"
DEFAULT_CONSENT = (
    "This is a research simulation of a dispute. You take one seat at the table; the "
    "others are software agents or other people. What you write is stored with the "
    "episode under a random participant id, never your name. You may leave the study at "
    "any time with the page's Leave the study link."
)
_TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"), autoescape=True
)


@dataclass(frozen=True)
class Ended:
    run_id: str
    episode_id: str
    stop_reason: str


Episode = Callable[[Mapping[str, MoveSource]], Awaitable[Ended]]


@dataclass
class Table:
    """Everything the app serves: the invites and sources by seat, and the episode."""

    episode: Episode
    store: Path
    invites: dict[str, Invite]
    consent: str = DEFAULT_CONSENT
    items: tuple[Item, ...] = DEFAULT_ITEMS
    turn_seconds: float = 0.0  # a person's time for a move before its default is made; 0: none
    sources: dict[str, WebMoves] = field(default_factory=dict)
    ended: Ended | None = None
    failed: str = ""

    def find(self, token: str) -> Invite | None:
        return next((i for i in self.invites.values() if i.opens_with(token)), None)

    async def play(self) -> None:
        try:
            ended = await self.episode(self.sources)
            self._keep_defaults(ended)
            self.ended = ended
        except KeyboardInterrupt:  # the server closed mid-episode: the turns stay stored
            self.failed = "the host closed the table; the turns so far are stored"
        except Exception as exc:  # shown on every page; the turns stay stored
            self.failed = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        finally:
            for s in self.sources.values():
                s.bump()

    def _keep_defaults(self, ended: Ended) -> None:
        rows = [
            (self.invites[seat].participant, seat, p.turn, p.ask)
            for seat, source in self.sources.items()
            for p in source.defaults
        ]
        if rows:
            save_defaults(self.store, ended.run_id, ended.episode_id, rows)

    def withdraw(self, invite: Invite) -> None:
        """The person at `invite` left the study: the episode stops at its next wait for
        a person (at once where one is waited for), as withdrawn."""
        invite.withdrawn = True
        for source in self.sources.values():
            source.withdraw(invite.participant)

    def all_answered(self) -> bool:
        """The episode is over and everyone who stayed has answered the questions."""
        return self.ended is not None and all(
            i.answered or i.withdrawn for i in self.invites.values()
        )

    def finished(self) -> bool:
        """Nothing more to serve: everyone has answered, or the episode failed to end."""
        return self.all_answered() or bool(self.failed and self.ended is None)


def page(title: str, body: str, status: int = 200, **extra: Any) -> HTMLResponse:
    """The one page every seat and annotator sees, `body` already rendered (escaped)."""
    page = _TEMPLATES.get_template("page.html").render(title=title, body=Markup(body), **extra)
    return HTMLResponse(page, status_code=status)


def _render(name: str, **values: Any) -> str:
    return _TEMPLATES.get_template(name).render(**values)


def _refused(message: str, status: int) -> HTMLResponse:
    return page("Not available", "", status, message=message)


class Finds(Protocol):
    """What holds invites: a table, or a run's annotators."""

    def find(self, token: str) -> Invite | None: ...


def admit(table: Finds, request: Request, what: str = "seat") -> Invite | HTMLResponse:
    """The invite of the request's token, bound to its browser; a refusal otherwise
    (`what` the link opens, in its words)."""
    invite = table.find(str(request.path_params["token"]))
    if invite is None:
        return _refused(f"This link is not a {what} here.", 403)
    if invite.expired():
        return _refused("This link has expired; ask the host for a new one.", 410)
    if not invite.bind(request.cookies.get(COOKIE, "")):
        return _refused(f"This {what} is already open in another browser or tab.", 409)
    return invite


def first_page(
    subject: Finds, request: Request, respond: Callable[[Invite], Response], what: str = "seat"
) -> Response:
    """A link's own page: a browser that comes with no cookie is handed one and bound to
    the invite (the first browser keeps it), then `respond` makes the page."""
    fresh = not request.cookies.get(COOKIE)
    cookie = secrets.token_urlsafe(16)
    if fresh:
        request.cookies[COOKIE] = cookie
    invite = admit(subject, request, what)
    if isinstance(invite, Response):
        return invite
    response = respond(invite)
    if fresh:
        response.set_cookie(COOKIE, cookie, httponly=True, samesite="strict")
    return response


SeatHandler = Callable[[Request, Table, Invite], Awaitable[Response]]


def _seated(handler: SeatHandler) -> Callable[[Request], Awaitable[Response]]:
    """`handler` for an admitted seat only: every route but the seat page itself (which
    first hands a new browser its cookie) is refused the same way by `admit`."""

    async def route(request: Request) -> Response:
        table = table_of(request)
        invite = admit(table, request)
        if isinstance(invite, Response):
            return invite
        return await handler(request, table, invite)

    return route


def table_of(request: Request) -> Table:
    """The table whose invite the request's token opens; the first when none does (its
    refusal then says the link is not a seat here)."""
    tables: list[Table] = request.app.state.tables
    token = str(request.path_params["token"])
    return next((t for t in tables if t.find(token) is not None), tables[0])


async def seat_page(request: Request) -> Response:
    table = table_of(request)
    base = f"/s/{request.path_params['token']}"

    def respond(invite: Invite) -> Response:
        if invite.consented:
            return _seat_view(table, invite, base)
        body = _render("consent.html", consent=table.consent, action=f"{base}/consent")
        return page("Before you take your seat", body)

    return first_page(table, request, respond)


def _seat_view(table: Table, invite: Invite, base: str) -> Response:
    source = table.sources[invite.seat]
    done = table.ended.stop_reason if table.ended else table.failed
    if invite.withdrawn:
        return page("You have left the study", _render("left.html"))
    prompt, default = source.prompt, source.default
    body = _render(
        "seat.html",
        brief=source.brief or "Your brief appears once the episode starts.",
        lines=source.heard,
        prompt=prompt,
        action=f"{base}/move",
        done=done,
        answered=invite.answered,
        questionnaire=f"{base}/questions",
        deadline=_clock(source.deadline),
        seconds=f"{table.turn_seconds:g}",
        default=default_words(prompt, default) if prompt and default else [],
        leave=f"{base}/leave",
    )
    return page(
        f"Your seat: {source.name or invite.seat}",
        body,
        message=source.error,
        events="" if done else f"{base}/events",  # nothing changes on it after the end
        version=source.version,
    )


@_seated
async def consent(request: Request, table: Table, invite: Invite) -> Response:
    invite.consented = True
    table.sources[invite.seat].present.set()  # a turn's clock runs from now
    return RedirectResponse(f"/s/{request.path_params['token']}", status_code=303)


def _clock(at: float) -> str:
    """A deadline as a time of day in UTC, as the page states it ('' for none)."""
    return time.strftime("%H:%M:%S UTC", time.gmtime(at)) if at else ""


@_seated
async def leave(request: Request, table: Table, invite: Invite) -> Response:
    """Leaving the study: a page that asks to confirm, then (posted) the withdrawal."""
    base = f"/s/{request.path_params['token']}"
    if request.method == "POST" and invite.consented and not invite.withdrawn:
        if table.ended is None and not table.failed:
            table.withdraw(invite)
        else:  # the episode is over: leaving skips the questions, nothing else
            invite.withdrawn = True
        return RedirectResponse(base, status_code=303)
    return page("Leave the study?", _render("leave.html", action=f"{base}/leave", back=base))


@_seated
async def post_move(request: Request, table: Table, invite: Invite) -> Response:
    form = await request.form()
    source = table.sources[invite.seat]
    answers: dict[str, object] = {}
    for key in form:
        values = [str(v) for v in form.getlist(key)]
        answers[key] = tuple(values) if len(values) > 1 else values[0]
    if not invite.consented or invite.withdrawn:
        return _refused(
            "Agree to take part first." if not invite.consented else "You have left.", 403
        )
    reason = source.answer(answers)
    if reason and source.prompt is None:
        return _refused(reason, 409)
    return RedirectResponse(f"/s/{request.path_params['token']}", status_code=303)


@_seated
async def events(request: Request, table: Table, invite: Invite) -> Response:
    source = table.sources[invite.seat]

    async def stream() -> AsyncIterator[str]:
        while True:
            yield f"data: {source.version}\n\n"
            if table.ended or table.failed:  # the page reloads to one that streams nothing
                return
            changed = source.changed
            with contextlib.suppress(TimeoutError):  # a keep-alive: the same version again
                await asyncio.wait_for(changed.wait(), timeout=15)
            if await request.is_disconnected():
                return

    return StreamingResponse(stream(), media_type="text/event-stream")


@_seated
async def questions(request: Request, table: Table, invite: Invite) -> Response:
    if table.ended is None or invite.withdrawn:
        return _refused("The questions come once the episode has ended.", 409)
    message = ""
    if request.method == "POST":
        form = {k: str(v) for k, v in (await request.form()).items()}
        try:
            answers = read_answers(table.items, form)
        except QuestionnaireError as exc:
            message = str(exc)
        else:
            ended = table.ended
            save_answers(table.store, ended.run_id, ended.episode_id, invite.participant, answers)
            invite.answered = True
            table.sources[invite.seat].bump()
            return RedirectResponse(f"/s/{request.path_params['token']}", status_code=303)
    action = f"/s/{request.path_params['token']}/questions"
    body = _render(
        "questions.html", items=table.items, scale=SCALE, words=SCALE_WORDS, action=action
    )
    return page("A few questions", body, message=message)


def table_app(table: Table) -> Starlette:
    """The app serving `table`; the episode starts with the app and runs in its loop."""
    return tables_app([table])


def tables_app(tables: Sequence[Table]) -> Starlette:
    """The app serving several tables at once (a study's episodes), each seat's page
    found by its token; every episode starts with the app and runs in its loop."""
    if not tables:
        raise ValueError("tables: serve at least one table")

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        for table in tables:
            table.sources = {seat: WebMoves(seat, table.turn_seconds) for seat in table.invites}
        tasks = [asyncio.create_task(table.play()) for table in tables]
        yield
        for table in tables:
            for s in table.sources.values():
                s.stop()
        await asyncio.gather(*tasks, return_exceptions=True)

    app = Starlette(
        routes=[
            Route("/s/{token}", seat_page),
            Route("/s/{token}/consent", consent, methods=["POST"]),
            Route("/s/{token}/move", post_move, methods=["POST"]),
            Route("/s/{token}/events", events),
            Route("/s/{token}/questions", questions, methods=["GET", "POST"]),
            Route("/s/{token}/leave", leave, methods=["GET", "POST"]),
        ],
        lifespan=lifespan,
    )
    app.state.tables = list(tables)
    return app
