"""How the LLM agents of one episode are set up: the settings a paper fixes and that
disputelab used to hard-code (how much dialogue an agent reads, each role's sampling
temperature, whether parties play a persona, ...).

The defaults are disputelab's behaviour before these became settings, so an episode that
changes none of them sends the same requests as before and replays from the cache. The
papers' values come with the presets (`disputelab presets show NAME`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from disputelab.scenario.behaviour import DEFAULT_BEHAVIOUR, Behaviour

# Turns of dialogue an agent reads by default, most recent last (0 reads all of it).
RECENT_TURNS = 12
PARTY_TEMPERATURE = 0.7

PartyStyle = Literal["persona", "general"]
VerdictCalls = Literal["one", "two"]
CultureStatement = Literal["scores", "described"]
ExpertiseUse = Literal["prompt", "append"]
Disclosure = Literal["negotiator", "full"]


@dataclass(frozen=True)
class AgentSettings:
    """What the agent builders read besides the scenario, seed and model."""

    # Dialogue turns each LLM agent reads, most recent last; 0 = the whole dialogue.
    context_turns: int = RECENT_TURNS
    parties_temperature: float = PARTY_TEMPERATURE
    # None: each mediator keeps its own temperatures (0.6 to speak, 0 to rate, 0 staged).
    mediator_temperature: float | None = None
    # `general`: no strategy, persona or culture in a party's brief; rule parties concede
    # on the neutral (compromising, linear) curve.
    party_style: PartyStyle = "persona"
    # Feed a party's own earlier private thoughts back into its prompts.
    party_memory: bool = False
    # False: an LLM mediator deliberates once every party has spoken since its last turn;
    # True: after every party turn (SoCRATES).
    mediator_every_turn: bool = False
    # The social mediator first asks whether to step in at all (ProMediate Table 12).
    social_when_call: bool = False
    # Give the roundtable mediator the consensus state read off the parties' stated stances.
    mediator_consensus_state: bool = False
    # After each turn an LLM party checks its line and notes its terms (AgentMediation).
    party_reflection: bool = False
    # Closure verdict as one call (decision and satisfaction) or two (each with anchors).
    verdict_calls: VerdictCalls = "one"
    # A party's culture as six numbers, or named and with each dimension explained.
    culture_statement: CultureStatement = "scores"
    # Retrieved legal bases go into the staged mediator's prompt, or are appended to its
    # proposals' bases afterwards (AgentMediation's evaluation of w/ EK).
    expertise_use: ExpertiseUse = "prompt"
    # The rule policy's behavioural parameters (`disputelab conditions parameters`).
    behaviour: Behaviour = DEFAULT_BEHAVIOUR
    # What a rule party states in the open: `negotiator` (the option it backs and the
    # concessions it has made; its acceptable set stays private) or `full` (its whole
    # acceptable set every turn, as before rule parties negotiated; kept for comparison).
    disclosure: Disclosure = "negotiator"

    def window(self) -> int | None:
        """Turns an agent reads, None for all of them."""
        return self.context_turns or None


DEFAULT_SETTINGS = AgentSettings()
