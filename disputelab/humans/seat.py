"""What every human seat shares: it turns the seat's view into a `SeatPrompt`, asks its
`MoveSource`, and validates the answer before the seat plays it.

A human seat is built from what its seat may see and nothing more: the `PublicScenario`
(every party's name and role, no one's preferences), its own brief as text, and, at each
move, the dialogue as the protocol delivered it to this seat. It never holds the
scenario, another party's data, the store or the oracle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext, UsageReporter
from disputelab.humans.moves import validate
from disputelab.humans.prompt import Field, Line, Move, Option, SeatPrompt, SeatRef
from disputelab.humans.source import Listens, MoveSource
from disputelab.scenario.schema import Topic

HUMAN = "human"  # the kind name of a person's seat, in every protocol


class HumanSeat(UsageReporter):
    """A seat filled by a person through a `MoveSource`."""

    def __init__(
        self, seat: SeatRef, brief: str, public: PublicScenario, source: MoveSource
    ) -> None:
        self.seat = seat
        self.brief = brief
        self.public = public
        self.source = source
        self.names: Mapping[str, str] = {p.id: p.name for p in public.parties}

    def lines(self, dialogue: Sequence[PublicTurn]) -> tuple[Line, ...]:
        """The dialogue as this seat received it, named as the seat's prompt shows it."""
        me = self.seat.party_id or self.seat.role
        return tuple(
            Line(t.turn_index, t.speaker, self.speaker_name(t), t.role, t.text, t.speaker == me)
            for t in dialogue
        )

    def hear(self, dialogue: Sequence[PublicTurn]) -> None:
        """The session's word after a turn: the dialogue as this seat has heard it, passed
        on to a source that shows it live (a web page); others wait for the next move."""
        if isinstance(self.source, Listens):
            self.source.hear(self.seat, self.brief, self.lines(dialogue))

    def speaker_name(self, turn: PublicTurn) -> str:
        if turn.role == "mediator":
            return "Mediator"
        return self.names.get(turn.speaker, turn.speaker.replace("-", " ").capitalize())

    async def ask(
        self,
        ask: str,
        dialogue: Sequence[PublicTurn],
        ctx: TurnContext | None,
        fields: Sequence[Field],
    ) -> Move:
        """The person's validated answer to `fields`, asked with the seat's view."""
        prompt = SeatPrompt(
            self.seat,
            ask,
            self.brief,
            self.lines(dialogue),
            tuple(fields),
            ctx.party_turn if ctx is not None else 0,
            ctx.budget if ctx is not None else 0,
        )
        move = await self.source.move(prompt)
        return validate(prompt, move.values)


def topic_options(topic: Topic) -> tuple[Option, ...]:
    return tuple(Option(o.id, o.label) for o in topic.options)


def package_words(public: PublicScenario, package: Mapping[str, str | None]) -> str:
    """A package in words: `Repairs: <label>; Rent: <label>`, topics left open out."""
    parts = []
    for t in public.topics:
        chosen = package.get(t.id)
        if chosen is not None and chosen in t.option_ids():
            parts.append(f"{t.name}: {t.option(chosen).label}")
    return "; ".join(parts)


def public_block(public: PublicScenario) -> list[str]:
    """What everyone at the table knows: the case, its background, who is there and
    the topics with their options."""
    lines = [public.title, "", public.background]
    if public.history:
        lines += ["", public.history]
    if public.case is not None and public.case.brief:
        lines += ["", f"Case ({public.case.dispute_type or 'legal'}): {public.case.brief}"]
    who = ", ".join(f"{p.name} ({p.role})" if p.role else p.name for p in public.parties)
    lines += ["", f"At the table: {who}."]
    if public.topics:
        lines += ["", "Topics:"]
        for t in public.topics:
            lines.append(
                f"- {t.name} ({t.id}): " + "; ".join(f"{o.id}) {o.label}" for o in t.options)
            )
    return lines
