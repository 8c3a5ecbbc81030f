"""Protocol parameters that set up the LLM agents, shared by the mediated protocols.

They are ordinary protocol parameters, so each becomes a `disputelab run` option
(`--context`, `--parties-temperature`, ...) and a key of a spec's `params:`, is stored
with a run's configuration, and can be set by a preset. `agent_settings` turns a
protocol's parameters into the `AgentSettings` its agents are built with. Every default
is what disputelab did before the setting existed, except `disclosure`: rule parties now
keep their acceptable sets private by default (`full` is the old behaviour).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Annotated, Any, TypeVar

from pydantic import BeforeValidator, Field

from disputelab.agents.settings import (
    PARTY_TEMPERATURE,
    RECENT_TURNS,
    AgentSettings,
    CultureStatement,
    Disclosure,
    PartyStyle,
)
from disputelab.protocols.base import ProtocolParams
from disputelab.scenario.behaviour import Behaviour, BehaviourError, check_overrides

MAX_TEMPERATURE = 2.0


def checked_behaviour(v: Any) -> Any:
    """A `behaviour` parameter's value, checked: known names, numbers in range. Every
    protocol whose rule agents read the behaviour table declares its `behaviour` field
    as `BehaviourOverrides`, which runs this check and is what lets worlds, ablation
    and sensitivity reach them."""
    if not isinstance(v, dict):
        raise ValueError("behaviour takes a mapping of parameter name to number")
    try:
        return check_overrides(v)
    except BehaviourError as exc:
        raise ValueError(str(exc)) from None


# The type of a protocol's `behaviour` parameter, checked as it is read.
BehaviourOverrides = Annotated[dict[str, float], BeforeValidator(checked_behaviour)]


class AgentParams(ProtocolParams):
    """What every mediated protocol lets a user set about its LLM agents."""

    context: int = Field(
        default=RECENT_TURNS,
        ge=0,
        le=100_000,
        description=f"Dialogue turns each LLM agent reads, most recent last; 0 reads the "
        f"whole dialogue (default {RECENT_TURNS}).",
    )
    parties_temperature: float = Field(
        default=PARTY_TEMPERATURE,
        ge=0.0,
        le=MAX_TEMPERATURE,
        description="Sampling temperature of the LLM parties.",
    )
    mediator_temperature: float | None = Field(
        default=None,
        ge=0.0,
        le=MAX_TEMPERATURE,
        description="Sampling temperature of every LLM mediator call (default: each "
        "mediator's own, 0.6 to speak and 0 to rate or lead a staged session).",
    )
    party_style: PartyStyle = Field(
        default="persona",
        description="persona (strategy, reactivity, culture in a party's brief) or general "
        "(none of them; rule parties concede on the neutral linear curve).",
    )
    party_memory: bool = Field(
        default=False,
        description="Feed each LLM party its own earlier private thoughts.",
    )
    culture_statement: CultureStatement = Field(
        default="scores",
        description="A party's culture as six Hofstede scores, or described: the culture "
        "named and each dimension explained.",
    )
    disclosure: Disclosure = Field(
        default="negotiator",
        description="What a rule party says in the open: negotiator (the option it backs "
        "and the concessions it has made; its acceptable set stays private) or full (its "
        "whole acceptable set every turn, as rule parties did before they negotiated; kept "
        "for comparison).",
    )
    behaviour: BehaviourOverrides = Field(
        default_factory=dict,
        description="Rule-policy behaviour parameters set away from their defaults, by name "
        "(`disputelab conditions parameters`; `run --behaviour NAME=VALUE`).",
    )


# Parameter names that differ from the settings' field names.
_RENAMED = {"context": "context_turns"}


def agent_settings(
    params: ProtocolParams | None, fallbacks: Mapping[str, float | None] | None = None
) -> AgentSettings:
    """The agent settings a protocol's parameters set; defaults for any other protocol.
    `fallbacks` (a model profile's temperature per role, say `parties_temperature`) fill
    a parameter the run left unset; a value set explicitly, or by a preset, wins."""
    if params is None:
        return AgentSettings()
    wanted = {f.name for f in fields(AgentSettings)}
    values: dict[str, Any] = {}
    for name in type(params).model_fields:
        key = _RENAMED.get(name, name)
        if key not in wanted:
            continue
        if key == "behaviour":
            values[key] = Behaviour.of(getattr(params, name))
            continue
        fallback = (fallbacks or {}).get(name)
        unset = name not in params.model_fields_set
        values[key] = fallback if unset and fallback is not None else getattr(params, name)
    return AgentSettings(**values)


P = TypeVar("P", bound=ProtocolParams)
_TEMPERATURE = "_temperature"


def temperature_params(params_type: type[ProtocolParams]) -> dict[str, str]:
    """Parameter -> the role whose sampling temperature it sets (`parties_temperature` ->
    `parties`): the parameters a model profile's `temperature` may fill."""
    return {
        name: name.removesuffix(_TEMPERATURE)
        for name in params_type.model_fields
        if name.endswith(_TEMPERATURE)
    }


def with_fallbacks(params: P, fallbacks: Mapping[str, float | None]) -> P:
    """`params` with every parameter it left unset that `fallbacks` gives a value set to
    that value, as if given: a run's stored configuration then records what was sent,
    and `agent_settings` reads it like any explicit value."""
    unset = set(type(params).model_fields) - params.model_fields_set
    update = {k: v for k, v in fallbacks.items() if k in unset and v is not None}
    return params.model_copy(update=update) if update else params
