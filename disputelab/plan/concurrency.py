"""How many episodes an experiment keeps in flight, and how many calls each endpoint
takes at once, decided before the run so that the plan can say it.

A run that calls a model spends nearly all its time waiting on the endpoint, and an
episode's calls are sequential, so only many episodes at once keep an endpoint busy. LLM
runs therefore start high; the adaptive per-endpoint limit (`llm.wrappers.Limited`) backs
off on a 429 or a timeout. Rule-only runs are CPU-bound and gain nothing from more.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from disputelab.llm.local import LOCAL_CALLS
from disputelab.llm.models import Profile
from disputelab.llm.openai_defaults import calls_in_flight
from disputelab.llm.providers import provider_of
from disputelab.redact import redact

LLM_CONCURRENCY = 64  # episodes in flight when a spec calling a model sets none
RULE_CONCURRENCY = 4  # episodes in flight for a rule-only spec that sets none


def default_concurrency(models: Iterable[str]) -> int:
    """Episodes in flight for a spec that sets no `concurrency:`."""
    return LLM_CONCURRENCY if any(m != "rule" for m in models) else RULE_CONCURRENCY


@dataclass(frozen=True)
class EndpointLimit:
    """The calls one endpoint takes at once in a run, and where that number comes from."""

    model: str  # redacted
    calls: int
    source: str  # "the run's concurrency", "its profile", "the embedded model"
    adaptive: bool
    provider: str | None = None  # a `provider/model` name's endpoint and key variable

    @property
    def line(self) -> str:
        backs_off = ", backs off on a 429 or timeout" if self.adaptive else ""
        where = f"; {self.provider}" if self.provider else ""
        calls = f"at most {self.calls} calls in flight ({self.source}{backs_off})"
        return f"{self.model}: {calls}{where}"


def endpoint_limit(
    model: str, profiles: Mapping[str, Profile], run_concurrency: int
) -> EndpointLimit:
    """The limit `ModelHub` will put on `model`'s endpoint, read without building it."""
    shown = redact(model)
    if model == "local":
        return EndpointLimit(
            shown, LOCAL_CALLS, "the embedded model runs one call at a time", False
        )
    profile = profiles.get(model)
    if profile is not None and profile.concurrency is not None:
        calls = calls_in_flight(profile.concurrency, run_concurrency)
        return EndpointLimit(shown, calls, "its profile's concurrency", profile.adaptive)
    adaptive = profile.adaptive if profile is not None else True
    provider = provider_of(model) if profile is None else None
    return EndpointLimit(shown, run_concurrency, "the run's concurrency", adaptive, provider)


def endpoint_limits(
    models: Iterable[str], profiles: Mapping[str, Profile], run_concurrency: int
) -> list[EndpointLimit]:
    """Every model endpoint's limit, `rule` left out, in name order."""
    named = sorted({m for m in models if m != "rule"})
    return [endpoint_limit(m, profiles, run_concurrency) for m in named]


def capped_below(limits: Iterable[EndpointLimit], asked: int) -> list[EndpointLimit]:
    """The endpoints that hold a run below the concurrency it asked for."""
    return [lim for lim in limits if lim.calls < asked]
