"""`disputelab annotate RUN`: serve a stored run's transcripts to people who label them,
one invite link per annotator; the labels go to `STORE/annotations.sqlite` as they are
sent. The serving is `disputelab.api.annotate`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from disputelab.cli.common import fail, open_store, out
from disputelab.errors import DisputelabError


def annotate_command(
    run: Annotated[str, typer.Argument(help="Run id, unique prefix, label or last.")],
    annotators: Annotated[
        int, typer.Option(min=1, max=100, help="How many people label the run.")
    ] = 2,
    bind: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8766,
    expires: Annotated[float, typer.Option(help="Minutes an invite link stays valid.")] = 24 * 60,
    consent: Annotated[Path | None, typer.Option(help="Consent text file.")] = None,
) -> None:
    """Serve a run's transcripts to annotators; one invite link per annotator.

    Stops when every one has labelled every turn (or on Ctrl-C: what was sent is kept)."""
    from disputelab.api.annotate import DEFAULT_CONSENT, new_annotation, serve_annotation

    if not 0 < expires <= 7 * 24 * 60:
        fail("--expires: give minutes, more than 0 and at most a week")
    if not 0 < port < 65536:
        fail("--port: give a port from 1 to 65535")
    try:
        text = consent.read_text(encoding="utf-8") if consent else DEFAULT_CONSENT
        session, tokens = new_annotation(
            run, annotators=annotators, store=open_store(), expires=expires, consent=text
        )
    except (DisputelabError, OSError, ValueError) as exc:
        fail(str(exc).splitlines()[0])
    turns = sum(len(t.turns) for t in session.transcripts)
    out.print(
        f"run {session.run_id}: {len(session.transcripts)} episodes, {turns} turns to label",
        highlight=False,
    )

    def ready(links: dict[str, str]) -> None:
        for key, link in links.items():
            who = session.invites[key].participant
            out.print(f"{key} ({who}): {link}", highlight=False, soft_wrap=True)

    serve_annotation(session, tokens, bind=bind, port=port, on_ready=ready)
    done = sum(session.done(i) for i in session.invites.values())
    out.print(f"{done} of {annotators} annotators done; labels kept in the store", highlight=False)
