"""Annotate a stored run in the browser: `new_annotation(run, annotators=N)` makes one
invite per annotator over the run's finished episodes, and `serve_annotation` serves
them (Starlette, by uvicorn) until every annotator has labelled every turn, or Ctrl-C.
Labels go to `STORE/annotations.sqlite` as they are sent.

    from disputelab.api.annotate import new_annotation, serve_annotation
    session, tokens = new_annotation("last", annotators=2)
    serve_annotation(session, tokens, on_ready=print)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from disputelab.annotation.store import Label, delete_participant, read_labels
from disputelab.annotation.web import (
    DEFAULT_CONSENT,
    RUBRIC,
    Annotation,
    Transcript,
    annotation_app,
)
from disputelab.errors import DisputelabError
from disputelab.scenario.schema import Scenario
from disputelab.web.seats import Invite
from disputelab.web.serving import invite_links, serve_until

__all__ = [
    "DEFAULT_CONSENT",
    "RUBRIC",
    "Annotation",
    "AnnotationError",
    "Label",
    "annotation_app",
    "delete_participant",
    "new_annotation",
    "read_labels",
    "serve_annotation",
    "transcripts",
]


class AnnotationError(DisputelabError, ValueError):
    """A run that cannot be annotated (no finished episodes, no topics to label)."""


def transcripts(store: Any, run_id: str) -> tuple[Transcript, ...]:
    """The finished episodes of `run_id` in `store`, as the annotation app shows them."""
    found = []
    for eid in store.episode_ids(run_id):
        record = store.load_episode(eid)
        if not record.complete or not record.episode.turns:
            continue
        scenario = Scenario.model_validate(record.scenario)
        if not scenario.topics:
            raise AnnotationError(f"{eid}: its scenario has no topics to label")
        mediated = record.arm != "unmediated" and any(
            t.role == "mediator" for t in record.episode.turns
        )
        found.append(Transcript(eid, scenario, tuple(record.episode.turns), mediated))
    if not found:
        raise AnnotationError(f"run {run_id} has no finished episodes to annotate")
    return tuple(found)


def new_annotation(
    run: str,
    *,
    annotators: int,
    store: Any = None,
    expires: float = 120.0,
    consent: str = DEFAULT_CONSENT,
) -> tuple[Annotation, dict[str, str]]:
    """The annotation of `run` (an id, a unique prefix, a label or `last`) and each
    annotator's token (annotator key -> token, shown only here). StoreError for no such
    run, AnnotationError for one with nothing to label."""
    from disputelab.api import open_store
    from disputelab.api.play import new_participant

    if annotators < 1:
        raise AnnotationError("annotators: give one or more")
    opened = open_store(store)
    run_id = opened.resolve_run(run)
    shown = transcripts(opened, run_id)
    invites: dict[str, Invite] = {}
    tokens: dict[str, str] = {}
    for n in range(1, annotators + 1):
        key = f"annotator-{n}"
        invites[key], tokens[key] = Invite.new(key, new_participant(), expires)
    return Annotation(Path(opened.root), run_id, shown, invites, consent), tokens


def serve_annotation(
    session: Annotation,
    tokens: Mapping[str, str],
    *,
    bind: str = "127.0.0.1",
    port: int = 8766,
    on_ready: Callable[[dict[str, str]], None] | None = None,
) -> Annotation:
    """Serve `session` until every annotator is done (or Ctrl-C); `on_ready` hears each
    annotator's invite link once the server listens."""
    serve_until(
        annotation_app(session),
        bind=bind,
        port=port,
        links=invite_links(bind, port, "a", tokens),
        finished=session.all_done,
        poll_s=1.0,
        on_ready=on_ready,
    )
    return session
