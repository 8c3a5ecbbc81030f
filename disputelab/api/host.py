"""Host a table in the browser: `host(scenario, seats=[...])` serves one page per seat
a person takes (Starlette, served by uvicorn) and plays the episode with `play_async` in
the server's own event loop, every turn committed as it is played.

    from disputelab.api.host import host
    host("tenancy", seats=["parties:tenant", "parties:landlord"], mediator="rule")
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from disputelab.humans.source import MoveSource
from disputelab.scenario.schema import Scenario
from disputelab.web.app import DEFAULT_CONSENT, Ended, Table, table_app
from disputelab.web.people import DEFAULT_ITEMS, Item, read_items
from disputelab.web.seats import Invite

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
    **options: Any,
) -> tuple[Table, dict[str, str]]:
    """The table and each seat's token (seat key -> token, shown only here)."""
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

    return Table(episode, root, invites, consent, items), tokens


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
    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(table_app(table), host=bind, port=port, log_level="warning")
    )

    async def serve() -> None:
        async def watch() -> None:
            while not server.started:
                await asyncio.sleep(0.05)
            shown = "localhost" if bind in ("0.0.0.0", "::") else bind
            if on_ready:
                on_ready({s: f"http://{shown}:{port}/s/{t}" for s, t in tokens.items()})
            while not table.all_answered() and not (table.failed and table.ended is None):
                await asyncio.sleep(0.2)
            server.should_exit = True

        await asyncio.gather(server.serve(), watch())

    asyncio.run(serve())
    return table
