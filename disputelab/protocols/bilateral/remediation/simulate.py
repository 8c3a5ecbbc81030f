"""Play bilateral episodes in memory for selection: every seat built from its kind, the
remediator handed an explicit exemplar list (or none), nothing stored.

Model calls are counted per role so that selection can report what it cost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from disputelab.agents.base import Agent
from disputelab.agents.registry import build_agent, build_parties
from disputelab.episode import Episode
from disputelab.llm.base import ChatModel
from disputelab.protocols.base import get_protocol
from disputelab.protocols.bilateral.agents.exemplars import Exemplar
from disputelab.protocols.bilateral.agents.kinds import BARGAINER, MODERATOR
from disputelab.protocols.bilateral.agents.remediators import LLMRemediator, TemplateRemediator
from disputelab.protocols.bilateral.protocol import Bilateral
from disputelab.protocols.play import play
from disputelab.scenario.schema import Scenario

PROTOCOL = Bilateral.name


@dataclass
class Cast:
    """Who plays: bargainer kind and the models of each role (None: offline)."""

    parties_model: ChatModel | None = None
    remediator_model: ChatModel | None = None
    moderator_model: ChatModel | None = None
    params: dict[str, Any] = field(default_factory=dict)
    calls: Counter[str] = field(default_factory=Counter)

    def count(self, episode: Episode) -> None:
        for role, usage in episode.usage.items():
            self.calls[role] += usage.calls


@dataclass(frozen=True)
class Method:
    """How the remediator picks exemplars in one arm: `none` (no remediator),
    `zero-shot`, `random` or `retrieval` (from `pool`), or `set` (exactly `chosen`)."""

    name: str
    kind: str
    chosen: tuple[Exemplar, ...] = ()
    pool: tuple[Exemplar, ...] = ()
    k: int = 8
    semantic: bool = True


def remediator_for(
    scenario: Scenario, seed: int, method: Method, model: ChatModel | None
) -> Agent | None:
    """The remediator of one arm; None for `none`."""
    if method.kind == "none":
        return None
    agent: TemplateRemediator | LLMRemediator
    if model is None:
        agent = TemplateRemediator(scenario, seed, method.kind)
    else:
        agent = LLMRemediator(scenario, seed, method.kind, model)
    agent.prepare(method.kind, method.pool, method.chosen, method.k, method.semantic)
    return agent


def exactly(exemplars: Sequence[Exemplar], name: str = "set") -> Method:
    """The arm that uses exactly `exemplars` (none given: zero-shot)."""
    if not exemplars:
        return Method("zero-shot", "zero-shot")
    return Method(name, "set", tuple(exemplars), k=len(exemplars))


async def play_once(
    scenario: Scenario,
    seed: int,
    method: Method,
    cast: Cast,
    extra: dict[str, Any] | None = None,
) -> Episode:
    """One episode with the remediator of `method`."""
    parties_kind = "llm" if cast.parties_model is not None else "rule"
    parties = build_parties(scenario, parties_kind, seed, cast.parties_model, BARGAINER)
    moderator_kind = "llm" if cast.moderator_model is not None else "rule"
    seated: dict[str, Agent | None] = {
        "moderator": build_agent(MODERATOR, moderator_kind, scenario, seed, cast.moderator_model),
        "mediator": remediator_for(scenario, seed, method, cast.remediator_model),
        "detector": None,
    }
    proto = get_protocol(PROTOCOL)
    params = proto.params({**cast.params, **(extra or {})})
    agents = {"parties": parties_kind, "mediator": method.name}
    episode = Episode(scenario.id, proto.name, seed, agents)
    done = await play(PROTOCOL, scenario, parties, seated, params, episode)
    cast.count(done)
    return done
