"""The annotation app (Starlette): one invite link per annotator, each showing a stored
run's transcripts turn by turn to label, and the mediator's rubric per episode.

It reuses the hosted table's pieces: `web.seats.Invite` (hashed token, expiry, one
browser per link), `web.app.admit` (the 403/410/409 refusals) and `web.app.page` with
its templates (consent, the Likert questions). Every post is saved to the label store
before the page moves on, so closing the server loses nothing submitted.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from jinja2 import ChoiceLoader, Environment, FileSystemLoader
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from disputelab.annotation.store import (
    EPISODE_WIDE,
    NO_STANCE,
    Label,
    read_labels,
    save_labels,
)
from disputelab.episode import Turn
from disputelab.scenario.schema import Scenario
from disputelab.web.app import admit, first_page, page
from disputelab.web.people import SCALE, SCALE_WORDS, Item, QuestionnaireError, read_answers
from disputelab.web.seats import Invite

__all__ = [
    "CONSENSUS_WORDS",
    "DEFAULT_CONSENT",
    "RUBRIC",
    "Annotation",
    "Transcript",
    "annotation_app",
]

DEFAULT_CONSENT = (
    "You are asked to read stored transcripts of simulated disputes and, after each "
    "turn, say where you think each party stands and how close they are. Your labels are "
    "kept under a random annotator id, never your name, and can be withdrawn. You may "
    "stop at any time: what you have sent is kept."
)
# Our own wording of what a mediator is rated on, 1 (strongly disagree) .. 5.
RUBRIC = (
    Item("even_handed", "The mediator treated the parties even-handedly."),
    Item("understood", "The mediator showed it understood what each party wanted."),
    Item("moved_forward", "The mediator's turns moved the talks forward."),
    Item("clear", "The mediator's proposals were clear."),
)
CONSENSUS_WORDS = {1: "far apart", 2: "apart", 3: "some common ground", 4: "close", 5: "agreed"}
LINK = "labelling link"  # what an annotator's link is, in the refusals
_TEMPLATES = Environment(
    loader=ChoiceLoader(
        [
            FileSystemLoader(Path(__file__).parent / "templates"),
            FileSystemLoader(Path(__file__).parents[1] / "web" / "templates"),
        ]
    ),
    autoescape=True,
)


@dataclass(frozen=True)
class Transcript:
    """One stored episode to label: its id, its scenario and its turns."""

    episode_id: str
    scenario: Scenario
    turns: tuple[Turn, ...]
    mediated: bool = True  # whether there is a mediator to rate

    def speaker(self, turn: Turn) -> str:
        names = {p.id: p.name for p in self.scenario.parties}
        return names.get(turn.speaker, turn.speaker.capitalize())


@dataclass
class Annotation:
    """Everything the app serves: the run's transcripts and one invite per annotator
    (its `participant` the annotator's pseudonymous id)."""

    store: Path
    run_id: str
    transcripts: tuple[Transcript, ...]
    invites: dict[str, Invite]
    consent: str = DEFAULT_CONSENT
    items: tuple[Item, ...] = RUBRIC

    def find(self, token: str) -> Invite | None:
        return next((i for i in self.invites.values() if i.opens_with(token)), None)

    def mine(self, invite: Invite) -> list[Label]:
        return [
            x for x in read_labels(self.store, self.run_id) if x.annotator == invite.participant
        ]

    def done(self, invite: Invite) -> bool:
        """Whether the annotator has labelled every turn and rated every episode."""
        have = {(x.episode, x.turn, x.kind) for x in self.mine(invite)}
        return all(
            (t.episode_id, turn.index, "norm") in have for t in self.transcripts for turn in t.turns
        ) and all(
            (t.episode_id, EPISODE_WIDE, "rubric") in have for t in self.transcripts if t.mediated
        )

    def all_done(self) -> bool:
        return all(self.done(i) for i in self.invites.values())


def _render(name: str, **values: object) -> str:
    return _TEMPLATES.get_template(name).render(**values)


Handler = Callable[[Request, Annotation, Invite], Awaitable[Response]]


def _admitted(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """`handler` for a consented annotator whose link opens in its bound browser."""

    async def route(request: Request) -> Response:
        session: Annotation = request.app.state.annotation
        invite = admit(session, request, LINK)
        if isinstance(invite, Response):
            return invite
        if not invite.consented:
            return RedirectResponse(f"/a/{request.path_params['token']}", status_code=303)
        return await handler(request, session, invite)

    return route


async def index(request: Request) -> Response:
    """The annotator's start: the consent first, then each episode with its progress."""
    session: Annotation = request.app.state.annotation
    base = f"/a/{request.path_params['token']}"

    def respond(invite: Invite) -> Response:
        if invite.consented:
            return _episodes_page(session, invite, base)
        body = _render("consent.html", consent=session.consent, action=f"{base}/consent")
        return page("Before you start labelling", body)

    return first_page(session, request, respond, LINK)


def _episodes_page(session: Annotation, invite: Invite, base: str) -> Response:
    mine = session.mine(invite)
    rows = []
    for n, t in enumerate(session.transcripts):
        labelled = {x.turn for x in mine if x.episode == t.episode_id and x.kind == "norm"}
        rated = any(x.episode == t.episode_id and x.kind == "rubric" for x in mine)
        rows.append((n, t, len(labelled), rated))
    body = _render("episodes.html", rows=rows, base=base, done=session.done(invite))
    return page(f"Label run {session.run_id}", body)


async def consent(request: Request) -> Response:
    session: Annotation = request.app.state.annotation
    invite = admit(session, request, LINK)
    if isinstance(invite, Response):
        return invite
    invite.consented = True
    return RedirectResponse(f"/a/{request.path_params['token']}", status_code=303)


def _place(session: Annotation, request: Request) -> tuple[Transcript, int] | None:
    """The transcript and turn position a URL names; None when it names none."""
    try:
        n, i = int(request.path_params["episode"]), int(request.path_params.get("turn", 0))
    except ValueError:
        return None
    if not 0 <= n < len(session.transcripts):
        return None
    transcript = session.transcripts[n]
    return (transcript, i) if 0 <= i < max(1, len(transcript.turns)) else None


def _read_turn(transcript: Transcript, turn: Turn, form: Mapping[str, str]) -> dict[str, str]:
    """The posted values of one turn's form, by field name; ValueError names a missing one."""
    values = {"norm": "1" if form.get("norm") == "1" else "0"}
    if turn.role != "party":
        return values
    sc = transcript.scenario
    for topic in sc.topics:
        options = {o.id for o in topic.options} | {NO_STANCE}
        for party in sc.parties:
            key = f"stance:{party.id}:{topic.id}"
            if form.get(key) not in options:
                raise ValueError(f"say where {party.name} stands on {topic.name}")
            values[key] = form[key]
        key = f"consensus:{topic.id}"
        if form.get(key) not in {str(v) for v in SCALE}:
            raise ValueError(f"say how close the parties are on {topic.name}")
        values[key] = form[key]
    return values


def _labels(
    session: Annotation,
    invite: Invite,
    transcript: Transcript,
    turn: Turn,
    values: Mapping[str, str],
) -> list[Label]:
    out = []
    for key, value in values.items():
        kind, *about = key.split(":")
        party, topic = (about[0], about[1]) if kind == "stance" else ("", about[0] if about else "")
        out.append(
            Label(
                session.run_id,
                transcript.episode_id,
                turn.index,
                invite.participant,
                kind,
                value,
                party=party,
                topic=topic,
            )
        )
    return out


def _known(
    session: Annotation, invite: Invite, transcript: Transcript, turn: Turn
) -> dict[str, str]:
    """What the form shows: the annotator's labels of this turn, else the stances and
    consensus of the latest earlier turn they labelled them on (carried forward, as a
    position mostly holds from turn to turn; the norm flag is not)."""
    mine = [x for x in session.mine(invite) if x.episode == transcript.episode_id]
    shown = [x for x in mine if x.turn == turn.index]
    if not shown:
        earlier = [x for x in mine if x.turn < turn.index and x.kind in ("stance", "consensus")]
        last = max((x.turn for x in earlier), default=None)
        shown = [x for x in earlier if x.turn == last]
    return {":".join(p for p in (x.kind, x.party, x.topic) if p): x.value for x in shown}


@_admitted
async def turn_page(request: Request, session: Annotation, invite: Invite) -> Response:
    place = _place(session, request)
    if place is None or not place[0].turns:
        return page("Not found", "", 404, message="There is no such turn to label.")
    transcript, i = place
    turn = transcript.turns[i]
    values, message = _known(session, invite, transcript, turn), ""
    if request.method == "POST":
        form = {k: str(v) for k, v in (await request.form()).items()}
        try:
            values = _read_turn(transcript, turn, form)
        except ValueError as exc:
            values, message = form, str(exc)
        else:
            save_labels(session.store, _labels(session, invite, transcript, turn, values))
            return RedirectResponse(_after(request, transcript, i), status_code=303)
    body = _render(
        "turn.html",
        transcript=transcript,
        shown=transcript.turns[: i + 1],
        turn=turn,
        values=values,
        words=CONSENSUS_WORDS,
        scale=SCALE,
        no_stance=NO_STANCE,
        back=f"/a/{request.path_params['token']}",
    )
    n = int(request.path_params["episode"]) + 1
    title = f"Episode {n}, turn {i + 1} of {len(transcript.turns)}"
    return page(title, body, 400 if message else 200, message=message)


def _after(request: Request, transcript: Transcript, i: int) -> str:
    """Where a saved turn leads: the next turn, then the rubric (if there is a
    mediator to rate), then the list of episodes."""
    start = f"/a/{request.path_params['token']}"
    here = f"{start}/e/{request.path_params['episode']}"
    if i + 1 < len(transcript.turns):
        return f"{here}/t/{i + 1}"
    return f"{here}/rubric" if transcript.mediated else start


@_admitted
async def rubric(request: Request, session: Annotation, invite: Invite) -> Response:
    place = _place(session, request)
    if place is None or not place[0].mediated:
        return page("Not found", "", 404, message="There is no such mediator to rate.")
    transcript, message = place[0], ""
    if request.method == "POST":
        form = {k: str(v) for k, v in (await request.form()).items()}
        try:
            answers = read_answers(session.items, form)
        except QuestionnaireError as exc:
            message = str(exc)
        else:
            labels = [
                Label(
                    session.run_id,
                    transcript.episode_id,
                    EPISODE_WIDE,
                    invite.participant,
                    "rubric",
                    str(v),
                    item=k,
                )
                for k, v in answers.items()
            ]
            save_labels(session.store, labels)
            return RedirectResponse(f"/a/{request.path_params['token']}", status_code=303)
    body = _render(
        "questions.html",
        items=session.items,
        scale=SCALE,
        words=SCALE_WORDS,
        action=str(request.url.path),
    )
    return page("How did the mediator do?", body, 400 if message else 200, message=message)


def annotation_app(session: Annotation) -> Starlette:
    """The app serving `session`'s annotators."""
    app = Starlette(
        routes=[
            Route("/a/{token}", index),
            Route("/a/{token}/consent", consent, methods=["POST"]),
            Route("/a/{token}/e/{episode}/t/{turn}", turn_page, methods=["GET", "POST"]),
            Route("/a/{token}/e/{episode}/rubric", rubric, methods=["GET", "POST"]),
        ]
    )
    app.state.annotation = session
    return app
