"""A person at a party's seat of a protocol over topics (the roundtable, the staged
protocol): each turn they state a stance per topic (the option they back and any others
they would accept), a signal (go on, agree, walk away) and their words; at the staged
protocol's closure they give a verdict on the final proposal.

The defaults make Enter a sensible move: hold the position stated last (at first, one's
own first choice on every topic), go on talking, and say the position in a sentence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from disputelab.agents.base import PublicScenario, PublicTurn, TurnContext
from disputelab.episode import SATISFACTION, Action, Signal, Stance, Verdict
from disputelab.humans.prompt import Field, Move, Option, PickField, SeatRef, TextField
from disputelab.humans.seat import HumanSeat, package_words, public_block, topic_options
from disputelab.humans.source import MoveSource
from disputelab.scenario.schema import Party

SIGNALS = (
    Option(Signal.CONTINUE.value, "go on negotiating"),
    Option(Signal.CONSENSUS.value, "I agree with what is on the table"),
    Option(Signal.WALK_AWAY.value, "walk away from the talks"),
)
DECISIONS = (
    Option("accept", "accept the proposal"),
    Option("uncertain", "not sure"),
    Option("reject", "reject it"),
)


def party_brief(public: PublicScenario, party: Party) -> str:
    """A party's private brief: the shared case, then what only this party knows (its
    objective, fallback, priorities and rankings, private notes)."""
    lines = public_block(public)
    role = f", {party.role}" if party.role else ""
    lines += ["", f"You are {party.name}{role}. Only you can read what follows."]
    lines.append(f"Your objective: {party.objective}")
    if party.fallback.description:
        lines.append(f"If there is no agreement: {party.fallback.description}")
    if party.weights:
        lines.append(
            "What matters to you (weights): "
            + ", ".join(f"{t}={w}" for t, w in party.weights.items())
        )
    for t in public.topics:
        pref = party.preferences.get(t.id)
        if pref is None:
            continue
        line = f"- {t.name}: you prefer {' > '.join(pref.ranking)}"
        if pref.unacceptable:
            line += f"; unacceptable to you: {', '.join(pref.unacceptable)}"
        lines.append(line)
    if party.private_notes:
        lines.append(f"Notes: {party.private_notes}")
    return "\n".join(lines)


class HumanParty(HumanSeat):
    """A party played by a person (seat interface `party`)."""

    def __init__(
        self, public: PublicScenario, party: Party, source: MoveSource, role: str = "parties"
    ) -> None:
        name = f"{party.name} ({party.role})" if party.role else party.name
        seat = SeatRef(f"{role}:{party.id}", role, name, party.id)
        super().__init__(seat, party_brief(public, party), public, source)
        self.party_id = party.id
        # Where a person starts: their own first choice on every topic.
        self.first = {
            t.id: party.preferences[t.id].ranking[0]
            for t in public.topics
            if t.id in party.preferences and party.preferences[t.id].ranking
        }
        self.stated: dict[str, Stance] = {}

    def stance_fields(self) -> list[PickField]:
        fields = []
        for t in self.public.topics:
            held = self.stated.get(t.id)
            default = (held.option, *held.acceptable) if held and held.option else ()
            default = tuple(dict.fromkeys(default)) or (
                (self.first[t.id],) if t.id in self.first else (t.options[0].id,)
            )
            fields.append(
                PickField(
                    f"stance:{t.id}",
                    t.name,
                    topic_options(t),
                    default,
                    1,
                    len(t.options),
                    help=f"{t.name}: the option you back first, then any others you would accept.",
                )
            )
        return fields

    async def act(self, dialogue: Sequence[PublicTurn], ctx: TurnContext) -> Action:
        fields: list[Field] = [
            *self.stance_fields(),
            PickField("signal", "signal", SIGNALS, (Signal.CONTINUE.value,)),
            TextField(
                "say",
                "say",
                placeholder="state my choices in a sentence",
                help="Your words to the table.",
            ),
        ]
        move = await self.ask("your turn", dialogue, ctx, fields)
        stances = self.stances_of(move)
        self.stated = stances
        signal = Signal(move.pick("signal") or Signal.CONTINUE.value)
        words = move.text("say") or self.sentence(stances, signal)
        return Action(words, stances, signal)

    def stances_of(self, move: Move) -> dict[str, Stance]:
        out = {}
        for t in self.public.topics:
            chosen = move.picks(f"stance:{t.id}")
            if chosen:
                out[t.id] = Stance(chosen[0], chosen)
        return out

    def sentence(self, stances: Mapping[str, Stance], signal: Signal) -> str:
        backed = package_words(self.public, {t: s.option for t, s in stances.items()})
        if signal is Signal.WALK_AWAY:
            return "I am walking away from these talks."
        if signal is Signal.CONSENSUS:
            return f"I can agree to this: {backed}."
        return f"My position: {backed}."

    async def verdict(
        self, dialogue: Sequence[PublicTurn], proposal: Mapping[str, str], ctx: TurnContext
    ) -> Action:
        """Accept, hesitate or reject the final proposal, with one's satisfaction. The
        default is to accept a proposal inside what one said one would accept."""
        inside = all(
            t.id in self.stated and proposal.get(t.id) in self.stated[t.id].acceptable
            for t in self.public.topics
        )
        words = package_words(self.public, proposal) or "(no package)"
        fields: list[Field] = [
            PickField(
                "decision",
                "decision",
                DECISIONS,
                ("accept" if inside else "uncertain",),
                help=f"The final proposal: {words}",
            ),
            PickField(
                "satisfaction",
                "satisfaction",
                tuple(Option(s.replace(" ", "-"), s) for s in SATISFACTION),
                ("high" if inside else "medium",),
            ),
            TextField("reason", "reason", placeholder="no reason given"),
        ]
        move = await self.ask("your verdict on the final proposal", dialogue, ctx, fields)
        decision = move.pick("decision") or "uncertain"
        satisfaction = (move.pick("satisfaction") or "medium").replace("-", " ")
        reason = move.text("reason")
        signal = {"accept": Signal.CONSENSUS, "uncertain": Signal.CONTINUE}.get(
            decision, Signal.WALK_AWAY
        )
        said = {"accept": "I accept the proposal.", "uncertain": "I am not sure about it."}
        words_said = reason or said.get(decision, "I reject the proposal.")
        verdict = Verdict(decision, satisfaction, reason)  # type: ignore[arg-type]
        return Action(words_said, dict(self.stated), signal, verdict=verdict)
