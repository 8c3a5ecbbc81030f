"""Host a table in the browser: `host(scenario, seats=[...])` serves one page per seat
a person takes (Starlette, served by uvicorn) and plays the episode with `play_async` in
the server's own event loop, every turn committed as it is played.

    from disputelab.api.host import host
    host("tenancy", seats=["parties:tenant", "parties:landlord"], mediator="rule")
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from disputelab.humans.source import MoveSource
from disputelab.scenario.schema import Scenario
from disputelab.web.app import DEFAULT_CONSENT, Ended, Table, table_app
from disputelab.web.people import DEFAULT_ITEMS, Item, read_items
from disputelab.web.seats import Invite
from disputelab.web.serving import invite_links, serve_until

__all__ = [
    "DEFAULT_CONSENT",
    "DEFAULT_ITEMS",
    "Ended",
    "Table",
    "host",
    "new_table",
    "read_items",
    "table_app",
]


def new_table(
    scenario: str | os.PathLike[str] | Scenario,
    *,
    seats: Sequence[str],
    store: Any = None,
    expires: float = 120.0,
    consent: str = DEFAULT_CONSENT,
    items: tuple[Item, ...] = DEFAULT_ITEMS,
    turn_seconds: float = 0.0,
    **options: Any,
) -> tuple[Table, dict[str, str]]:
    """The table and each seat's token (seat key -> token, shown only here). With
    `turn_seconds`, a person's move not made in that time is their seat's default move."""
    from disputelab.api import open_store
    from disputelab.api.play import PlayError, new_participant, plan_play, play_async

    if not seats:
        raise PlayError("seats: name the seats people take (parties:ID, mediator, ...)")
    root = Path(open_store(store).root)  # the episode opens it again in the server's thread
    who = {s: new_participant() for s in seats}
    plan_play(scenario, seat=list(seats), participants=who, store=root, **options)  # fail now
    invites: dict[str, Invite] = {}
    tokens: dict[str, str] = {}
    for seat in seats:
        invites[seat], tokens[seat] = Invite.new(seat, who[seat], expires)

    async def episode(sources: Mapping[str, MoveSource]) -> Ended:
        result = await play_async(
            scenario, seat=list(seats), source=sources, store=root, participants=who, **options
        )
        outcome = result.episode.outcome
        return Ended(result.run_id, result.episode_id, outcome.stop_reason if outcome else "")

    if turn_seconds < 0:
        raise PlayError("turn_seconds: give seconds, more than 0 (or 0 for no deadline)")
    return Table(episode, root, invites, consent, items, turn_seconds), tokens


def host(
    table: Table,
    tokens: Mapping[str, str],
    *,
    bind: str = "127.0.0.1",
    port: int = 8765,
    on_ready: Callable[[dict[str, str]], None] | None = None,
) -> Table:
    """Serve `table` until every person has answered the questionnaire (or Ctrl-C);
    `on_ready` hears each seat's invite link once the server listens."""
    serve_until(
        table_app(table),
        bind=bind,
        port=port,
        links=invite_links(bind, port, "s", tokens),
        finished=table.finished,
        poll_s=0.2,
        on_ready=on_ready,
    )
    return table
