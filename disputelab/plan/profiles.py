"""Temperatures a plan leaves unset, taken from the model profiles of `disputelab.toml`:
the plan then records the temperature each role is actually sent."""

from __future__ import annotations

from collections.abc import Mapping

from disputelab.llm.models import ModelConfigError, Profile
from disputelab.plan.cast import Cast
from disputelab.protocols.agent_params import temperature_params, with_fallbacks
from disputelab.protocols.base import PROTOCOLS, ProtocolParams


def profile_temperatures(
    params: ProtocolParams, cast: Cast, profiles: Mapping[str, Profile]
) -> ProtocolParams:
    """`params` with each role's temperature that the run left unset taken from the
    profile of the role's model, where that profile sets one (a value given explicitly,
    or by a preset, wins). The result records it as set, so the run's stored config holds
    the temperature actually sent and a resume can compare it."""
    fills: dict[str, float | None] = {}
    for name, role in temperature_params(type(params)).items():
        profile = profiles.get(cast.model(role))
        if profile is not None:
            _check_temperature_roles(cast.model(role), profile)
            fills[name] = profile.temperature_for(role)
    return with_fallbacks(params, fills)


def _check_temperature_roles(name: str, profile: Profile) -> None:
    """A per-role temperature must name a role that has a temperature setting."""
    if not isinstance(profile.temperature, dict):
        return
    roles = {r for _, p in PROTOCOLS.items() for r in temperature_params(p.Params).values()}
    for role in profile.temperature:
        if role not in roles:
            raise ModelConfigError(
                f"profile {name!r}: temperature.{role}: no role of that name has a "
                f"temperature; use {', '.join(sorted(roles))}"
            )
