"""A run's protocol and its parameters, under a paper's preset: the preset's protocol and
values, each parameter given explicitly in their place, validated by the protocol's own
model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from disputelab.errors import Problem
from disputelab.protocols.base import (
    DEFAULT_PROTOCOL,
    PROTOCOLS,
    DisputeProtocol,
    ParamsError,
    ProtocolParams,
)
from disputelab.protocols.presets import PRESETS, get_preset, with_preset


def chosen_protocol(protocol: str | None, preset: str | None) -> DisputeProtocol | None:
    """The protocol a run plays: the one named, else the preset's, else the default;
    None where the name or the preset is unknown (`protocol_and_params` says why)."""
    if protocol is None and preset is not None:
        protocol = get_preset(preset).protocol if preset in PRESETS else None
        if protocol is None:
            return None
    name = protocol or DEFAULT_PROTOCOL
    return PROTOCOLS.get(name) if name in PROTOCOLS else None


def with_budget(
    proto: DisputeProtocol, params: Mapping[str, Any], budget: int | None
) -> tuple[dict[str, Any], list[Problem]]:
    """`params` with `budget` as the protocol's turn-budget parameter (`rounds` for the
    staged protocol, `round_limit` for the settlement, ...)."""
    values = dict(params)
    if budget is None:
        return values, []
    if not proto.turn_budget:
        return values, [Problem(f"budget: the {proto.name} protocol has no turn budget")]
    if values.get(proto.turn_budget) is not None and proto.turn_budget != "budget":
        return values, [
            Problem(f"budget and params.{proto.turn_budget} name the same limit; keep one")
        ]
    values[proto.turn_budget] = budget
    return values, []


def protocol_and_params(
    protocol: str | None,
    preset: str | None,
    params: Mapping[str, Any],
    budget: int | None = None,
) -> tuple[DisputeProtocol | None, ProtocolParams | None, list[Problem]]:
    """The protocol and its validated parameters (None where they cannot be had), and
    every problem found on the way; `budget` sets the protocol's turn budget."""
    values = {k: v for k, v in params.items() if v is not None}
    name = protocol or DEFAULT_PROTOCOL
    if preset is not None:
        if preset not in PRESETS:
            known = ", ".join(PRESETS.names())
            return None, None, [Problem(f"unknown preset {preset!r}; available: {known}")]
        try:
            name, values = with_preset(get_preset(preset), protocol, values)
        except ValueError as exc:
            return None, None, [Problem(str(exc))]
    if name not in PROTOCOLS:
        known = ", ".join(PROTOCOLS.names())
        return None, None, [Problem(f"unknown protocol {name!r}; available: {known}")]
    proto = PROTOCOLS.get(name)
    values, found = with_budget(proto, values, budget)
    if found:
        return proto, None, found
    try:
        return proto, proto.params(values), []
    except ParamsError as exc:
        return proto, None, [Problem(_placed(p)) for p in exc.problems]


def _placed(problem: str) -> str:
    """A parameter's problem under the plan's name for it (`params.budget: ...`); one
    about the parameters together (`params: ...`) stays as it is."""
    where, sep, _ = problem.partition(": ")
    return problem if where == "params" or not sep else f"params.{problem}"
