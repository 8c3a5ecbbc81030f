"""The moderator ends a session and reads off the deal; the detector flags violations.

The rule moderator reads the parties' structured signals: an acceptance ends the session
with a deal at the accepted price, a walk-out ends it without one. The lexicon detector
flags an utterance in which our phrase banks hear at least a mild violation; it stands in
for the LLM detector offline, where dialogues carry no labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol, runtime_checkable

from disputelab.agents.base import Agent, PublicTurn, TurnContext, UsageReporter
from disputelab.episode import Action, Signal
from disputelab.protocols.bilateral.agents.market import Market, last_amount
from disputelab.protocols.bilateral.agents.norms import read_tone
from disputelab.scenario.schema import Scenario

# Offence at which the lexicon detector flags a turn: a mild phrase of the least severe
# category (0.5 x 0.5) passes it, a curt one (0.2 x severity) does not.
DETECTION_THRESHOLD = 0.25


class Call(NamedTuple):
    """A moderator's reading after one utterance."""

    ended: bool
    deal: bool = False
    price: float | None = None
    reason: str = ""


@runtime_checkable
class Moderator(Agent, Protocol):
    async def judge(self, dialogue: Sequence[PublicTurn], last: Action, ctx: TurnContext) -> Call:
        """Has the session ended after `last` (the newest turn of `dialogue`), and with
        what deal?"""
        ...


@runtime_checkable
class Detector(Agent, Protocol):
    async def detect(
        self, dialogue: Sequence[PublicTurn], text: str, ctx: TurnContext
    ) -> str | None:
        """The violated norm category of `text`, or None when it breaks none."""
        ...


class RuleModerator(UsageReporter):
    def __init__(self, scenario: Scenario) -> None:
        self.market = Market.of(scenario)

    async def judge(self, dialogue: Sequence[PublicTurn], last: Action, ctx: TurnContext) -> Call:
        if last.signal is Signal.WALK_AWAY:
            return Call(True, False, None, "a party walked out")
        if last.signal is Signal.CONSENSUS:
            price = last.offer.get(self.market.term_id, last_amount(last.utterance))
            return Call(True, price is not None, price, "a party accepted the other's price")
        return Call(False)


class LexiconDetector(UsageReporter):
    async def detect(
        self, dialogue: Sequence[PublicTurn], text: str, ctx: TurnContext
    ) -> str | None:
        tone = read_tone(text)
        return tone.worst if tone.total_offence >= DETECTION_THRESHOLD else None
