"""Where a person's moves come from: the `MoveSource` protocol, and the log that lets an
interrupted episode be replayed up to the turn it stopped at.

A front end implements `MoveSource`: given a `SeatPrompt`, it shows it to the person and
returns their answer as a `Move` (validated with `moves.validate`, asking again on a
`MoveError`). The terminal's is `terminal.TerminalMoves`; a web page's would wait for its
form. Whatever a source returns is validated again by the seat before it is played.

A source that `Listens` is also told, after every turn, the dialogue as delivered to its
seat so far (with the seat and its brief), so that a waiting person sees the others
speak; one without `hear` sees the dialogue only when it is asked to move.

`LoggedMoves` wraps a live source: it writes every move to a log file as it is made
(atomically, one JSON document), and, given the log of an earlier attempt at the same
episode, answers from it first. Agents that are seeded (rule agents) or whose replies
are cached (LLM agents under the response cache) then make the same moves again, so the
episode is played again up to where it stopped and the person goes on from there.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from disputelab import atomic
from disputelab.humans.moves import validate
from disputelab.humans.prompt import Line, Move, SeatPrompt, SeatRef


class Withdrawn(Exception):
    """A person left the study: raised from a move source, it stops the episode where
    it is, recorded as withdrawn (naming the participant), its finished turns kept."""

    def __init__(self, participant: str) -> None:
        super().__init__(f"participant {participant} withdrew")
        self.participant = participant


@runtime_checkable
class MoveSource(Protocol):
    """What a person's moves come from (the terminal, a web page)."""

    async def move(self, prompt: SeatPrompt) -> Move:
        """The person's answer to `prompt`: ask until it validates, then return it."""
        ...


@runtime_checkable
class Listens(Protocol):
    """A source that shows its seat's dialogue as it happens, not only when asked."""

    def hear(self, seat: SeatRef, brief: str, transcript: tuple[Line, ...]) -> None:
        """The dialogue as delivered to `seat` so far; only what that seat may see."""
        ...


@dataclass(frozen=True)
class Logged:
    """One move as the log keeps it: the prompt it answered (`SeatPrompt.key`) and the
    values chosen."""

    prompt: str
    values: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "values": self.values}


def read_log(path: Path) -> list[Logged]:
    """The moves logged at `path` (none when there is no file yet); ValueError for a
    file that is not a move log."""
    if not path.exists():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    moves = data.get("moves") if isinstance(data, dict) else None
    if not isinstance(moves, list):
        raise ValueError(f"{path} is not a move log")
    return [Logged(str(m["prompt"]), dict(m["values"])) for m in moves]


@dataclass
class LoggedMoves:
    """A live source whose moves are logged at `path`, answering first from `replay`
    (the moves of an earlier attempt) while each still answers the prompt it was made
    for. Where one does not (the table went otherwise), the rest of the replay is
    dropped and the live source takes over; `diverged` says so."""

    live: MoveSource
    path: Path
    replay: list[Logged] = field(default_factory=list)
    made: list[Logged] = field(default_factory=list)
    replayed: int = 0
    diverged: bool = False

    async def move(self, prompt: SeatPrompt) -> Move:
        move = self._from_replay(prompt)
        if move is None:
            move = validate(prompt, (await self.live.move(prompt)).values)
        self.made.append(Logged(prompt.key, move.to_dict()))
        self._write(self.made)
        return move

    def hear(self, seat: SeatRef, brief: str, transcript: tuple[Line, ...]) -> None:
        if isinstance(self.live, Listens):
            self.live.hear(seat, brief, transcript)

    def _from_replay(self, prompt: SeatPrompt) -> Move | None:
        if not self.replay:
            return None
        head = self.replay[0]
        if head.prompt != prompt.key:
            self.replay.clear()
            self.diverged = True
            return None
        self.replay.pop(0)
        self.replayed += 1
        return validate(prompt, head.values)

    def _write(self, moves: Sequence[Logged]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"moves": [m.to_dict() for m in moves]}, ensure_ascii=False)
        atomic.write_text(self.path, text)
