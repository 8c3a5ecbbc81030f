"""Play one episode of a registered protocol in memory, without a store: for tools that
need the outcome only (the curation filter, benchmarks, notebooks)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from disputelab.agents.base import Agent, PartyAgent
from disputelab.episode import Episode
from disputelab.protocols.base import ProtocolParams, get_protocol
from disputelab.protocols.session import Session, TurnSink
from disputelab.scenario.schema import Scenario


async def play(
    protocol: str,
    scenario: Scenario,
    parties: Sequence[PartyAgent],
    seated: Mapping[str, Agent | None] | None = None,
    params: ProtocolParams | Mapping[str, Any] | None = None,
    episode: Episode | None = None,
    on_turn: TurnSink | None = None,
) -> Episode:
    """Play `protocol` with `parties` and the agents `seated` in its other seats."""
    proto = get_protocol(protocol)
    problem = proto.scenario_problem(scenario)
    if problem is not None:
        raise ValueError(problem)
    p = params if isinstance(params, ProtocolParams) else proto.params(params)
    ep = episode or Episode(scenario.id, proto.name, 0, {})
    session = Session(scenario, parties, ep, on_turn, proto.keeps_silent_stances)
    return session.finish(await proto.play(session, dict(seated or {}), p))
